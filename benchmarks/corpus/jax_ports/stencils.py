"""jax.numpy ports of the corpus stencils (``corpus/stencils.py``): the same arithmetic in the same order, written
as JAX code is written: arrays are values, a write into a slice is ``.at[...].set`` on a new array, and the time
loop is a ``lax.fori_loop`` so that XLA compiles the whole loop once.

Each port takes the kernel's arguments and returns what the eager kernel leaves behind (its result and the
arrays it wrote into), in the order its ``Port`` entry names.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


def ping_pong(sweep, A, B, steps):
    """The two-array time loop of the Jacobi-like stencils: each step sweeps A into B, then B into A."""
    def step(t, AB):
        A, B = AB
        B = sweep(A, B)
        return sweep(B, A), B

    return lax.fori_loop(0, steps, step, (A, B))


@partial(jax.jit, static_argnames="steps")
def jacobi_1d(A, B, steps):
    def sweep(src, dst):
        return dst.at[1:-1].set(0.33333 * (src[:-2] + src[1:-1] + src[2:]))

    return ping_pong(sweep, A, B, steps)


@partial(jax.jit, static_argnames="steps")
def jacobi_2d(A, B, steps):
    def sweep(src, dst):
        return dst.at[1:-1, 1:-1].set(0.2 * (src[1:-1, 1:-1] + src[1:-1, :-2] + src[1:-1, 2:] + src[2:, 1:-1]
                                             + src[:-2, 1:-1]))

    return ping_pong(sweep, A, B, steps)


@partial(jax.jit, static_argnames="steps")
def heat_3d(A, B, steps):
    def sweep(src, dst):
        c = src[1:-1, 1:-1, 1:-1]
        return dst.at[1:-1, 1:-1, 1:-1].set(0.125 * (src[2:, 1:-1, 1:-1] - 2.0 * c + src[:-2, 1:-1, 1:-1])
                                            + 0.125 * (src[1:-1, 2:, 1:-1] - 2.0 * c + src[1:-1, :-2, 1:-1])
                                            + 0.125 * (src[1:-1, 1:-1, 2:] - 2.0 * c + src[1:-1, 1:-1, :-2])
                                            + c)

    return ping_pong(sweep, A, B, steps)


@partial(jax.jit, static_argnames="steps")
def fdtd_2d(ex, ey, hz, source, steps):
    def step(t, fields):
        ex, ey, hz = fields
        ey = ey.at[0, :].set(source[t])
        ey = ey.at[1:, :].set(ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :]))
        ex = ex.at[:, 1:].set(ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1]))
        hz = hz.at[:-1, :-1].set(hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1]))
        return ex, ey, hz

    return lax.fori_loop(0, steps, step, (ex, ey, hz))


@partial(jax.jit, static_argnames="steps")
def wave_1d(u_prev, u, c, steps):
    def step(t, levels):
        u_prev, u = levels
        u_next = jnp.zeros_like(u).at[1:-1].set(2.0 * u[1:-1] - u_prev[1:-1]
                                                 + c * c * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
        return u, u_next

    return lax.fori_loop(0, steps, step, (u_prev, u))


@partial(jax.jit, static_argnames="steps")
def gray_scott(U, V, steps, Du=0.16, Dv=0.08, feed=0.035, kill=0.065):
    def step(t, UV):
        U, V = UV
        u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
        Lu = U[:-2, 1:-1] + U[1:-1, :-2] - 4 * u + U[1:-1, 2:] + U[2:, 1:-1]
        Lv = V[:-2, 1:-1] + V[1:-1, :-2] - 4 * v + V[1:-1, 2:] + V[2:, 1:-1]
        uvv = u * v * v
        U = U.at[1:-1, 1:-1].set(u + (Du * Lu - uvv + feed * (1 - u)))
        V = V.at[1:-1, 1:-1].set(v + (Dv * Lv + uvv - (feed + kill) * v))
        return U, V

    return lax.fori_loop(0, steps, step, (U, V))


@partial(jax.jit, static_argnames="steps")
def heat_neumann(T, alpha, steps):
    def step(t, T):
        T = T.at[1:-1, 1:-1].set(T[1:-1, 1:-1] + alpha * (T[2:, 1:-1] + T[:-2, 1:-1] + T[1:-1, 2:] + T[1:-1, :-2]
                                                          - 4.0 * T[1:-1, 1:-1]))
        T = T.at[0, :].set(T[1, :])
        T = T.at[-1, :].set(T[-2, :])
        T = T.at[:, 0].set(T[:, 1])
        return T.at[:, -1].set(T[:, -2])

    return (lax.fori_loop(0, steps, step, T),)


@partial(jax.jit, static_argnames="steps")
def upwind_advection(q, courant, steps):
    def step(t, q):
        q = q.at[1:].set(q[1:] - courant * (q[1:] - q[:-1]))
        return q.at[0].set(q[-1])

    q = lax.fori_loop(0, steps, step, q)
    return q.sum(), q
