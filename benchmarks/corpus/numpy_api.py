"""Programs that use the wider NumPy API: trigonometry and rounding, scans and sorting, ``np.linalg`` and
``np.fft``, histograms and statistics, shifts and differences, gathers, log-space arithmetic, complex numbers,
bit operations on integer arrays, ufunc methods, scalar loops, and two loops whose control flow depends on the
data (a bitwise CRC, a CSR sparse product).

Each kernel is followed by its input maker ``(n, rng) -> args``.
"""

from __future__ import annotations

import numpy as np


def polar_angles(x, y):
    """Cartesian to polar coordinates, angles in [0, 2 pi), and the angle histogram's sector of each point."""
    r = np.hypot(x, y)
    theta = np.arctan2(y, x)
    theta = np.where(theta < 0, theta + 2 * np.pi, theta)
    sector = np.floor(theta / (np.pi / 4)).astype(np.int64)
    return r, theta, sector


def polar_angles_inputs(n, rng):
    return rng.standard_normal(n * n), rng.standard_normal(n * n)


def moving_average(x, w):
    """Moving averages of each row through a cumulative sum."""
    c = np.cumsum(x, axis=-1)
    c[:, w:] = c[:, w:] - c[:, :-w]
    return c[:, w - 1:] / w


def moving_average_inputs(n, rng):
    return rng.standard_normal((n, 4 * n)), 8


def rank_filter(x):
    """Per-row ranks (argsort of argsort) and a 3-point median filter by sorting stacked shifts."""
    ranks = np.argsort(np.argsort(x, axis=1), axis=1)
    windows = np.stack([x[:, :-2], x[:, 1:-1], x[:, 2:]])
    median = np.sort(windows, axis=0)[1]
    return ranks, median


def rank_filter_inputs(n, rng):
    return (rng.standard_normal((n, 2 * n)),)


def solve_residual(A, b):
    x = np.linalg.solve(A, b)
    r = b - A @ x
    return x, np.linalg.norm(r) / np.linalg.norm(b)


def solve_residual_inputs(n, rng):
    return rng.standard_normal((n, n)) + n * np.eye(n), rng.standard_normal(n)


def mahalanobis(X, mu, S):
    Sinv = np.linalg.inv(S)
    d = X - mu
    return np.sqrt(np.sum((d @ Sinv) * d, axis=1))


def mahalanobis_inputs(n, rng):
    M = rng.standard_normal((n, n))
    return rng.standard_normal((20 * n, n)), rng.standard_normal(n), M @ M.T + n * np.eye(n)


def gaussian_log_density(S, mu, X):
    """Log-density of samples under N(mu, S) through the Cholesky factor (a triangular solve by inv)."""
    L = np.linalg.cholesky(S)
    z = (X - mu) @ np.linalg.inv(L).T
    log_det = 2.0 * np.sum(np.log(np.diag(L)))
    k = S.shape[0]
    return -0.5 * (np.sum(z * z, axis=1) + log_det + k * np.log(2 * np.pi))


def gaussian_log_density_inputs(n, rng):
    M = rng.standard_normal((n, n))
    return M @ M.T + n * np.eye(n), rng.standard_normal(n), rng.standard_normal((10 * n, n))


def fft_filter(signal, kernel):
    """Linear convolution by zero-padded real FFTs, and the power spectrum of the signal."""
    n = signal.shape[0] + kernel.shape[0] - 1
    smoothed = np.fft.irfft(np.fft.rfft(signal, n) * np.fft.rfft(kernel, n), n)
    power = np.abs(np.fft.fft(signal)) ** 2
    return smoothed, power


def fft_filter_inputs(n, rng):
    return rng.standard_normal(64 * n), np.hanning(31) / np.hanning(31).sum()


def histogram_density(x):
    counts, edges = np.histogram(x, bins=32, range=(-4.0, 4.0))
    centres = 0.5 * (edges[1:] + edges[:-1])
    density = counts / (x.size * (edges[1] - edges[0]))
    return centres, density


def histogram_density_inputs(n, rng):
    return (rng.standard_normal(100 * n),)


def correlation_matrices(X):
    return np.cov(X), np.corrcoef(X)


def correlation_matrices_inputs(n, rng):
    return (rng.standard_normal((n // 2, 10 * n)),)


def periodic_diffusion(u, steps, nu=0.1):
    """Diffusion on a torus with ``np.roll``; returns the field and its differences along both axes."""
    for t in range(steps):
        lap = np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1) + np.roll(u, -1, axis=1) - 4 * u
        u = u + nu * lap
    return u, np.diff(u, axis=0), np.diff(u, axis=1)


def periodic_diffusion_inputs(n, rng):
    return rng.random((n, n)), max(2, n // 10)


def embedding_bag(table, ids, weights):
    """Gather rows of an embedding table with ``np.take`` and pool them with weights."""
    rows = np.take(table, ids, axis=0)
    return np.sum(rows * weights[..., None], axis=1) / np.sum(weights, axis=1, keepdims=True)


def embedding_bag_inputs(n, rng):
    return rng.standard_normal((1000, n)), rng.integers(0, 1000, (64, 12)), rng.random((64, 12))


def hmm_forward(log_pi, log_A, log_e):
    """The forward algorithm of a hidden Markov model in log space."""
    alpha = log_pi + log_e[0]
    for t in range(1, log_e.shape[0]):
        alpha = np.logaddexp.reduce(alpha[:, None] + log_A, axis=0) + log_e[t]
    return np.logaddexp.reduce(alpha)


def hmm_forward_inputs(n, rng):
    A = rng.random((n, n))
    A /= A.sum(axis=1, keepdims=True)
    pi = np.full(n, 1.0 / n)
    return np.log(pi), np.log(A), np.log(rng.random((n, n)) + 1e-3)


def mandelbrot(re, im, iterations):
    """Escape-time counts with complex arithmetic; ``1j`` builds the complex grid."""
    c = re[None, :] + 1j * im[:, None]
    z = np.zeros_like(c)
    count = np.zeros(c.shape, dtype=np.int64)
    for k in range(iterations):
        inside = np.abs(z) <= 2.0
        z = np.where(inside, z * z + c, z)
        count += inside
    return count, np.angle(z), z.real.sum() + z.imag.sum()


def mandelbrot_inputs(n, rng):
    return (np.linspace(-2.0, 0.6, n) + 1e-3 * rng.random(n), np.linspace(-1.2, 1.2, n) + 1e-3 * rng.random(n),
            20)


def xorshift_uniform(state, rounds):
    """xorshift64 generators, one per element of ``state`` (advanced in place), to uniform floats in [0, 1)."""
    out = np.empty((rounds, state.shape[0]))
    for r in range(rounds):
        state ^= state << np.uint64(13)
        state ^= state >> np.uint64(7)
        state ^= state << np.uint64(17)
        out[r] = (state >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
    return out


def xorshift_uniform_inputs(n, rng):
    return rng.integers(1, 2 ** 63, 50 * n, dtype=np.uint64), 8


def kernel_regression(x, y, xq, bandwidth):
    """Nadaraya-Watson regression: Gaussian weights from ``np.subtract.outer``, a ridge from ``np.add.outer``."""
    d = np.subtract.outer(xq, x)
    K = np.exp(-0.5 * (d / bandwidth) ** 2)
    prediction = (K @ y) / K.sum(axis=1)
    spread = np.add.outer(prediction, -prediction)
    return prediction, np.abs(spread).max()


def kernel_regression_inputs(n, rng):
    x = np.sort(rng.random(10 * n))
    return x, np.sin(6 * x) + 0.1 * rng.standard_normal(10 * n), np.linspace(0, 1, 2 * n), 0.05


def quantize(x, scale):
    """Round to a grid with NaNs zeroed and the range clipped; the rounding error's mean and sign balance."""
    clean = np.where(np.isnan(x), 0.0, x)
    q = np.clip(np.round(clean / scale), -127, 127)
    err = clean - q * scale
    return q.astype(np.int8), err.mean(), np.sign(err).sum()


def quantize_inputs(n, rng):
    x = rng.standard_normal(n * n)
    x[rng.random(n * n) < 0.01] = np.nan
    return x, 0.02


def tanh_trace(a):
    """A scalar loop over the diagonal, then a broadcast add (a classic of JIT demos)."""
    trace = 0.0
    for i in range(a.shape[0]):
        trace += np.tanh(a[i, i])
    return a + trace


def tanh_trace_inputs(n, rng):
    return (rng.random((n, n)),)


def crc32(data):
    """Bitwise CRC-32 (reflected polynomial) of a uint8 array: a branch on every bit."""
    crc = 0xFFFFFFFF
    for i in range(data.shape[0]):
        crc ^= int(data[i])
        for bit in range(8):
            if crc & 1:
                crc = (crc >> 1) ^ 0xEDB88320
            else:
                crc >>= 1
    return crc ^ 0xFFFFFFFF


def crc32_inputs(n, rng):
    return (rng.integers(0, 256, n, dtype=np.uint8),)


def csr_matvec(indptr, indices, values, x):
    """y = A x for A in compressed sparse row form; the row bounds come from the data."""
    n = indptr.shape[0] - 1
    y = np.empty(n)
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        y[i] = values[lo:hi] @ x[indices[lo:hi]]
    return y


def csr_matvec_inputs(n, rng):
    per_row = rng.integers(1, min(12, n + 1), n)
    indptr = np.concatenate([[0], np.cumsum(per_row)])
    indices = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in per_row])
    return indptr, indices, rng.standard_normal(indptr[-1]), rng.standard_normal(n)
