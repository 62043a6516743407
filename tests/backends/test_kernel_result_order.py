"""A fused kernel given an operand whose NumPy result would not be C-ordered (an F-ordered argument, a transpose
in the graph) runs the group's NumPy calls, so a sum or mean at its end, or a reduction after it, adds in NumPy's
order: eager's bits. C-ordered and 1-D strided operands still run the kernel (checked through its source and
through the kernel being called), with eager's bits too."""

from __future__ import annotations

import numpy as np
import pytest

from graph_lab.backends import fused
from graph_lab.backends.compiled import compile_graph
from graph_lab.backends.result_order import keeps_c_order
from graph_lab.errors import GraphExecutionError
from graph_lab.frontends.trace import trace
from graph_lab.testing.forced_kernels import FORCED

from tests.support.backend_support import needs_compiler

DTYPES = ["float32", "float64"]


def _mean_of_chain(x):
    return np.mean(x * 2.0 + 1.0)


def _sum_of_transposed(x):
    return np.sum(x.T * 3.0 - 0.5)


def _row_means_of_transposed(x):
    return np.mean(x.T * 2.0 + 1.0, axis=1)


def _chain_then_sum(x):
    y = x.T * 2.0 + 1.0
    return y, np.sum(y)


def _compiled(fn, shape, dtype):
    return compile_graph(trace(fn, {"x": (shape, np.dtype(dtype))}), backend="fused", options=FORCED)


def _counting_kernel_calls(monkeypatch):
    """How many times a compiled kernel itself runs (not the NumPy calls that may replace it)."""
    calls = []
    real = fused.kernel_call

    def counted(fn, group, graph, threads):
        def counted_fn(*args):
            calls.append(group.index)
            return fn(*args)
        return real(counted_fn, group, graph, threads)
    monkeypatch.setattr(fused, "kernel_call", counted)
    return calls


def _assert_eager_bits(compiled, fn, x):
    expected = fn(x)
    expected = expected if isinstance(expected, tuple) else (expected,)
    actual = compiled(x)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape
        assert a.tobytes() == e.tobytes(), (a, e)


def _inputs(shape, dtype, layout, count=20):
    rng = np.random.default_rng(11)
    return [layout(rng.standard_normal(shape).astype(dtype)) for _ in range(count)]


@needs_compiler
@pytest.mark.parametrize("dtype", DTYPES)
def test_an_f_ordered_argument_sums_in_numpys_order(dtype):
    compiled = _compiled(_mean_of_chain, (37, 23), dtype)
    assert "kernel0(" in compiled.source
    for x in _inputs((37, 23), dtype, np.asfortranarray):
        _assert_eager_bits(compiled, _mean_of_chain, x)


@needs_compiler
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", [_sum_of_transposed, _row_means_of_transposed, _chain_then_sum])
def test_a_transposed_operand_in_the_graph_sums_in_numpys_order(fn, dtype):
    compiled = _compiled(fn, (64, 45), dtype)
    assert "kernel0(" in compiled.source
    for x in _inputs((64, 45), dtype, np.ascontiguousarray):
        _assert_eager_bits(compiled, fn, x)


@needs_compiler
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_diagonal_with_its_axes_swapped_sums_in_numpys_order(dtype):
    def mean_of_diagonal(x):  # (the diagonal of axes 0 and 1 comes last: a [40, 30] view, F-like strides)
        return np.mean(x.diagonal() + 0.5)
    compiled = _compiled(mean_of_diagonal, (30, 40, 40), dtype)
    assert "kernel0(" in compiled.source
    for x in _inputs((30, 40, 40), dtype, np.ascontiguousarray, 10):
        _assert_eager_bits(compiled, mean_of_diagonal, x)


@needs_compiler
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_transposed_value_returned_has_numpys_layout(dtype):
    compiled = _compiled(_chain_then_sum, (64, 45), dtype)
    x = _inputs((64, 45), dtype, np.ascontiguousarray, 1)[0]
    assert compiled(x)[0].flags.f_contiguous == _chain_then_sum(x)[0].flags.f_contiguous


@needs_compiler
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_c_ordered_argument_still_runs_the_kernel(dtype, monkeypatch):
    calls = _counting_kernel_calls(monkeypatch)
    compiled = _compiled(_mean_of_chain, (37, 23), dtype)
    for x in _inputs((37, 23), dtype, np.ascontiguousarray):
        _assert_eager_bits(compiled, _mean_of_chain, x)
    assert len(calls) == 20


@needs_compiler
@pytest.mark.parametrize("dtype", DTYPES)
def test_an_f_ordered_argument_runs_numpy_not_the_kernel(dtype, monkeypatch):
    calls = _counting_kernel_calls(monkeypatch)
    compiled = _compiled(_mean_of_chain, (37, 23), dtype)
    compiled(_inputs((37, 23), dtype, np.asfortranarray, 1)[0])
    assert calls == []


@needs_compiler
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_strided_vector_runs_the_kernel_in_numpys_order(dtype, monkeypatch):
    # NumPy's result of a 1-D operand of any stride is contiguous: the kernel (on a copy) adds in its order
    calls = _counting_kernel_calls(monkeypatch)
    compiled = _compiled(_mean_of_chain, (1500,), dtype)
    rng = np.random.default_rng(5)
    for step in (3, -2):
        for _ in range(10):
            x = rng.standard_normal(1500 * abs(step)).astype(dtype)[::step]
            assert not x.flags.c_contiguous
            _assert_eager_bits(compiled, _mean_of_chain, x)
    assert len(calls) == 20


@pytest.mark.parametrize("view, keeps", [
    (lambda a: a[:, ::2], True), (lambda a: a[::-1], True), (lambda a: a[:, ::-1], True),
    (lambda a: a[::3], True), (lambda a: a.T, False), (lambda a: np.asfortranarray(a), False),
    (lambda a: np.broadcast_to(a[:1], a.shape), False), (lambda a: np.broadcast_to(a[:, :1], a.shape), False)])
def test_keeps_c_order_agrees_with_numpy(view, keeps):
    # (NumPy's own answer: the layout of a ufunc's result; a broadcast view keeps C order there, and is left to
    # NumPy's calls here all the same)
    a = view(np.arange(60.0).reshape(6, 10))
    assert keeps_c_order(a) == keeps
    if keeps:
        assert np.add(a, 0.0).flags.c_contiguous
    elif a.strides[0] and a.strides[1]:
        assert not np.add(a, 0.0).flags.c_contiguous


@needs_compiler
def test_an_operand_of_another_shape_still_raises_after_an_f_ordered_one():
    def two(x, y):
        return np.sum(x * y + 1.0)
    graph = trace(two, {"x": ((37, 23), np.float64), "y": ((37, 23), np.float64)})
    compiled = compile_graph(graph, backend="fused", options=FORCED)
    x = np.asfortranarray(np.ones((37, 23)))
    with pytest.raises(GraphExecutionError, match="the kernel was compiled for"):
        compiled(x, np.ones((1, 23)))
