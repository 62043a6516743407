"""The elementwise ops of the op table that fused kernels compute bit for bit as NumPy does (classification and
rounding), on the values where C and NumPy could part: NaN, infinities, signed zeros,
halves, the largest and the subnormal numbers; and the ops left out, each with its reason."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.backend_support import ALWAYS, needs_compiler
from graph_lab import compile_graph, trace
from graph_lab.backends import c_kernels
from graph_lab.backends.c_integers import INTEGER_OPS
from graph_lab.backends.partition import why_not
from graph_lab.ops import REGISTRY, Op


def assert_bits(got: np.ndarray, want: np.ndarray) -> None:
    """The same dtype, shape and bytes: signed zeros and the NaNs' own bits included."""
    assert got.dtype == want.dtype and got.shape == want.shape
    differ = np.flatnonzero(got.view(np.uint8).reshape(got.size, -1) != want.view(np.uint8).reshape(want.size, -1))
    assert got.tobytes() == want.tobytes(), f"first difference at element {differ[0] // got.itemsize}"


def edge_values(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    values = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, 1e15 + 0.5, 2.0 ** 52 + 1,
              -(2.0 ** 23) - 0.5, float(info.max), -float(info.max), float(info.tiny), float(info.smallest_subnormal),
              -float(info.smallest_subnormal), np.inf, -np.inf, np.nan, -np.nan, 3.7, -3.7, 1e-300, 123456.5]
    base = np.array(values, dtype=dtype)
    return np.concatenate([base, np.random.default_rng(0).standard_normal(2048 - len(base)).astype(dtype) * 40])


UNARY = {
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "rint": np.rint, "trunc": np.trunc,
    "round": np.round,
}


def fused_source_and_result(fn, x: np.ndarray):
    g = trace(fn, {"x": (x.shape, x.dtype)})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    return compiled, compiled(x)[0]


@needs_compiler
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(UNARY))
def test_each_op_in_a_kernel_gives_numpys_bits_on_edge_values(name, dtype):
    f = UNARY[name]

    def fn(x):
        return f(x * 1.0)  # (with the multiply: a group of two nodes, as a fused chain is)

    x = edge_values(np.dtype(dtype))
    compiled, got = fused_source_and_result(fn, x)
    assert compiled.kernels, compiled.explain()
    with np.errstate(all="ignore"):
        assert_bits(got, f(x * 1.0))


@needs_compiler
def test_classification_feeds_a_where_in_one_kernel():
    def fn(x):
        return np.where(np.isnan(x) | np.isinf(x), 0.0, np.trunc(x) + np.rint(x * 0.5))

    x = edge_values(np.dtype("float64"))
    with np.errstate(all="ignore"):  # (x + x of the largest values overflows, on either side)
        compiled, got = fused_source_and_result(fn, x)
        want = fn(x)
    assert len(compiled.kernels) == 1, compiled.explain()
    assert_bits(got, want)


@needs_compiler
@pytest.mark.parametrize("op", [np.bitwise_and, np.bitwise_or, np.bitwise_xor])
def test_bitwise_ops_of_bools_are_the_logical_ops_in_a_kernel(op):
    def fn(x):
        return np.invert(op(x > 0.5, np.isfinite(x))) & (x < 10.0)

    x = edge_values(np.dtype("float64"))
    compiled, got = fused_source_and_result(fn, x)
    assert len(compiled.kernels) == 1, compiled.explain()
    assert got.dtype == np.bool_ and got.view(np.uint8).max() <= 1  # a NumPy bool holds 0 or 1
    assert_bits(got, fn(x))


def node_of(fn, shape, dtype):
    g = trace(fn, {"x": (shape, dtype)})
    return next(n for n in g.nodes if n.op not in ("input", "const"))


def test_what_stays_out_of_kernels_says_why():
    assert "decimals other than 0" in why_not(node_of(lambda x: np.round(x, 2), (64,), "float64"))
    assert why_not(node_of(lambda x: np.left_shift(x, 1), (64,), "int64")) is None  # (tests/backends/test_integer_kernels.py)
    assert "division by zero" in why_not(node_of(lambda x: x // 3, (64,), "int64"))
    assert "SVML" in why_not(node_of(np.arcsin, (64,), "float64"))
    assert "kernels classify float32 and float64" in why_not(node_of(np.isnan, (64,), "bool"))
    assert "divmod steps" in why_not(node_of(lambda x: x // 3.0, (64,), "float64"))


def test_every_elementwise_op_is_fused_or_says_why_not():
    """A new elementwise op of the table is a kernel expression or has its reason in ``NOT_FUSED``."""
    elementwise = [op for op, d in REGISTRY.items() if d.family in ("unary", "binary")]
    older = {Op.FLOORDIV, Op.MOD}  # (before this table: left out with a reason too)
    missing = [op for op in elementwise if op not in c_kernels.C_OPS and op not in c_kernels.NOT_FUSED
               and op not in INTEGER_OPS and op not in older and op not in (Op.UFUNC_OUTER,)]
    assert not missing, missing
