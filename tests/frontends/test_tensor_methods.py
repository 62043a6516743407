"""ndarray methods and attributes on stand-in tensors: each one the op table or the library registry covers works
in every frontend (trace, LazyRunner, script, compile) and gives eager NumPy's result bit for bit; an unsupported
one is a TraceError naming it in full (numpy.ndarray.<name>) and the user's line, never a raw AttributeError; and
x.sort(), an in-place sort, is refused with what to write instead."""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab as gl
from graph_lab import LazyRunner, TraceError, run, script, trace

RNG = np.random.default_rng(23)
X = RNG.standard_normal((3, 4))
Z = X + 1j * RNG.standard_normal((3, 4))
I = RNG.integers(-20, 20, (3, 4))


def m_cumsum(x): return x.cumsum(axis=1)
def m_cumsum_flat(x): return x.cumsum()
def m_cumprod(x): return x.cumprod(axis=0)
def m_argsort(x): return x.argsort(axis=-1)
def m_round(x): return x.round(1)
def m_conj(z): return z.conj()
def m_conjugate(z): return z.conjugate()
def m_real(z): return z.real
def m_imag(z): return z.imag
def m_dot(x): return x.dot(x.T)
def m_take(x): return x.take([3, 0], axis=1)
def m_diagonal(x): return x.diagonal(1) * 1.0
def m_trace(x): return x.trace()
def m_clip(x): return x.clip(-0.5, 0.5)
def m_mT(x): return x.mT * 1.0
def m_sizes(x): return x * (x.itemsize + x.nbytes)
def m_invert(i): return ~i
def m_bits(i): return (i & 7) | (i >> 1) ^ (3 << i % 4)


CASES = [
    (m_cumsum, X), (m_cumsum_flat, I), (m_cumprod, X), (m_argsort, X), (m_round, X), (m_conj, Z),
    (m_conjugate, Z), (m_real, Z), (m_imag, Z), (m_dot, X), (m_take, X), (m_diagonal, X), (m_trace, X),
    (m_clip, X), (m_mT, X), (m_sizes, X), (m_invert, I), (m_bits, I),
]
IDS = [fn.__name__[2:] for fn, _ in CASES]


def assert_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want, strict=True)


def the_name(fn) -> str:
    return fn.__code__.co_varnames[0]


@pytest.mark.parametrize("fn, x", CASES, ids=IDS)
def test_trace(fn, x):
    g = trace(fn, {the_name(fn): (x.shape, x.dtype)})
    assert_bits(run(g, {the_name(fn): x})[0], fn(x))


@pytest.mark.parametrize("fn, x", CASES, ids=IDS)
def test_lazy_runner(fn, x):
    lr = LazyRunner()
    assert_bits(lr.materialize(fn(lr.tensor(x))), fn(x))


@pytest.mark.parametrize("fn, x", CASES, ids=IDS)
def test_script(fn, x):
    g = script(fn, {the_name(fn): (x.shape, x.dtype)})
    assert_bits(run(g, {the_name(fn): x})[0], fn(x))


@pytest.mark.parametrize("fn, x", CASES, ids=IDS)
def test_compile(fn, x):
    got = gl.compile(fn)(x)
    assert_bits(got, fn(x))
    report = gl.explain(fn)(x)
    assert not report.breaks, str(report)
    if fn in (m_real, m_imag):  # a view of the input, as NumPy returns it: rebuilt from the input, no graph
        assert np.shares_memory(got, x) and len(report.graphs) == 0
    else:
        assert len(report.graphs) == 1


def m_nonzero(x):
    return x.nonzero()


def test_an_unsupported_method_is_a_trace_error_naming_it_and_the_line():
    with pytest.raises(TraceError, match=r"numpy\.ndarray\.nonzero \(x\.nonzero\) is not in graph_lab's op table or "
                                         r"the registry of pure NumPy functions") as info:
        trace(m_nonzero, {"x": (3, 4)})
    assert "test_tensor_methods.py" in str(info.value) and "return x.nonzero()" in str(info.value)


def test_an_unsupported_attribute_is_also_an_attribute_error():
    # hasattr and getattr with a default keep working as Python's do on a missing attribute
    def fn(x):
        return x * 2.0 if getattr(x, "ptp", None) is None and not hasattr(x, "nonzero") else x
    g = trace(fn, {"x": (3,)})
    assert_bits(run(g, {"x": X[0, :3]})[0], X[0, :3] * 2.0)
    with pytest.raises(AttributeError, match="no attribute 'not_an_ndarray_attribute'"):
        trace(lambda x: x.not_an_ndarray_attribute, {"x": (3,)})


def test_compile_breaks_on_an_unsupported_method_and_runs_it_eagerly():
    x = X.copy()
    got = gl.compile(m_nonzero)(x)
    for a, b in zip(got, m_nonzero(x)):
        assert_bits(a, b)
    report = gl.explain(m_nonzero)(x)
    assert report.breaks and "numpy.ndarray.nonzero" in report.breaks[0].reason


def m_sort(x):
    x.sort()
    return x


def test_in_place_sort_is_refused_with_what_to_write():
    with pytest.raises(TraceError, match=r"x\.sort\(\) sorts the array in place.*np\.sort\(x\)"):
        trace(m_sort, {"x": (4,)})


def test_compile_runs_an_in_place_sort_eagerly_and_keeps_the_write():
    x = RNG.standard_normal(5)
    expected = np.sort(x)
    out = gl.compile(m_sort)(x)
    assert_bits(out, expected)
    assert_bits(x, expected)  # the caller's array was sorted, as eager NumPy sorts it
