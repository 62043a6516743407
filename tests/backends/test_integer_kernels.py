"""Fused kernels on integers (``backends/c_integers``) against eager NumPy, bit for bit: every op on every integer
dtype, on the values where C and NumPy could part (the minimum and maximum, -1, 0, shift counts from negative to
past the bit width), with NumPy's promotion (bools and Python ints next to integer arrays, mixed widths), and the
ops and casts a kernel refuses, each with its reason."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.support.backend_support import ALWAYS, needs_compiler
from graph_lab import compile_graph, trace
from graph_lab.backends.partition import why_not

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def edge_values(dtype: np.dtype) -> list[int]:
    info = np.iinfo(dtype)
    bits = 8 * dtype.itemsize
    values = {info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3, 7, -1, -2, bits - 1, bits, bits + 1,
              -bits, 2 ** (bits // 2), -(2 ** (bits // 2)), 100, -100, 123456789, -987654321}
    return sorted(v for v in values if info.min <= v <= info.max)


def pairs(dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of edge values, and every shift count from -2 to the bit width + 1 with each edge value."""
    values = edge_values(dtype)
    counts = [c for c in range(-2, 8 * dtype.itemsize + 2) if np.iinfo(dtype).min <= c]
    a, b = zip(*itertools.chain(itertools.product(values, values), itertools.product(values, counts)))
    return np.array(a, dtype), np.array(b, dtype)


def compiled_run(fn, *arrays):
    g = trace(fn, {f"x{i}": (a.shape, a.dtype) for i, a in enumerate(arrays)})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    return compiled, compiled(*arrays)


def assert_bits(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    bad = np.flatnonzero(got != want) if got.dtype.kind != "f" else np.flatnonzero(got.view(np.uint8) !=
                                                                                    want.view(np.uint8))
    assert got.tobytes() == want.tobytes(), f"first difference at element {bad[:1]}: {got[bad[:3]]} vs {want[bad[:3]]}"


BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor, "left_shift": np.left_shift,
    "right_shift": np.right_shift, "maximum": np.maximum, "minimum": np.minimum, "equal": np.equal,
    "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
    "greater_equal": np.greater_equal, "logical_and": np.logical_and, "logical_xor": np.logical_xor,
    "where": lambda x, y: np.where(x > y, x, y), "true_divide": np.true_divide,
}
UNARY = {
    "negative": np.negative, "absolute": np.absolute, "square": np.square, "sign": np.sign, "invert": np.invert,
    "logical_not": np.logical_not, "clip": lambda x: np.clip(x, 3, 100), "to_bool": lambda x: x.astype(bool),
    "to_float32": lambda x: x.astype(np.float32), "to_float64": lambda x: x.astype(np.float64),
    **{f"to_{t}": (lambda t: lambda x: x.astype(t))(t) for t in INTS},
}


@needs_compiler
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name", list(BINARY))
def test_each_binary_op_in_a_kernel_gives_numpys_integers(name, dtype):
    f = BINARY[name]

    def fn(x0, x1):
        return f(x0 ^ 0, x1)  # (with an xor: a chain of two ops in one kernel)

    a, b = pairs(np.dtype(dtype))
    compiled, (got,) = compiled_run(fn, a, b)
    assert compiled.kernels, compiled.explain()
    with np.errstate(all="ignore"):
        assert_bits(got, fn(a, b))


@needs_compiler
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name", list(UNARY))
def test_each_unary_op_and_cast_in_a_kernel_gives_numpys_integers(name, dtype):
    f = UNARY[name]

    def fn(x0):
        return f(x0 | 0)

    a = np.array(edge_values(np.dtype(dtype)) * 3, dtype)
    compiled, (got,) = compiled_run(fn, a)
    assert compiled.kernels, compiled.explain()
    assert_bits(got, fn(a))


@needs_compiler
@pytest.mark.parametrize("dtype", INTS)
def test_python_ints_and_strong_scalars_next_to_integer_arrays(dtype):
    """NEP 50: a Python int takes the array's dtype; a NumPy scalar is strong (``uint64 << np.uint64(13)``)."""
    info = np.iinfo(dtype)

    def fn(x0):
        y = (x0 + 1) * 3 - info.max
        z = (y << np.array(5, dtype)) ^ (y >> 2)
        return z, y == info.min, np.maximum(z, 7) < -1 if info.min < 0 else z > 250, (z & 1) + True

    a = np.array(edge_values(np.dtype(dtype)) * 2, dtype)
    compiled, got = compiled_run(fn, a)
    assert compiled.kernels, compiled.explain()
    for g, w in zip(got, fn(a)):
        assert_bits(g, w)


@needs_compiler
@pytest.mark.parametrize("left,right", [("int8", "bool"), ("bool", "uint16"), ("int8", "int16"), ("uint8", "int8"),
                                        ("int32", "uint32"), ("int64", "float64"), ("uint64", "float32"),
                                        ("int16", "float32"), ("uint32", "int64")])
def test_mixed_dtypes_promote_as_numpy_does(left, right):
    def fn(x0, x1):
        return x0 + x1, x0 * x1, x0 < x1, np.where(x0 == x1, x0, x1), np.maximum(x0, x1)

    rng = np.random.default_rng(3)
    a = rng.integers(-300, 300, 4096).astype(left)
    b = rng.integers(-300, 300, 4096).astype(right)
    compiled, got = compiled_run(fn, a, b)
    assert compiled.kernels, compiled.explain()
    with np.errstate(all="ignore"):
        for g, w in zip(got, fn(a, b)):
            assert_bits(g, w)


def node_of(fn, *types):
    g = trace(fn, {f"x{i}": ((64,), t) for i, t in enumerate(types)})
    return next(n for n in reversed(g.nodes) if n.outputs and n.output.type.ndim)


@pytest.mark.parametrize("fn,types,reason", [
    (lambda x0: x0.astype(np.int32), ["float64"], "undefined in C"),
    (lambda x0: x0.astype(np.uint8), ["float32"], "undefined in C"),
    (lambda x0, x1: x0 // x1, ["int32", "int32"], "division by zero"),
    (lambda x0, x1: x0 % x1, ["int64", "int64"], "division by zero"),
    (lambda x0, x1: x0 ** x1, ["int64", "int64"], "negative exponent"),
    (lambda x0, x1: x0 < x1, ["int64", "uint64"], "compares them exactly"),
    (lambda x0: x0 < 1000, ["int8"], "does not fit int8"),
    (lambda x0: x0 + (-1), ["uint32"], "does not fit uint32"),
])
def test_what_a_kernel_refuses_on_integers_says_why(fn, types, reason):
    assert reason in (why_not(node_of(fn, *types)) or "")


@needs_compiler
def test_a_refused_comparison_still_gives_numpys_answer():
    """int64 against uint64 near 2**63: NumPy compares exactly; a float64 comparison would say equal."""
    def fn(x0, x1):
        return (x0 ^ 0) < (x1 ^ 0)

    a = np.array([2 ** 63 - 1, -1, 0, 5] * 512, np.int64)
    b = np.array([2 ** 63, 2 ** 64 - 1, 0, 4] * 512, np.uint64)
    _, (got,) = compiled_run(fn, a, b)
    assert_bits(got, fn(a, b))
