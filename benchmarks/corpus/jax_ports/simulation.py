"""jax.numpy ports of corpus simulations (``corpus/simulation.py``): positions and velocities as values carried
through a ``lax.fori_loop``, masked in-place updates as ``jnp.where``. Each port returns what the eager kernel
leaves behind, in the order its ``Port`` entry names."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="steps")
def nbody(pos, vel, mass, dt, steps, G=1.0, softening=0.1):
    def step(t, state):
        pos, vel = state
        x, y, z = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
        dx, dy, dz = x.T - x, y.T - y, z.T - z
        inv_r3 = (dx ** 2 + dy ** 2 + dz ** 2 + softening ** 2) ** (-1.5)
        acc = G * jnp.hstack(((dx * inv_r3) @ mass, (dy * inv_r3) @ mass, (dz * inv_r3) @ mass))
        vel = vel + acc * dt
        return pos + vel * dt, vel

    pos, vel = lax.fori_loop(0, steps, step, (pos, vel))
    return 0.5 * jnp.sum(mass * vel ** 2), pos, vel


@partial(jax.jit, static_argnames="steps")
def lennard_jones_box(x, y, vx, vy, L, dt, steps):
    n = x.shape[0]
    eye = jnp.eye(n, dtype=x.dtype)

    def wrapped(d):
        d = jnp.where(d > L / 2, d - L, d)
        return jnp.where(d < -L / 2, d + L, d)

    def step(t, state):
        x, y, vx, vy = state
        dx = jnp.tile(x, (n, 1))
        dx = wrapped(dx - dx.T)
        dy = jnp.tile(y, (n, 1))
        dy = wrapped(dy - dy.T)
        r2 = dx * dx + dy * dy + eye
        inv6 = (1.0 / r2) ** 3
        f = 24.0 * (2.0 * inv6 * inv6 - inv6) / r2 * (1.0 - eye)
        vx = vx - (f * dx).sum(axis=1) * dt
        vy = vy - (f * dy).sum(axis=1) * dt
        return (x + vx * dt) % L, (y + vy * dt) % L, vx, vy

    return lax.fori_loop(0, steps, step, (x, y, vx, vy))


@partial(jax.jit, static_argnames="steps")
def particles_in_box(pos, vel, L, dt, steps):
    def step(t, pos):
        pos = pos + vel * dt
        pos = jnp.where(pos >= L, pos - L, pos)
        return jnp.where(pos < 0.0, pos + L, pos)

    pos = lax.fori_loop(0, steps, step, pos)
    return pos.mean(axis=0), pos
