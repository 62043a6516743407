"""Updates written into their base's memory (backends/inplace.py): the same results as eager NumPy and as the
reference interpreter, with the copy left out only where nothing reads the old value.

Each compile() case runs eagerly and compiled on copies of the same arguments (twice, the second call a cache
hit) and compares the results and the arguments' final contents bit for bit."""

import numpy as np
import pytest

import graph_lab as gl
from graph_lab.backends.compiled import compile_captured
from graph_lab.backends.inplace import in_place_updates
from graph_lab.ir.builder import GraphBuilder
from graph_lab.ops import Op


def _same_as_eager(fn, *make):
    cf = gl.compile(fn)
    for seed in (0, 1):
        args = [m(np.random.default_rng(seed)) for m in make]
        eager_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        expected = fn(*eager_args)
        got = cf(*args)
        for a, b in zip(args, eager_args):
            np.testing.assert_array_equal(a, b, strict=True)
        got, expected = (got, expected) if isinstance(expected, tuple) else ((got,), (expected,))
        for g, e in zip(got, expected, strict=True):
            assert type(g) is type(e)
            np.testing.assert_array_equal(g, e, strict=True)
    return cf


def _sources(cf) -> str:
    return "\n".join(e.segment.runner.__self__.source for e in cf.last_events)


def stencil(A, B, steps):
    for _ in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def test_a_stencil_writes_into_the_callers_arrays():
    cf = _same_as_eager(stencil, lambda r: r.random(50), lambda r: r.random(50), lambda r: 3)
    source = _sources(cf)
    assert "written into the memory of" in source
    assert "impl_index_update" not in source  # no update copies its array


def row_updates(A):
    n = A.shape[0]
    for i in range(1, n):
        A[i, i:] -= A[i, :i] @ A[:i, i:]
    return A.sum()


def test_row_updates_of_a_matrix():
    cf = _same_as_eager(row_updates, lambda r: r.random((8, 8)))
    assert "impl_index_update" not in _sources(cf)


def shift(A):
    A[1:] = A[:-1]  # the right-hand side overlaps the written slice: NumPy reads it as if copied first
    A[::-2] = A[::2] * 2.0
    return A


def test_overlapping_read_and_write_of_one_array():
    _same_as_eager(shift, lambda r: r.random(9))


def returns_its_argument(A):
    A[0] = 7.0
    return A


def test_the_result_is_the_callers_array_as_in_eager_code():
    cf = gl.compile(returns_its_argument)
    for _ in range(2):
        A = np.arange(4.0)
        assert cf(A) is A
        np.testing.assert_array_equal(A, [7.0, 1.0, 2.0, 3.0])


def fresh_then_written(x):
    y = x * 2.0
    y[1:3] = 0.0
    z = np.abs(x)  # (np.zeros_like(x) would be folded into a constant, which is never written)
    z[::2] += y[::2]
    return y, z


def test_fresh_arrays_written_in_place():
    cf = _same_as_eager(fresh_then_written, lambda r: r.random(7))
    assert "impl_index_update" not in _sources(cf)


def test_an_argument_not_written_back_is_never_written():
    def f(x):
        y = x.copy()
        y[0] = 1.0
        return y
    x = np.arange(3.0)
    for _ in range(2):
        y = gl.compile(f)(x)
        np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])
        np.testing.assert_array_equal(y, [1.0, 1.0, 2.0])


def index_array_from_the_data(A, idx):
    A[idx] = A[idx[::-1]] + 1.0
    return A[idx]


def test_index_arrays():
    _same_as_eager(index_array_from_the_data, lambda r: r.random(6), lambda r: np.array([4, 1, 2]))


def _graph_reading_the_old_value():
    b = GraphBuilder("old")
    x = b.input("x", (4,))
    y = b.mul(x, 2.0)
    z = b.index_update(y, (slice(1, 3),), b.const(0.0))
    return b.output(z, b.add(y, 1.0))  # y, the old value, is read after the update


def test_an_old_value_read_later_keeps_its_copy():
    g = _graph_reading_the_old_value()
    assert in_place_updates(g) == {}
    x = np.arange(4.0)
    got = compile_captured(g, backend="codegen")(x)
    np.testing.assert_array_equal(got[0], [0.0, 0.0, 0.0, 6.0])
    np.testing.assert_array_equal(got[1], [1.0, 3.0, 5.0, 7.0])


def test_a_donated_input_is_written_only_by_the_chain_to_its_final_value():
    b = GraphBuilder("donated")
    x = b.input("x", (4,))
    first = b.index_update(x, (0,), b.const(1.0))  # on the chain: written into x's array
    side = b.index_update(first, (1,), b.const(2.0))  # another value made from it: never in x's array
    final = b.index_update(first, (2,), b.const(3.0))
    g = b.output(final, side)
    decided = in_place_updates(g, {"x": 0})
    chain = [n for n in g.nodes if n.op == Op.INDEX_UPDATE]
    assert id(chain[0]) in decided and id(chain[1]) not in decided and id(chain[2]) in decided
    x_value = g.input_nodes[0].outputs[0]
    assert all(base is not x_value for base in in_place_updates(g).values())  # not donated: x is the caller's


@pytest.mark.parametrize("backend", ["codegen", "fused"])
def test_large_arrays_with_buffer_reuse(backend):
    def f(A):
        t = (A * 3.0 - 1.0) * 2.0  # (arithmetic only: fused kernels give NumPy's bits for it)
        t[:, 1:] += A[:, :-1] * A[:, :-1]
        A[1:, :] = t[:-1, :] - 1.0
        return t.sum()
    cf = gl.compile(f, backend=backend)
    for seed in (0, 1):
        A = np.random.default_rng(seed).random((300, 300))
        E = A.copy()
        assert cf(A) == f(E)
        np.testing.assert_array_equal(A, E)


def momentum_step(p, g, v):
    v *= 0.9
    v -= 0.01 * g
    p += v
    return (p * v).sum()


@pytest.mark.parametrize("backend", ["codegen", "auto"])
def test_a_written_back_value_is_computed_in_the_callers_array(backend):
    cf = gl.compile(momentum_step, backend=backend)
    for seed in (0, 1, 2):
        rng = np.random.default_rng(seed)
        args = [rng.random((200, 200)) for _ in range(3)]
        eager = [a.copy() for a in args]
        assert cf(*args) == momentum_step(*eager)
        for a, e in zip(args, eager):
            np.testing.assert_array_equal(a, e, strict=True)
    if backend == "codegen":  # p and v take their final values (auto: one kernel computes all three)
        assert "out=v0" in _sources(cf) and "out=v2" in _sources(cf)


def transposed_final_value(x):
    x[...] = (x.T * 2.0 + 1.0)  # the old x is read through a transposed view by the line that makes the final x
    return x.sum()


def test_a_final_value_that_reads_the_old_array_through_a_view():
    _same_as_eager(transposed_final_value, lambda r: r.random((120, 120)))
