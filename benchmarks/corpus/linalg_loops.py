"""Dense linear algebra as it is written in NumPy by hand: factorizations that update rows of the caller's matrix
in place, triangular solves element by element, BLAS-like kernels writing into output arguments, and loops of
matrix-vector products over rows.

Each kernel is followed by its input maker ``(n, rng) -> args``.
"""

from __future__ import annotations

import numpy as np


def _diagonally_dominant(n, rng):
    A = rng.random((n, n))
    return A + n * np.eye(n)


def _spd(n, rng):
    M = rng.random((n, n))
    return M @ M.T + n * np.eye(n)


def lu_rows(A):
    """Doolittle LU in place: L below the diagonal (unit diagonal implied), U on and above it."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] = (A[i, j] - A[i, :j] @ A[:j, j]) / A[j, j]
        A[i, i:] -= A[i, :i] @ A[:i, i:]


def lu_rows_inputs(n, rng):
    return (_diagonally_dominant(n, rng),)


def cholesky_rows(A):
    """Cholesky-Banachiewicz in place, lower triangle; the upper triangle is left as it was."""
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[j, :j]
            A[i, j] /= A[j, j]
        A[i, i] -= A[i, :i] @ A[i, :i]
        A[i, i] = np.sqrt(A[i, i])


def cholesky_rows_inputs(n, rng):
    return (_spd(n, rng),)


def forward_substitution(L, b, x):
    """Solves L x = b for lower-triangular L into the output argument ``x``."""
    n = L.shape[0]
    for i in range(n):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def forward_substitution_inputs(n, rng):
    return np.tril(_diagonally_dominant(n, rng)), rng.random(n), np.zeros(n)


def back_substitution(U, b):
    n = U.shape[0]
    x = np.zeros_like(b)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - U[i, i + 1:] @ x[i + 1:]) / U[i, i]
    return x


def back_substitution_inputs(n, rng):
    return np.triu(_diagonally_dominant(n, rng)), rng.random(n)


def gram_schmidt(A):
    """Modified Gram-Schmidt: the columns of ``A`` are orthogonalized in place; returns Q and R."""
    m, n = A.shape
    Q = np.zeros((m, n))
    R = np.zeros((n, n))
    for k in range(n):
        R[k, k] = np.sqrt(A[:, k] @ A[:, k])
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, n):
            R[k, j] = Q[:, k] @ A[:, j]
            A[:, j] -= R[k, j] * Q[:, k]
    return Q, R


def gram_schmidt_inputs(n, rng):
    return (rng.random((2 * n, n)),)


def gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C


def gemm_inputs(n, rng):
    return 1.5, 1.2, rng.random((n, n + 10)), rng.random((n, n + 20)), rng.random((n + 20, n + 10))


def syrk_lower(alpha, beta, C, A):
    """C = alpha A A^T + beta C on the lower triangle only, one row at a time."""
    n = C.shape[0]
    for i in range(n):
        C[i, :i + 1] *= beta
        C[i, :i + 1] += alpha * A[:i + 1] @ A[i]


def syrk_lower_inputs(n, rng):
    return 1.5, 1.2, rng.random((n, n)), rng.random((n, n // 2 + 1))


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x


def gemver_inputs(n, rng):
    return (1.5, 1.2, rng.random((n, n)), *(rng.random(n) for _ in range(8)))


def atax(A, x, y):
    tmp = A @ x
    y[:] = A.T @ tmp


def atax_inputs(n, rng):
    return rng.random((n, n + 30)), rng.random(n + 30), np.zeros(n + 30)


def bicg(A, p, r, s, q):
    s[:] = r @ A
    q[:] = A @ p


def bicg_inputs(n, rng):
    return rng.random((n, n + 20)), rng.random(n + 20), rng.random(n), np.zeros(n + 20), np.zeros(n)


def mvt(A, x1, x2, y1, y2):
    x1 += A @ y1
    x2 += y2 @ A


def mvt_inputs(n, rng):
    return (rng.random((n, n)), *(rng.random(n) for _ in range(4)))


def trmm_upper(alpha, A, B):
    """B = alpha A^T B for A unit lower triangular, row by row in place."""
    m = B.shape[0]
    for i in range(m):
        B[i, :] += A[i + 1:, i] @ B[i + 1:, :]
    B *= alpha


def trmm_upper_inputs(n, rng):
    return 1.5, np.tril(rng.random((n, n)), -1), rng.random((n, n + 10))


def doitgen(A, C4, acc):
    """A[r, q, :] = A[r, q, :] @ C4 for every (r, q), through a scratch vector the caller owns."""
    nr, nq, _ = A.shape
    for r in range(nr):
        for q in range(nq):
            acc[:] = A[r, q, :] @ C4
            A[r, q, :] = acc


def doitgen_inputs(n, rng):
    return rng.random((n // 3 + 1, n // 4 + 1, n)), rng.random((n, n)), np.zeros(n)


def floyd_warshall(dist):
    n = dist.shape[0]
    for k in range(n):
        dist[:] = np.minimum(dist, dist[:, k, None] + dist[None, k, :])


def floyd_warshall_inputs(n, rng):
    dist = rng.integers(1, 100, (n, n)).astype(np.float64)
    dist[rng.random((n, n)) < 0.7] = np.inf
    np.fill_diagonal(dist, 0.0)
    return (dist,)


def durbin(r):
    """Levinson-Durbin recursion for a Toeplitz system; reversed slices of the solution so far."""
    n = r.shape[0]
    y = np.empty_like(r)
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + r[k - 1::-1] @ y[:k]) / beta
        y[:k] += alpha * y[k - 1::-1]
        y[k] = alpha
    return y


def durbin_inputs(n, rng):
    return (0.5 ** np.arange(1, n + 1) * (1.0 + 0.01 * rng.random(n)),)


def jacobi_solver(A, b, x, iterations):
    """Jacobi iteration for A x = b, refining the caller's guess ``x`` in place."""
    d = np.diag(A)
    for it in range(iterations):
        x[:] = (b - (A @ x - d * x)) / d
    return np.abs(A @ x - b).max()


def jacobi_solver_inputs(n, rng):
    return _diagonally_dominant(n, rng), rng.random(n), np.zeros(n), 25


def three_mm(A, B, C, D, E, F, G):
    E[:] = A @ B
    F[:] = C @ D
    G[:] = E @ F


def three_mm_inputs(n, rng):
    shapes = [(n, n + 5), (n + 5, n + 10), (n + 10, n + 15), (n + 15, n + 20)]
    mats = [rng.random(s) for s in shapes]
    return (*mats, np.zeros((n, n + 10)), np.zeros((n + 10, n + 20)), np.zeros((n, n + 20)))


def covariance_rows(data):
    """The covariance of the columns: centred in place, then the upper triangle filled row by row and mirrored."""
    n, m = data.shape
    data -= data.mean(axis=0)
    cov = np.empty((m, m))
    for i in range(m):
        cov[i, i:] = data[:, i] @ data[:, i:] / (n - 1.0)
        cov[i:, i] = cov[i, i:]
    return cov


def covariance_rows_inputs(n, rng):
    return (rng.random((n + 20, n)),)
