"""The ops added for real NumPy programs, beyond their op samples (tests/support/opinfo_coverage.py, which run on every
backend, with symbolic sizes and through print -> parse): compile() keeps them in one graph, the size constructors
take symbolic sizes, bitwise operators mix integer arrays with Python ints, complex code with 1j literals, and the
refusals name what they refuse."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import graph_lab as gl
from graph_lab import F, Op, TraceError, check_guards, parse, run, trace
from tests.support.opinfo import SAMPLES  # noqa: F401  (opinfo first: it builds the table opinfo_coverage adds to)
from tests.support.opinfo_coverage import FOLDED_WHEN_STATIC

RNG = np.random.default_rng(31)


def assert_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want, strict=True)


def one_graph(fn, *args):
    """compile(fn)(*args) equals fn(*args) bit for bit, in one graph without a break."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to eager would warn
        got = gl.compile(fn)(*args)
    want = fn(*args)
    for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert_bits(a, b)
    report = gl.explain(fn)(*args)
    assert len(report.graphs) == 1 and not report.breaks, str(report)


def signal_stats(x, w):
    angle = np.arctan2(x[1:], x[:-1])
    ok = ~np.isnan(angle) & np.isfinite(x[1:])
    running = np.cumsum(np.where(ok, angle, 0.0))
    order = np.argsort(running, kind="stable")
    return (np.round(np.take(running, order), 3), np.diff(np.sort(x)), np.roll(x, 2), np.logaddexp(x, w).sum(),
            np.dot(x, w), np.histogram(x, bins=4)[0], np.cov(np.stack([x, w])), np.add.outer(x[:3], w[:2]))


def crc_step(c):
    for _ in range(8):
        c = np.where(c & 1, (c >> 1) ^ 0xEDB88320, c >> 1)
    return c ^ 0xFFFFFFFF


def complex_code(x):
    z = np.exp(1j * x) * (2.0 + 0.5j)
    return z.real, z.imag, np.conj(z) * z, np.angle(z), np.abs(z)


@pytest.mark.parametrize("fn, args", [
    (signal_stats, (RNG.standard_normal(9), RNG.standard_normal(9))),
    (crc_step, (RNG.integers(0, 2**32, 16).astype(np.uint32),)),
    (complex_code, (RNG.standard_normal(5),)),
], ids=["signal-stats", "crc-step-uint32", "complex-1j"])
def test_programs_using_the_new_ops_are_one_graph_under_compile(fn, args):
    one_graph(fn, *args)


def test_ufunc_outer_is_not_called_a_side_effect():
    def fn(a, b):
        return np.subtract.outer(a, b) ** 2, np.maximum.accumulate(a), np.multiply.reduce(b)
    one_graph(fn, RNG.standard_normal(4), RNG.standard_normal(3))


def test_ufunc_at_is_an_accumulating_update_under_compile():
    def fn(x):
        y = x * 1.0
        np.add.at(y, [0, 0], 1.0)  # unbuffered: a repeated index adds twice
        return y
    x = np.zeros(3)
    assert_bits(gl.compile(fn)(x), fn(x))
    report = gl.explain(fn)(x)
    assert not report.breaks and report.graph_count == 1


@pytest.mark.parametrize("spelling", ["np", "F"])
def test_size_constructors_take_symbolic_sizes(spelling):
    api = np if spelling == "np" else F

    def fn(x):
        n = x.shape[0]
        causal = api.tri(n, dtype=bool)
        return np.where(causal, x, -np.inf) + api.eye(n) + api.arange(n) * api.linspace(0.0, 1.0, n)

    if spelling == "F":  # trace sees F's calls; np.tri(n) of a symbolic n is NumPy's own call there
        g = trace(fn, {"x": (("n", "n"), np.float64)})
        assert {Op.TRI, Op.EYE, Op.ARANGE, Op.LINSPACE} <= {node.op for node in g.nodes}
        assert str(parse(str(g))) == str(g)
        for n in (2, 5, 8):
            x = RNG.standard_normal((n, n))
            assert check_guards(g, {"x": x})
            assert_bits(run(g, {"x": x})[0], fn(x))
    compiled = gl.compile(fn)
    for n in (3, 4, 5, 6, 7):
        x = RNG.standard_normal((n, n))
        assert_bits(compiled(x), fn(x))
    assert compiled.captures <= 2  # the first size, then one symbolic graph for every size after


def test_arange_with_a_step_and_an_empty_range():
    g = trace(lambda x: F.arange(1, x.shape[0], 3) * 1.0, {"x": (("n",), np.float64)}, example={"x": np.ones(7)})
    for n in (7, 8, 10):
        assert_bits(run(g, {"x": np.ones(n)})[0], np.arange(1, n, 3) * 1.0)


def test_constructors_fold_to_constants_with_static_sizes():
    g = trace(lambda x: x + F.arange(x.shape[0]) + F.eye(3)[0], {"x": (3,)})
    assert not FOLDED_WHEN_STATIC & {node.op for node in g.nodes}


@pytest.mark.parametrize("fn, x", [
    (lambda i: (i & 0x0F) | (i << 2), np.arange(-5, 5, dtype=np.int64)),
    (lambda i: 255 ^ i, np.arange(6, dtype=np.uint8)),
    (lambda i: ~i >> 1, np.arange(6, dtype=np.int32)),
    (lambda i: 1 << i, np.arange(6, dtype=np.int64)),
    (lambda b: ~b & (b | True), np.array([True, False, True])),
], ids=["and-or-shift", "int-xor-uint8", "invert-shift-i32", "int-shifted-by-array", "bools-stay-logical"])
def test_bitwise_operators_with_python_ints(fn, x):
    g = trace(fn, {"i" if fn.__code__.co_varnames[0] == "i" else "b": (x.shape, x.dtype)})
    assert_bits(run(g, {g.input_names[0]: x})[0], fn(x))
    if x.dtype == np.bool_:
        assert not {"bitwise_and", "bitwise_or", "invert"} & {str(n.op) for n in g.nodes}
    lr = gl.LazyRunner()
    assert_bits(lr.materialize(fn(lr.tensor(x))), fn(x))


def test_in_place_bitwise_operators():
    def fn(i):
        i = i.copy()
        i &= 6
        i |= 1
        i ^= 3
        i <<= 2
        i >>= 1
        return i
    x = np.arange(8)
    g = trace(fn, {"i": ((8,), np.int64)})
    assert_bits(run(g, {"i": x})[0], fn(x))


def test_bitwise_on_floats_is_refused_as_numpy_refuses_it():
    with pytest.raises(TypeError):
        np.ones(2) & 1
    with pytest.raises(TraceError, match="bitwise_and: NumPy does not take these operand types"):
        trace(lambda x: x & 1, {"x": (3,)})


def test_refusals_say_what_to_do():
    with pytest.raises(TraceError, match="returned=True is not supported"):
        trace(lambda x: np.average(x, returned=True), {"x": (3,)})
    with pytest.raises(TraceError, match="bins must be an int"):
        trace(lambda x: np.histogram(x, bins=[0.0, 1.0]), {"x": (3,)})
    with pytest.raises(TraceError, match=r"in-place write into the input 'x'"):  # trace cannot write back
        trace(lambda x: np.add.at(x, [0], 1.0), {"x": (3,)})
    with pytest.raises(TraceError, match="prepend= and append= are not supported"):
        trace(lambda x: np.diff(x, prepend=0.0), {"x": (3,)})


def test_writing_through_a_view_op_is_refused_not_lost():
    # NumPy writes through z.real into z; a graph cannot, so it refuses the write rather than dropping it
    def fn(z):
        z = z.copy()
        part = z.real
        part[0] = 5.0
        return z
    with pytest.raises(TraceError, match="read-only"):
        trace(fn, {"z": ((3,), np.complex128)})
