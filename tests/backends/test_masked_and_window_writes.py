"""Masked writes and writes through windows computed in place (backends/inplace.py, backends/view_writes.py), as
eager NumPy makes them, with eager's results bit for bit.

Each case runs eagerly and compiled (codegen and fused) on copies of the same arguments, over several calls with
other data, and compares the result, every argument's final contents and the views the caller holds bit for bit;
then it checks the generated code makes the write in place (no whole new array for it)."""

import numpy as np
import pytest

import graph_lab as gl
from graph_lab import compile_graph, run, trace
from graph_lab.errors import GraphExecutionError
from tests.support.backend_support import ALWAYS, needs_compiler

BACKENDS = ["codegen", "fused"]


def _same_as_eager(fn, make, backend, calls=3, order="C"):
    """Compile ``fn``; over ``calls`` calls with new data, the result and the arguments' final contents equal
    eager's bit for bit. Returns the generated source of the last call's graphs."""
    cf = gl.compile(fn, backend=backend)
    for seed in range(calls):
        args = [np.asarray(a, order=order) if isinstance(a, np.ndarray) else a
                for a in make(np.random.default_rng(seed))]
        eager_args = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]
        views = [a[1:] for a in args if isinstance(a, np.ndarray)]  # views the caller holds
        eager_views = [a[1:] for a in eager_args if isinstance(a, np.ndarray)]
        expected, got = fn(*eager_args), cf(*args)
        for a, e in zip(args + views, eager_args + eager_views):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, e, strict=True)
        if expected is not None:
            for g, e in zip(*((got, expected) if isinstance(expected, tuple) else ((got,), (expected,)))):
                np.testing.assert_array_equal(g, e, strict=True)
    return "\n".join(e.segment.runner.__self__.source for e in cf.last_events), cf


def _in_place_line(cf) -> str:
    return " ".join(e.segment.runner.__self__.how_it_runs() for e in cf.last_events)


def particles(pos, vel, L, dt):
    for _ in range(4):
        pos += vel * dt
        pos[pos >= L] -= L
        pos[pos < 0.0] += L
    return pos.mean(axis=0)


def nearest_image(x, L):
    dx = np.tile(x, (x.shape[0], 1))
    dx = dx - dx.T
    dx[dx > L / 2] = dx[dx > L / 2] - L
    dx[dx < -L / 2] += L
    return (dx * dx).sum(axis=1)


def masked_through_window(U):
    u = U[1:-1, 1:-1]
    u[u > 0.5] = 0.0
    return U


def two_masked_writes_through_window(U):
    u = U[1:-1, 1:-1]
    u[u > 0.5] = 0.0
    u[u < 0.25] -= 0.125  # (reads the first write's value itself, a contiguous array: capture_loop's window_reads)
    return U


def augmented_window(U, r):
    u = U[1:-1, 1:-1]
    for _ in range(3):
        u += r * (U[:-2, 1:-1] + U[2:, 1:-1] - 2.0 * u)


def fresh_grid_window(r):
    U = np.zeros((12, 12))
    u = U[1:-1, 1:-1]
    u += r
    return U


def window_summed_after_the_write(U):
    u = U[1:-1, 1:-1]
    u += 1.0
    return u.sum()


def masked_window_summed(U):
    u = U[1:-1, 1:-1]
    u[u > 0.5] = 0.0
    return u.sum()


def window_returned(U, r):
    u = U[1:-1, 1:-1]
    u *= r
    return u


def window_read_before_a_write_into_its_base(U):
    u = U[1:-1, 1:-1]
    before = u * 1.0
    U *= 0.5
    return before + U[1:-1, 1:-1]


def window_across_a_break(U, r):
    u = U[1:-1, 1:-1]
    total = float(U.sum())  # a graph break between the view and the write
    u += r
    return total


def _grid(rng):
    return rng.random((12, 12))


CASES = {
    particles: lambda r: (r.random((40, 3)) * 10.0, r.standard_normal((40, 3)), 10.0, 0.5),
    nearest_image: lambda r: (r.random(30) * 8.0, 8.0),
    masked_through_window: lambda r: (_grid(r),),
    two_masked_writes_through_window: lambda r: (_grid(r),),
    augmented_window: lambda r: (_grid(r), 0.1),
    fresh_grid_window: lambda r: (r.random((10, 10)),),
    window_returned: lambda r: (_grid(r), 0.5),
    window_read_before_a_write_into_its_base: lambda r: (_grid(r),),
    window_across_a_break: lambda r: (_grid(r), r.random((10, 10))),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", list(CASES), ids=[f.__name__ for f in CASES])
def test_each_pattern_gives_eagers_bits(fn, backend):
    _same_as_eager(fn, CASES[fn], backend)


@pytest.mark.parametrize("fn", list(CASES), ids=[f.__name__ for f in CASES])
def test_fortran_ordered_arguments(fn):
    # (a masked write into an F-ordered array keeps np.where's new C-ordered array: its layout is part of a sum)
    _same_as_eager(fn, CASES[fn], "codegen", order="F")


@pytest.mark.parametrize("backend", BACKENDS)
def test_masked_writes_are_made_in_place(backend):
    source, cf = _same_as_eager(particles, CASES[particles], backend)
    assert source.count("where_into(") == 8 and "np.where(" not in source
    # (and the four ``pos += vel * dt``: ``np.add(.., out=v0)``, into the caller's array at any size)
    assert "12 writes in place" in _in_place_line(cf) and source.count("out=v0)") == 1
    source, _ = _same_as_eager(nearest_image, CASES[nearest_image], backend)
    assert source.count("where_into(") == 2 and "np.where(" not in source


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_through_a_window_are_made_in_the_window(backend):
    source, cf = _same_as_eager(masked_through_window, CASES[masked_through_window], backend)
    assert source.count("np.copyto(v1, ") == 1 and "np.where(" not in source and "] = " not in source
    assert "1 writes in place" in _in_place_line(cf)  # (one write, not two nodes)
    source, cf = _same_as_eager(two_masked_writes_through_window, CASES[two_masked_writes_through_window], backend)
    assert source.count("where_into(") == 1 and source.count("np.where(") == 1
    assert "3 writes in place" in _in_place_line(cf)
    source, cf = _same_as_eager(augmented_window, CASES[augmented_window], backend)
    assert "3 writes in place" in _in_place_line(cf)
    source, _ = _same_as_eager(fresh_grid_window, CASES[fresh_grid_window], backend)
    assert "np.add(v2, v0, out=v2)" in source and "] = " not in source


@pytest.mark.parametrize("backend", ["codegen", "interpret"])
@pytest.mark.parametrize("fn", [window_summed_after_the_write, masked_window_summed])
def test_a_window_written_through_is_summed_in_eagers_order(fn, backend):
    # Regression: the sum read the new value as a new C-ordered array, where eager code sums the strided window
    # of the base: pairwise summation over other blocks, different last bits in about half of the calls.
    cf = gl.compile(fn, backend=backend)
    for seed in range(12):
        U = np.random.default_rng(seed).random((200, 200))
        E = U.copy()
        assert cf(U) == fn(E)
        np.testing.assert_array_equal(U, E)


def test_a_window_returned_is_a_view_of_the_callers_array():
    U, E = np.random.default_rng(0).random((12, 12)), None
    E = U.copy()
    got = gl.compile(window_returned, backend="codegen")(U, 0.5)
    np.testing.assert_array_equal(got, window_returned(E, 0.5), strict=True)
    np.testing.assert_array_equal(U, E)


def test_aliasing_arguments_are_guarded():
    def f(A, B):
        a = A[1:-1]
        a += B[:-2]
        return A
    cf = gl.compile(f, backend="codegen")
    for same in (False, True, False):
        x = np.arange(10.0)
        y = x if same else np.arange(10.0)
        ex = x.copy()
        ey = ex if same else y.copy()
        np.testing.assert_array_equal(cf(x, y), f(ex, ey))
        np.testing.assert_array_equal(x, ex)


def test_a_masked_value_the_dtype_cannot_hold_is_not_written_in_place():
    # np.where wraps a Python int out of an int8's range, where np.copyto raises: the new array is kept
    def f(x):
        y = x + np.int8(1)
        return np.where(y > 2, 300, y).astype(np.int64)
    g = trace(f, {"x": ((8,), "int8")})
    x = np.arange(8, dtype=np.int8)
    with np.errstate(all="ignore"):
        try:
            want = f(x)
        except OverflowError:  # (NumPy 2.5 and later refuse the Python int; the graph must refuse it too)
            with pytest.raises(GraphExecutionError, match="out of bounds for int8"):
                compile_graph(g, "codegen")(x)
            return
        np.testing.assert_array_equal(compile_graph(g, "codegen")(x)[0], want)
        np.testing.assert_array_equal(run(g, {"x": x})[0], want)


@needs_compiler
def test_a_kernel_reads_an_array_where_it_runs():
    # Regression: the update of B was written in place before the kernel that reads the old B (the kernel runs
    # where its last node is), so the kernel computed from the new B: silently wrong. The group is now left to
    # NumPy, computed before the write (``reordering.keep_in_order``), and explain() says why.
    def f(x, c):
        B = x @ x  # (no kernel makes it)
        t = B * 2.0
        B[0] = c
        return t + 1.0, B
    g = trace(f, {"x": ((64, 64), "float64"), "c": ((64,), "float64")})
    x, c = np.random.default_rng(0).random((64, 64)), np.full(64, 5.0)
    cg = compile_graph(g, "fused", options=ALWAYS)
    assert not cg.kernels and "it would read an array after an update written in place" in cg.how_it_runs()
    for got, want in zip(cg(x, c), run(g, {"x": x, "c": c})):
        np.testing.assert_array_equal(got, want)
