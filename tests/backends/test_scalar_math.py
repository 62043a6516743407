"""Generated code computes scalar arithmetic with NumPy's scalar math, as eager code does: the same values and types
as the ufuncs, for every op it is used for and every real and bool dtype; complex and ``**`` keep the ufunc."""

from __future__ import annotations

import operator
import warnings
import zlib

import numpy as np
import pytest

import graph_lab
from graph_lab import compile_graph, trace
from graph_lab.backends.python_emitters import SCALAR_OPERATORS
from graph_lab.backends.python_source import generate

OPERATORS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
    "ge": operator.ge,
}
UFUNCS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "eq": np.equal,
    "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}
REAL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "longdouble"]


def test_the_table_is_the_tested_one():
    assert sorted(op.value for op in SCALAR_OPERATORS) == sorted(OPERATORS)


def _samples(dtype: np.dtype, rng, n: int):
    if dtype.kind == "b":
        return [np.bool_(v) for v in rng.integers(0, 2, n)]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        edges = [info.min, info.max, 0, 1]
        return [dtype.type(v) for v in list(rng.integers(info.min, info.max, n - 4, endpoint=True, dtype=dtype)) + edges]
    with np.errstate(all="ignore"):
        values = rng.standard_normal(n - 6) * 10.0 ** rng.integers(-6, 6, n - 6)
        edges = [0.0, -0.0, np.inf, -np.inf, np.nan, np.finfo(dtype).max]
        return [dtype.type(v) for v in list(values) + edges]


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.longdouble):  # 80 bits of value in 16 bytes: the padding bytes are not part of it
        return bool(a == b or (np.isnan(a) and np.isnan(b))) and np.signbit(a) == np.signbit(b)
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


def _call(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 -- the same exception type on both paths is the assertion
        return type(e)


@pytest.mark.parametrize("dtype", REAL_DTYPES)
@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_scalar_operator_rounds_as_the_ufunc(name, dtype):
    dt = np.dtype(dtype)
    rng = np.random.default_rng(zlib.crc32(f"{name} {dtype}".encode()))  # (not hash(): it changes per process)
    xs, ys = _samples(dt, rng, 200), _samples(dt, rng, 200)
    rng.shuffle(ys)
    weak = [0, 1, 3, -2, 0.5, 1.5, True]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for x, y in zip(xs, ys):
            pairs = [(x, y)] + [(x, w) for w in weak] + [(w, y) for w in weak]
            for a, b in pairs:
                assert _same(_call(OPERATORS[name], a, b), _call(UFUNCS[name], a, b)), (a, b)


def _scalar_graph(name: str, dtype: str):
    def f(a, b):
        return OPERATORS[name](a[0], b[0]) if name != "div" or dtype != "bool" else a[0] / b[0]
    return trace(f, {"a": ((3,), dtype), "b": ((3,), dtype)})


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "float32", "float64", "bool"])
@pytest.mark.parametrize("name", ["add", "mul", "div", "lt", "eq"])
def test_generated_code_uses_the_operator_and_agrees_with_eager(name, dtype):
    g = _scalar_graph(name, dtype)
    text = generate(g).text
    assert f" {_symbol(name)} " in text and "np_" not in text
    rng = np.random.default_rng(0)
    compiled = compile_graph(g, backend="codegen")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(20):
            a, b = (np.asarray(_samples(np.dtype(dtype), rng, 7)[:3]) for _ in range(2))
            (got,) = compiled(a, b)
            expected = np.asarray(UFUNCS[name](a[0], b[0]))  # compiled graphs hand back arrays, as run() does
            assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()


def _symbol(name: str) -> str:
    return next(s for op, s in SCALAR_OPERATORS.items() if op.value == name)


def test_complex_scalars_keep_the_ufunc():
    g = trace(lambda a, b: a[0] / b[0], {"a": ((2,), "complex128"), "b": ((2,), "complex128")})
    assert "np_divide(" in generate(g).text and " / " not in generate(g).text


def test_arrays_keep_the_ufunc():
    g = trace(lambda a, b: a + b, {"a": (3,), "b": (3,)})
    assert "np_add(" in generate(g).text and " + " not in generate(g).text


def test_compile_of_a_scalar_loop_equals_eager():
    def f(a):
        t = 0.0
        for i in range(a.shape[0]):
            t += np.tanh(a[i, i]) * a[i, 0] - a[0, i] / 3.0
        return t

    cf = graph_lab.compile(f)
    rng = np.random.default_rng(1)
    for _ in range(3):
        a = rng.standard_normal((40, 40))
        expected = f(a)
        got = cf(a)
        assert _same(got, expected)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "longdouble", "int64", "int8"])
def test_negation_of_a_scalar_is_numpys_bit_for_bit(dtype):
    """``-a[i]`` on a float element is written ``(-v)``: the same value and type as ``np.negative`` (a sign flip:
    NaN, infinities, zeros); integers keep the ufunc (its overflow at the smallest value is silent)."""
    dtype = np.dtype(dtype)
    values = np.array(_samples(dtype, np.random.default_rng(7), 40), dtype)
    g = trace(lambda x: [-x[i] for i in range(len(values))], {"x": (values.shape, dtype)})
    cg = compile_graph(g, backend="codegen")
    got, want = cg(values), [np.negative(v) for v in values]
    assert all(_same(a[()] if isinstance(a, np.ndarray) else a, b) for a, b in zip(got, want))
    assert all(np.signbit(a) == np.signbit(b) for a, b in zip(got, want))
    assert ("(-v" in cg.source) == (dtype.kind == "f"), cg.source
