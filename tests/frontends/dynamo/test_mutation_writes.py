"""compile() records writes into arrays the function did not create and writes them back (functionalization).

Each function below writes into an argument (or an attribute, a global, a closure cell, an item of a list or
dict argument) in one of NumPy's write forms. Compiled, it must be one graph with no break, and over several
calls with other data give exactly what eager NumPy gives: results, the final contents of every argument, and
of the views of the arguments that the caller holds."""

import numpy as np
import pytest

import graph_lab as gl


def graphs_and_breaks(cf) -> tuple[int, int]:
    segments = [e.segment for e in cf.last_events]
    return len(segments), sum(1 for s in segments if s.end == "break")


def _copy(x):
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (list, tuple)):
        return type(x)(_copy(v) for v in x)
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    return x


def _arrays(x):
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, (list, tuple)):
        return [a for v in x for a in _arrays(v)]
    if isinstance(x, dict):
        return [a for v in x.values() for a in _arrays(v)]
    return []


def _views(a: np.ndarray) -> list:
    """Views a caller may hold of an argument: they must show the writes as eager's do."""
    if a.ndim == 0:
        return [a[...]]
    return [a[...], a[::-1], a.T, a[1:] if a.shape[0] > 1 else a[:]]


def check(fn, make_args, calls=3, one_graph=True, backend="auto"):
    """Eager and compiled on the same data, ``calls`` times; returns the compiled function."""
    cf = gl.compile(fn, backend=backend)
    rng = np.random.default_rng(0)
    for i in range(calls):
        args = make_args(rng)
        eager_args, compiled_args = _copy(args), _copy(args)
        assert not any(a is b for a, b in zip(_arrays(eager_args), _arrays(compiled_args)))
        eager_views = [_views(a) for a in _arrays(eager_args)]
        compiled_views = [_views(a) for a in _arrays(compiled_args)]
        expected = fn(*eager_args)
        got = cf(*compiled_args)
        if i == 0 and one_graph:
            assert graphs_and_breaks(cf) == (1, 0), gl.explain(fn)(*_copy(args))
        for e, g in zip(_arrays(expected) + _arrays(eager_args), _arrays(got) + _arrays(compiled_args)):
            np.testing.assert_array_equal(g, e, strict=True)
        for e_list, g_list in zip(eager_views, compiled_views):
            for e, g in zip(e_list, g_list):
                np.testing.assert_array_equal(g, e, strict=True)
        for e, g in zip(_arrays(expected), _arrays(got)):  # a result that is an argument is that argument
            assert any(g is a for a in _arrays(compiled_args)) == any(e is a for a in _arrays(eager_args))
    return cf


def mat(*shape):
    return lambda rng: (rng.standard_normal(shape),)


# --- the patterns of the issue

def gemm(C, A, B, alpha, beta):
    C[:] = alpha * A @ B + beta * C


def stencil(A, B, T):
    for t in range(1, T):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def lu(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            A[i, j] -= A[i, :i] @ A[:i, j]


def cholesky(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[j, :j]
            A[i, j] /= A[j, j]
        A[i, i] -= A[i, :i] @ A[i, :i]
        A[i, i] = np.sqrt(A[i, i])
    return A


def spd(rng, n=5):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


@pytest.mark.parametrize("fn, make", [
    (gemm, lambda rng: (rng.standard_normal((3, 3)), rng.standard_normal((3, 4)), rng.standard_normal((4, 3)),
                        1.5, 1.2)),
    (stencil, lambda rng: (rng.standard_normal(10), rng.standard_normal(10), 6)),
    (lu, lambda rng: (spd(rng),)),
    (cholesky, lambda rng: (spd(rng),)),
], ids=["gemm", "stencil", "lu", "cholesky"])
@pytest.mark.parametrize("backend", ["interpret", "codegen", "auto"])
def test_issue_patterns_are_one_graph(fn, make, backend):
    check(fn, make, backend=backend)


# --- every write form, into an argument

AUGMENTED = ["+", "-", "*", "/", "//", "%", "**"]


def _augmented(text: str):
    """A function whose body is ``text`` with ``OP`` replaced by an augmented operator (the test's own text)."""
    def make(symbol):
        namespace = {"np": np}
        exec(text.replace("OP", symbol + "="), namespace)
        return namespace["f"]
    return make


_item_write = _augmented("""
def f(x, v):
    y = x[1:3]
    y OP v
    x[0] OP 2.0
    x[2, 1] OP v[0]
    return x.sum()
""")
_bool_write = _augmented("""
def f(m, a, b):
    m[1] OP a[1] > b[1]
    m OP a > b
""")


@pytest.mark.parametrize("symbol", AUGMENTED)
def test_augmented_item_write(symbol):
    check(_item_write(symbol), lambda rng: (rng.random((4, 3)) + 1.0, rng.random(3) + 0.5))


@pytest.mark.parametrize("symbol", ["&", "|", "^"])
def test_augmented_boolean_write(symbol):
    check(_bool_write(symbol), lambda rng: (rng.random((3, 4)) > 0.5, rng.random((3, 4)), rng.random((3, 4))))


def whole_add(x, v):
    x += v


def item_set(x, v):
    x[1] = v


def item_add(x, v):
    x[1, 2] += v[0]


def ellipsis_set(x, v):
    x[...] = v * 2.0


def none_index(x, v):
    x[None, 0] = v


def transposed(x, v):
    x.T[0] = 2.0 * x[:, 1]


def transpose_view(x, v):
    y = np.transpose(x)
    y[1:, 0] -= 1.0


def reshape_split(x, v):
    r = x.reshape(2, 2, 3)
    r[1, 0] = v


def full_slice(x, v):
    x[:] = 0.5


def copyto(x, v):
    np.copyto(x, v * 3.0)


def fill(x, v):
    x.fill(7.0)


def ufunc_out(x, v):
    np.add(x, v, out=x)
    np.multiply(x, 2.0, out=x)


def reduction_out(x, v):
    np.sum(x, axis=0, out=v)


def chain_of_views(x, v):
    a = x[1:]
    b = a[:, ::2]
    b[0] = v[:2]
    return a


@pytest.mark.parametrize("fn", [whole_add, item_set, item_add, ellipsis_set, none_index, transposed, transpose_view,
                                reshape_split, full_slice, copyto, fill, ufunc_out, reduction_out, chain_of_views])
def test_write_form_into_an_argument(fn):
    check(fn, lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal(3)))


# --- every kind of array the function did not create

class Holder:
    def __init__(self, a):
        self.a = a

    def step(self, v):
        self.a[0] += v
        return self.a[0] * 2.0


def test_attribute_of_an_object():
    def f(h, v):
        return h.step(v)
    cf = gl.compile(f)
    rng = np.random.default_rng(0)
    for _ in range(3):
        a, v = rng.standard_normal((2, 3)), rng.standard_normal(3)
        eager, compiled = Holder(a.copy()), Holder(a.copy())
        view = compiled.a[0]
        np.testing.assert_array_equal(cf(compiled, v), f(eager, v), strict=True)
        np.testing.assert_array_equal(compiled.a, eager.a, strict=True)
        np.testing.assert_array_equal(view, eager.a[0], strict=True)
    assert graphs_and_breaks(cf) == (1, 0)


STATE = np.zeros(3)


def global_write(v):
    STATE[1:] += v[1:]
    return STATE.sum()


def test_global_array():
    STATE[...] = 0.0
    eager_state = STATE.copy()
    cf = gl.compile(global_write)
    rng = np.random.default_rng(0)
    for _ in range(3):
        v = rng.standard_normal(3)
        expected = eager_state[1:].sum() + v[1:].sum()
        eager_state[1:] += v[1:]
        got = cf(v)
        np.testing.assert_array_equal(STATE, eager_state, strict=True)
        assert got == eager_state.sum() or np.isclose(got, expected)
    assert graphs_and_breaks(cf) == (1, 0)


def test_closure_array():
    cell = np.ones(4)

    def f(v):
        cell[::2] = v
        return cell * 2.0
    cf = gl.compile(f)
    np.testing.assert_array_equal(cf(np.array([3.0, 4.0])), [6.0, 2.0, 8.0, 2.0])
    np.testing.assert_array_equal(cell, [3.0, 1.0, 4.0, 1.0])
    assert graphs_and_breaks(cf) == (1, 0)
    np.testing.assert_array_equal(cf(np.array([5.0, 6.0])), [10.0, 2.0, 12.0, 2.0])


def list_items(xs, v):
    for x in xs:
        x[0] = v
    return xs[1] + 1.0


def dict_items(d, v):
    d["a"][1] *= v
    d["b"] += d["a"]


def test_items_of_a_list_and_a_dict():
    check(list_items, lambda rng: ([rng.standard_normal(3) for _ in range(3)], 2.5))
    check(dict_items, lambda rng: ({"a": rng.standard_normal((2, 2)), "b": rng.standard_normal((2, 2))}, 1.5))


# --- aliasing arguments

def two_args(x, y):
    x[0] = 1.0
    return y * 2.0


def test_same_array_twice_and_two_arrays():
    cf = gl.compile(two_args)
    rng = np.random.default_rng(0)
    for same in (False, True, False, True):
        a, b = rng.standard_normal(3), rng.standard_normal(3)
        ea, ca = a.copy(), a.copy()
        eb, cb = (ea, ca) if same else (b.copy(), b.copy())
        np.testing.assert_array_equal(cf(ca, cb), two_args(ea, eb), strict=True)
        np.testing.assert_array_equal(ca, ea, strict=True)
        np.testing.assert_array_equal(cb, eb, strict=True)


def test_overlapping_slices_of_one_array():
    def shift(dst, src):
        dst[:] = src * 2.0
        return src.sum()
    cf = gl.compile(shift)
    rng = np.random.default_rng(0)
    for overlap in (True, False, True):
        base = rng.standard_normal(6)
        e, c = base.copy(), base.copy()
        if overlap:
            expected, got = shift(e[1:], e[:-1]), cf(c[1:], c[:-1])
        else:
            expected, got = shift(e[:3], e[3:]), cf(c[:3], c[3:])
        assert got == expected
        np.testing.assert_array_equal(c, e, strict=True)


def test_read_only_argument_raises_as_in_eager():
    x = np.ones(3)
    x.setflags(write=False)
    cf = gl.compile(item_set)
    cf(np.ones((3, 3)), np.zeros(3))
    with pytest.raises(ValueError):
        item_set(x, 2.0)
    with pytest.raises(ValueError):
        cf(x, 2.0)


# --- views with and without a break between the view and the write

def view_then_break(x, v):
    row = x[1]
    print("between")
    row += v
    return x


def fresh_view_then_break(v):
    y = np.ones((3, 3))
    row = y[1]
    print("between")
    row += v
    return y


def test_views_across_a_break(capsys):
    check(view_then_break, lambda rng: (rng.standard_normal((3, 3)), rng.standard_normal(3)), one_graph=False)
    check(fresh_view_then_break, lambda rng: (rng.standard_normal(3),), one_graph=False)


def view_then_write(x, v):
    row = x[1]
    row += v
    return row


def test_view_of_an_argument_written_and_returned():
    check(view_then_write, lambda rng: (rng.standard_normal((3, 3)), rng.standard_normal(3)))


# --- the key/value cache of a decoder, one token per call

class Attention:
    def __init__(self, rng, d, max_len):
        self.wq, self.wk, self.wv = (rng.standard_normal((d, d)) / d for _ in range(3))
        self.cache_k = np.zeros((1, max_len, d))
        self.cache_v = np.zeros((1, max_len, d))

    def __call__(self, x, pos):
        B, L, _ = x.shape
        xq, xk, xv = x @ self.wq, x @ self.wk, x @ self.wv
        self.cache_k[:B, pos:pos + L] = xk
        self.cache_v[:B, pos:pos + L] = xv
        keys = self.cache_k[:B, :pos + L]
        values = self.cache_v[:B, :pos + L]
        scores = xq @ keys.transpose(0, 2, 1) / np.sqrt(x.shape[-1])
        scores = scores - scores.max(axis=-1, keepdims=True)
        w = np.exp(scores)
        w = w / w.sum(axis=-1, keepdims=True)
        return w @ values


def decode(model, step, emb, prompt, n):
    tokens = list(prompt)
    x = emb[np.array(tokens)][None]
    out = step(x, 0)
    pos = len(tokens)
    for _ in range(n):
        tokens.append(int(np.argmax(out[0, -1] @ emb.T)))
        out = step(emb[np.array(tokens[-1:])][None], pos)
        pos += 1
    return tokens


def test_kv_cache_decoded_token_by_token():
    rng = np.random.default_rng(3)
    emb = rng.standard_normal((11, 8))
    eager = Attention(np.random.default_rng(5), 8, 16)
    compiled = Attention(np.random.default_rng(5), 8, 16)
    cf = gl.compile(compiled.__call__.__func__)
    calls = []

    def step(x, pos):
        out = cf(compiled, x, pos)
        calls.append(graphs_and_breaks(cf))
        return out
    expected = decode(eager, eager, emb, [1, 2, 3], 6)
    got = decode(compiled, step, emb, [1, 2, 3], 6)
    assert got == expected
    np.testing.assert_array_equal(compiled.cache_k, eager.cache_k, strict=True)
    np.testing.assert_array_equal(compiled.cache_v, eager.cache_v, strict=True)
    assert all(c == (1, 0) for c in calls), calls  # the cache writes are inside the graph


# --- outputs and kept buffers

def test_a_kept_buffer_never_aliases_a_later_output():
    def f(x):
        h = np.tanh(x) * 2.0
        g = h + 1.0
        return g * g, h
    cf = gl.compile(f, backend="codegen")
    x = np.random.default_rng(0).standard_normal((256, 256))
    first = cf(x)
    kept = [a.copy() for a in first]
    second = cf(x + 1.0)
    for a, b in zip(first, second):
        assert not np.shares_memory(a, b)
    for a, k in zip(first, kept):
        np.testing.assert_array_equal(a, k)
