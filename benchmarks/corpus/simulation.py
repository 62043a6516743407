"""Particles, images and learning steps: n-body and molecular-dynamics steps that update positions and velocities
in place (with masked periodic wrapping), convolution and pooling loops that allocate an output and fill it, and
optimizer and normalization steps that write into the arrays kept in lists, dicts and objects.

Each kernel is followed by its input maker ``(n, rng) -> args``.
"""

from __future__ import annotations

import numpy as np


def nbody(pos, vel, mass, dt, steps, G=1.0, softening=0.1):
    """Direct-sum gravity, leapfrog (kick-drift) steps on the caller's position and velocity arrays."""
    for t in range(steps):
        x, y, z = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
        dx, dy, dz = x.T - x, y.T - y, z.T - z
        inv_r3 = (dx ** 2 + dy ** 2 + dz ** 2 + softening ** 2) ** (-1.5)
        acc = G * np.hstack(((dx * inv_r3) @ mass, (dy * inv_r3) @ mass, (dz * inv_r3) @ mass))
        vel += acc * dt
        pos += vel * dt
    kinetic = 0.5 * np.sum(mass * vel ** 2)
    return kinetic


def nbody_inputs(n, rng):
    return rng.standard_normal((n, 3)), rng.standard_normal((n, 3)) * 0.1, rng.random((n, 1)) / n, 0.01, 4


def lennard_jones_box(x, y, vx, vy, L, dt, steps):
    """2-D Lennard-Jones particles in a periodic box: displacement matrices from ``np.tile`` wrapped to the
    nearest image by masked updates."""
    n = x.shape[0]
    for t in range(steps):
        dx = np.tile(x, (n, 1))
        dx = dx - dx.T
        dy = np.tile(y, (n, 1))
        dy = dy - dy.T
        dx[dx > L / 2] -= L
        dx[dx < -L / 2] += L
        dy[dy > L / 2] -= L
        dy[dy < -L / 2] += L
        r2 = dx * dx + dy * dy + np.eye(n)
        inv6 = (1.0 / r2) ** 3
        f = 24.0 * (2.0 * inv6 * inv6 - inv6) / r2 * (1.0 - np.eye(n))
        vx -= (f * dx).sum(axis=1) * dt
        vy -= (f * dy).sum(axis=1) * dt
        x += vx * dt
        y += vy * dt
        x %= L
        y %= L


def lennard_jones_box_inputs(n, rng):
    L = 2.0 * np.sqrt(n)
    side = int(np.ceil(np.sqrt(n)))
    grid = (np.arange(n) % side, np.arange(n) // side)
    x = (grid[0] + 0.5) * L / side + 0.05 * rng.standard_normal(n)
    y = (grid[1] + 0.5) * L / side + 0.05 * rng.standard_normal(n)
    return x % L, y % L, 0.1 * rng.standard_normal(n), 0.1 * rng.standard_normal(n), L, 0.001, 3


def particles_in_box(pos, vel, L, dt, steps):
    """Free flight with periodic wrapping by masked in-place updates."""
    for t in range(steps):
        pos += vel * dt
        pos[pos >= L] -= L
        pos[pos < 0.0] += L
    return pos.mean(axis=0)


def particles_in_box_inputs(n, rng):
    return rng.random((n, 3)) * 10.0, rng.standard_normal((n, 3)), 10.0, 0.5, 6


def conv2d_fill(x, w, b):
    """A 3x3 valid convolution, NHWC, written as most NumPy code writes it: allocate, then fill per pixel."""
    N, H, W, C = x.shape
    K, _, _, F = w.shape
    out = np.empty((N, H - K + 1, W - K + 1, F))
    for i in range(H - K + 1):
        for j in range(W - K + 1):
            out[:, i, j, :] = np.sum(x[:, i:i + K, j:j + K, :, np.newaxis] * w[np.newaxis], axis=(1, 2, 3))
    out += b
    return out


def conv2d_fill_inputs(n, rng):
    return rng.standard_normal((4, n, n, 3)), rng.standard_normal((3, 3, 3, 8)), rng.standard_normal(8)


def maxpool_fill(x):
    N, H, W, C = x.shape
    out = np.empty((N, H // 2, W // 2, C))
    for i in range(H // 2):
        for j in range(W // 2):
            out[:, i, j, :] = np.max(x[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2, :], axis=(1, 2))
    return out


def maxpool_fill_inputs(n, rng):
    return (rng.standard_normal((4, n, n, 8)),)


def blur_into(img, out):
    """A 3x3 binomial blur into an output image; the border is copied unchanged."""
    out[1:-1, 1:-1] = (img[:-2, :-2] + 2.0 * img[:-2, 1:-1] + img[:-2, 2:]
                       + 2.0 * img[1:-1, :-2] + 4.0 * img[1:-1, 1:-1] + 2.0 * img[1:-1, 2:]
                       + img[2:, :-2] + 2.0 * img[2:, 1:-1] + img[2:, 2:]) / 16.0
    out[0, :] = img[0, :]
    out[-1, :] = img[-1, :]
    out[:, 0] = img[:, 0]
    out[:, -1] = img[:, -1]


def blur_into_inputs(n, rng):
    return rng.random((n, n)), np.zeros((n, n))


def pairwise_distances_fill(X):
    n = X.shape[0]
    D = np.empty((n, n))
    for i in range(n):
        D[i] = np.sqrt(((X - X[i]) ** 2).sum(axis=1))
    return D


def pairwise_distances_fill_inputs(n, rng):
    return (rng.standard_normal((n, 16)),)


class KVCacheAttention:
    """One attention head decoding a token at a time; keys and values are kept in caches on the object."""

    def __init__(self, dim, max_len, rng):
        scale = 1.0 / np.sqrt(dim)
        self.wq, self.wk, self.wv = (rng.standard_normal((dim, dim)) * scale for _ in range(3))
        self.cache_k = np.zeros((max_len, dim))
        self.cache_v = np.zeros((max_len, dim))

    def step(self, x, pos):
        q, k, v = x @ self.wq, x @ self.wk, x @ self.wv
        self.cache_k[pos] = k
        self.cache_v[pos] = v
        scores = self.cache_k[:pos + 1] @ q / np.sqrt(q.shape[0])
        p = np.exp(scores - scores.max())
        return (p / p.sum()) @ self.cache_v[:pos + 1]

    def decode(self, xs, start):
        out = np.empty_like(xs)
        for t in range(xs.shape[0]):
            out[t] = self.step(xs[t], start + t)
        return out


def kv_cache_decode_inputs(n, rng):
    attn = KVCacheAttention(n, 64, rng)
    prompt = rng.standard_normal((16, n))
    attn.cache_k[:16] = prompt @ attn.wk
    attn.cache_v[:16] = prompt @ attn.wv
    return attn, rng.standard_normal((8, n)), 16


class BatchNorm:
    def __init__(self, features, momentum=0.1, eps=1e-5):
        self.gamma, self.beta = np.ones(features), np.zeros(features)
        self.running_mean, self.running_var = np.zeros(features), np.ones(features)
        self.momentum, self.eps = momentum, eps

    def train_step(self, x):
        mean = x.mean(axis=0)
        var = x.var(axis=0)
        self.running_mean *= 1.0 - self.momentum
        self.running_mean += self.momentum * mean
        self.running_var *= 1.0 - self.momentum
        self.running_var += self.momentum * var * x.shape[0] / (x.shape[0] - 1)
        return self.gamma * (x - mean) / np.sqrt(var + self.eps) + self.beta


def batchnorm_train_inputs(n, rng):
    return BatchNorm(n), rng.standard_normal((64, n)) * 2.0 + 1.0


def sgd_momentum(params, grads, velocities, lr=0.01, momentum=0.9):
    """One SGD step with momentum over lists of parameter, gradient and velocity arrays, all in place."""
    for p, g, v in zip(params, grads, velocities):
        v *= momentum
        v -= lr * g
        p += v


def sgd_momentum_inputs(n, rng):
    shapes = [(n, n), (n,), (n, 10), (10,)]
    return ([rng.standard_normal(s) for s in shapes], [rng.standard_normal(s) for s in shapes],
            [np.zeros(s) for s in shapes])


def adam_step(params, grads, m, v, t, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
    """One Adam step over dicts of arrays keyed by parameter name."""
    for name in params:
        g = grads[name]
        m[name] *= b1
        m[name] += (1.0 - b1) * g
        v[name] *= b2
        v[name] += (1.0 - b2) * g * g
        m_hat = m[name] / (1.0 - b1 ** t)
        v_hat = v[name] / (1.0 - b2 ** t)
        params[name] -= lr * m_hat / (np.sqrt(v_hat) + eps)


def adam_step_inputs(n, rng):
    shapes = {"w1": (n, n), "b1": (n,), "w2": (n, 4), "b2": (4,)}
    return ({k: rng.standard_normal(s) for k, s in shapes.items()},
            {k: rng.standard_normal(s) for k, s in shapes.items()},
            {k: rng.standard_normal(s) * 0.1 for k, s in shapes.items()},
            {k: rng.random(s) * 0.1 for k, s in shapes.items()}, 3)
