"""Silently wrong results of compile() around in-place writes, each reduced from a real kernel and kept here.

Every test runs the function eagerly and compiled on the same fresh data, several calls in a row, and compares
everything the caller can see (the results, and the arguments the function wrote into) bit for bit."""

import numpy as np
import pytest

import graph_lab as gl
from graph_lab.backends.compiled import compile_graph
from graph_lab.ir.builder import GraphBuilder

BACKENDS = ["interpret", "codegen", "auto"]


def _fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def same_as_eager(fn, calls, backend="auto"):
    """Call ``fn`` eagerly and compiled on each argument list of ``calls``; results and arguments must agree."""
    cf = gl.compile(fn, backend=backend)
    for args in calls:
        eager_args, compiled_args = _fresh(args), _fresh(args)
        expected = _as_tuple(fn(*eager_args))
        got = _as_tuple(cf(*compiled_args))
        assert len(got) == len(expected)
        for e, g in zip(expected, got):
            assert type(g) is type(e)
            np.testing.assert_array_equal(g, e, strict=True)
        for e, g in zip(eager_args, compiled_args):
            if isinstance(e, np.ndarray):
                np.testing.assert_array_equal(g, e, strict=True)
        for i in range(len(got)):  # two results are two arrays, as in eager code
            for j in range(i):
                if isinstance(got[i], np.ndarray) and isinstance(got[j], np.ndarray):
                    assert np.shares_memory(got[i], got[j]) == np.shares_memory(expected[i], expected[j])
    return cf


def two_fresh_arrays(A, b):
    x = np.zeros_like(b)
    y = np.zeros_like(b)
    A[0, 0] = 1.0
    y[0] = b[0]
    return x, y


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_fresh_arrays_stay_two_arrays(backend):
    calls = [(np.zeros((2, 2)), np.array([3.0 + i, 4.0])) for i in range(3)]
    same_as_eager(two_fresh_arrays, calls, backend)


def view_of_fresh(r):
    U = np.zeros((4, 4))
    u = U[1:-1, 1:-1]
    u += r
    return U


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_of_a_fresh_array_keeps_its_base(backend):
    same_as_eager(view_of_fresh, [(np.full((2, 2), i + 1.0),) for i in range(3)], backend)


def view_of_fresh_in_a_loop(r, n):
    U = np.zeros((5, 5))
    for _ in range(n):
        u = U[1:-1, 1:-1]
        u += r
    return U


def test_view_of_a_fresh_array_in_a_loop():
    rng = np.random.default_rng(1)
    same_as_eager(view_of_fresh_in_a_loop, [(rng.random((3, 3)), 4) for _ in range(3)])


def tiles_of_one_array(x, y, L):
    dx = np.tile(x, (3, 1))
    dy = np.tile(y, (3, 1))
    dx[dx > L / 2] = dx[dx > L / 2] - L
    dy[dy > L / 2] = dy[dy > L / 2] - L
    return dx, dy


def test_tiles_of_the_same_array_are_two_arrays():
    rng = np.random.default_rng(2)
    calls = []
    for _ in range(3):
        x = rng.random(5) * 3
        calls.append((x, x, 3.0))
    same_as_eager(tiles_of_one_array, calls)


def ndindex_loop(a, b):
    result = np.ones(a.shape, dtype=bool)
    for pos in np.ndindex(a.shape):
        result[pos] &= a[pos] > b[pos]
    return result


def test_ndindex_loop_with_augmented_writes():
    rng = np.random.default_rng(3)
    same_as_eager(ndindex_loop, [(rng.random((2, 3)), rng.random((2, 3))) for _ in range(3)])


def reaction_diffusion(U, V, n):
    for _ in range(n):
        u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
        lu = U[:-2, 1:-1] + U[2:, 1:-1] + U[1:-1, :-2] + U[1:-1, 2:] - 4 * u
        lv = V[:-2, 1:-1] + V[2:, 1:-1] + V[1:-1, :-2] + V[1:-1, 2:] - 4 * v
        uvv = u * v * v
        u += 0.16 * lu - uvv + 0.035 * (1 - u)
        v += 0.08 * lv + uvv - 0.1 * v
    return U, V


def test_reaction_diffusion_on_arguments():
    rng = np.random.default_rng(4)
    same_as_eager(reaction_diffusion, [(rng.random((6, 6)), rng.random((6, 6)), 40) for _ in range(3)])


def reaction_diffusion_fresh(r):
    U = np.zeros((6, 6))
    V = np.ones((6, 6))
    for _ in range(40):
        u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
        u += r * v
        v -= 0.5 * u
    return U, V


def test_reaction_diffusion_on_fresh_arrays():
    rng = np.random.default_rng(5)
    same_as_eager(reaction_diffusion_fresh, [(rng.random((4, 4)),) for _ in range(3)])


# --- the passes keep a graph's outputs apart, for compile_graph as for compile()

def _outputs_of(build, backend):
    b = GraphBuilder("g")
    x = b.input("x", (4,))
    b.output(*build(b, x))
    compiled = compile_graph(b.graph, backend=backend)
    x_value = np.arange(4.0)
    return x_value, compiled(x_value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cse_does_not_merge_two_outputs_into_one_array(backend):
    x, (a, c) = _outputs_of(lambda b, x: (b.zeros_like(x), b.zeros_like(x)), backend)
    assert not np.shares_memory(a, c)


@pytest.mark.parametrize("backend", BACKENDS)
def test_simplify_does_not_return_a_view_of_an_input(backend):
    x, (y,) = _outputs_of(lambda b, x: (b.mul(b.reshape(x, (4, 1)), 1),), backend)
    assert not np.shares_memory(y, x)
    y[...] = -1.0
    np.testing.assert_array_equal(x, np.arange(4.0))


def test_a_folded_output_is_new_memory_on_every_call():
    def f(x):
        return np.zeros_like(x)
    cf = gl.compile(f)
    first = cf(np.ones(3))
    first[0] = 5.0
    np.testing.assert_array_equal(cf(np.ones(3)), np.zeros(3))


# --- the pieces of np.split / np.array_split are views (found by the fuzzer's mutation programs)

def write_into_split_piece(x):
    first, middle, last = np.array_split(x, 3, axis=-1)
    middle[last > 0] = last[last > 0]
    first *= 0.5
    return middle


def write_into_split_of_a_copy(x):
    y = x.copy()
    left, right = np.split(y, [1], axis=1)
    right += 10.0
    return y


@pytest.mark.parametrize("fn, shape", [(write_into_split_piece, (4,)), (write_into_split_piece, (2, 7)),
                                       (write_into_split_of_a_copy, (3, 3))])
def test_a_write_into_a_split_piece_reaches_the_array_it_was_split_from(fn, shape):
    cf = gl.compile(fn)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.standard_normal(shape)
        e, c = x.copy(), x.copy()
        np.testing.assert_array_equal(cf(c), fn(e), strict=True)
        np.testing.assert_array_equal(c, e, strict=True)
    g = gl.trace(write_into_split_of_a_copy, {"x": (3, 3)})
    x = rng.standard_normal((3, 3))
    np.testing.assert_array_equal(gl.run(g, {"x": x})[0], write_into_split_of_a_copy(x), strict=True)


def _write_through_conj(x):
    h = x.conj()  # a real array's conj() is the array itself, so the write below is a write into x
    h[0] = -3.0
    return x * 2.0


def test_write_through_the_method_conj_of_a_real_array_reaches_the_argument():
    a, b = np.arange(4.0), np.arange(4.0)
    expected = _write_through_conj(a)
    got = gl.compile(_write_through_conj)(b)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(b, a)
    with pytest.raises(gl.TraceError, match="in-place write into the input"):
        gl.trace(_write_through_conj, {"x": (4,)})
    z = np.arange(3.0) + 1j
    assert gl.trace(lambda x: x.conj(), {"x": ((3,), "complex128")}).nodes[-1].op == "conj"
    np.testing.assert_array_equal(gl.compile(lambda x: x.conj())(z), z.conj())


def view_of_a_numpy_scalar(x0):
    """Fuzzer seed 20262156: for a 0-d x0, x0 - -0.75 is a NumPy scalar in eager code, so expand_dims of it is
    a new array and the write does not reach h1 (a stand-in had made it a view of h1)."""
    h1 = x0 - -0.75
    h2 = np.expand_dims(h1, -1)
    h2 *= 0.5
    r = h1.sum()[...]
    r += 1.0  # (a reduction's result is a scalar too)
    return h1, h2, r


def view_of_a_0d_array(x0):
    h1 = x0.copy()  # a 0-d array, not a scalar: its views see the write
    h2 = np.expand_dims(h1, -1)
    h2 *= 0.5
    return h1


@pytest.mark.parametrize("fn", [view_of_a_numpy_scalar, view_of_a_0d_array])
def test_views_of_0d_values_alias_as_in_numpy(fn):
    x = np.array(-1.25, dtype=np.float32)
    expected = fn(x.copy())
    for got in (gl.compile(fn)(x.copy()), gl.run(gl.trace(fn, {"x0": ((), np.float32)}), {"x0": x.copy()})):
        got = got if isinstance(got, (tuple, list)) else (got,)
        expected_t = expected if isinstance(expected, tuple) else (expected,)
        for g, e in zip(got, expected_t):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
