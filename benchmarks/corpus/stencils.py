"""Stencils over time steps: each step reads neighbours through shifted slices and writes the new values back into
the arrays it was given (or into views of them), as simulation codes do to avoid allocating per step.

Each kernel is followed by its input maker ``(n, rng) -> args``: ``n`` sets the grid (and the number of steps
where it matters), ``rng`` the data.
"""

from __future__ import annotations

import numpy as np


def jacobi_1d(A, B, steps):
    for t in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_1d_inputs(n, rng):
    A = rng.random(n)
    return A, A.copy(), max(2, n // 20)


def jacobi_2d(A, B, steps):
    for t in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def jacobi_2d_inputs(n, rng):
    A = rng.random((n, n))
    return A, A.copy(), max(2, n // 12)


def heat_3d(A, B, steps):
    for t in range(steps):
        B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
                               + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
                               + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2])
                               + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
                               + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
                               + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2])
                               + B[1:-1, 1:-1, 1:-1])


def heat_3d_inputs(n, rng):
    A = rng.random((n, n, n))
    return A, A.copy(), max(2, n // 4)


def seidel_rows(A, steps):
    """Gauss-Seidel in the rows (row i reads the new row i - 1), Jacobi within a row."""
    n = A.shape[0]
    for t in range(steps):
        for i in range(1, n - 1):
            A[i, 1:-1] = (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:]
                          + A[i, :-2] + A[i, 1:-1] + A[i, 2:]
                          + A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:]) / 9.0


def seidel_rows_inputs(n, rng):
    return rng.random((n, n)), 2


def fdtd_2d(ex, ey, hz, source, steps):
    for t in range(steps):
        ey[0, :] = source[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def fdtd_2d_inputs(n, rng):
    steps = max(2, n // 8)
    return (rng.random((n, n + 10)), rng.random((n, n + 10)), rng.random((n, n + 10)), rng.random(steps), steps)


def wave_1d(u_prev, u, c, steps):
    """Leapfrog for the wave equation: the two time levels live in the caller's arrays."""
    for t in range(steps):
        u_next = np.zeros_like(u)
        u_next[1:-1] = 2.0 * u[1:-1] - u_prev[1:-1] + c * c * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u_prev[:] = u
        u[:] = u_next


def wave_1d_inputs(n, rng):
    x = np.linspace(0.0, 1.0, n)
    u = np.exp(-200.0 * (x - 0.3) ** 2) + 0.01 * rng.standard_normal(n)
    return u.copy(), u, 0.5, max(4, n // 25)


def gray_scott(U, V, steps, Du=0.16, Dv=0.08, feed=0.035, kill=0.065):
    """Reaction-diffusion: the interiors are views, updated in place; the edges stay fixed."""
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
    for t in range(steps):
        Lu = U[:-2, 1:-1] + U[1:-1, :-2] - 4 * u + U[1:-1, 2:] + U[2:, 1:-1]
        Lv = V[:-2, 1:-1] + V[1:-1, :-2] - 4 * v + V[1:-1, 2:] + V[2:, 1:-1]
        uvv = u * v * v
        u += Du * Lu - uvv + feed * (1 - u)
        v += Dv * Lv + uvv - (feed + kill) * v


def gray_scott_inputs(n, rng):
    U, V = np.ones((n, n)), np.zeros((n, n))
    r = n // 5
    U[n // 2 - r:n // 2 + r, n // 2 - r:n // 2 + r] = 0.5
    V[n // 2 - r:n // 2 + r, n // 2 - r:n // 2 + r] = 0.25
    U += 0.05 * rng.random((n, n))
    V += 0.05 * rng.random((n, n))
    return U, V, max(4, n // 4)


def gray_scott_pattern(spots, steps, Du=0.16, Dv=0.08, feed=0.035, kill=0.065):
    """The same reaction-diffusion from a state of its own: fresh grids seeded from ``spots``, handed to the
    step loop above (which updates their interiors in place through views)."""
    U = np.where(spots, 0.5, 1.0)
    V = np.where(spots, 0.25, 0.0)
    gray_scott(U, V, steps, Du, Dv, feed, kill)
    return U, V


def gray_scott_pattern_inputs(n, rng):
    return rng.random((n, n)) < 0.1, max(4, n // 4)


def heat_neumann(T, alpha, steps):
    """Explicit heat equation with insulated edges: the ghost cells copy their neighbours after each step."""
    for t in range(steps):
        T[1:-1, 1:-1] += alpha * (T[2:, 1:-1] + T[:-2, 1:-1] + T[1:-1, 2:] + T[1:-1, :-2] - 4.0 * T[1:-1, 1:-1])
        T[0, :] = T[1, :]
        T[-1, :] = T[-2, :]
        T[:, 0] = T[:, 1]
        T[:, -1] = T[:, -2]


def heat_neumann_inputs(n, rng):
    return rng.random((n, n)) * 100.0, 0.2, max(2, n // 10)


def laplace_fixed(phi, fixed, steps):
    """Jacobi sweeps for Laplace's equation; the cells marked in ``fixed`` keep their potential."""
    for t in range(steps):
        new = 0.25 * (phi[2:, 1:-1] + phi[:-2, 1:-1] + phi[1:-1, 2:] + phi[1:-1, :-2])
        inner = phi[1:-1, 1:-1]
        phi[1:-1, 1:-1] = np.where(fixed[1:-1, 1:-1], inner, new)
    return phi[1:-1, 1:-1].mean()


def laplace_fixed_inputs(n, rng):
    phi = np.zeros((n, n))
    fixed = rng.random((n, n)) < 0.05
    phi[fixed] = rng.uniform(-1.0, 1.0, int(fixed.sum()))
    return phi, fixed, max(4, n // 6)


def upwind_advection(q, courant, steps):
    """First-order upwind transport, written in place: the right side is computed before the write, as NumPy
    evaluates it."""
    for t in range(steps):
        q[1:] -= courant * (q[1:] - q[:-1])
        q[0] = q[-1]
    return q.sum()


def upwind_advection_inputs(n, rng):
    return rng.random(n), 0.4, max(4, n // 20)


def game_of_life(grid, steps):
    """Conway's game on an int8 grid with dead edges; the new generation is written back into ``grid``."""
    for t in range(steps):
        neighbours = (grid[:-2, :-2] + grid[:-2, 1:-1] + grid[:-2, 2:] + grid[1:-1, :-2] + grid[1:-1, 2:]
                      + grid[2:, :-2] + grid[2:, 1:-1] + grid[2:, 2:])
        alive = grid[1:-1, 1:-1] == 1
        born = (neighbours == 3) | (alive & (neighbours == 2))
        grid[1:-1, 1:-1] = born.astype(np.int8)
    return int(grid.sum())


def game_of_life_inputs(n, rng):
    return (rng.random((n, n)) < 0.3).astype(np.int8), max(4, n // 10)
