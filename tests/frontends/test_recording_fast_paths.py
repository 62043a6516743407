"""The recording core's fast paths (``Recorder.emit``, ``call_op``, ``infer_static``'s memo) against the general code they
skip: the same answers, the same graphs, and the same refusals."""

import numpy as np
import pytest

from graph_lab import F, LazyRunner, TraceError, trace
from graph_lab.ir.types import TensorType
from graph_lab.ops import REGISTRY, Op
from graph_lab.ops import base as ops_base


class _Counting:
    """An op definition whose rule counts its calls (the real op's rule underneath)."""

    def __init__(self, op=Op.ADD):
        self.op = op
        self.calls = 0

    def infer(self, types, attrs):
        self.calls += 1
        return REGISTRY[self.op].infer(types, attrs)


def test_memo_answers_as_the_rule_does():
    ops_base._infer_memo.clear()
    rule = _Counting()
    a = TensorType(np.dtype(np.float32), (4, 8))
    b = TensorType(np.dtype(np.float32), (4, 8))  # equal to a, another object
    c = TensorType(np.dtype(np.float64), (1, 8))
    first = ops_base.infer_static(rule, (a, c), {})
    assert first == REGISTRY[Op.ADD].infer((a, c), {})
    assert ops_base.infer_static(rule, (a, c), {}) == first and rule.calls == 1
    assert ops_base.infer_static(rule, (b, c), {}) == first and rule.calls == 1  # by equality
    assert ops_base.infer_static(rule, (c, a), {}) == REGISTRY[Op.ADD].infer((c, a), {}) and rule.calls == 2
    ops_base._infer_memo.clear()


def test_stale_view_is_still_refused_as_an_operand():
    def f(x):
        x = x.copy()
        v = x[1:]
        x[0] = 5.0  # writes x: the view v is stale
        return v + 1.0

    with pytest.raises(TraceError, match="written in place after"):
        trace(f, {"x": (4,)})


def test_reshape_of_written_array_is_still_refused():
    def f(x):
        x = x.copy()
        r = x.T.reshape(-1)  # a view or a copy: unknown
        x[0, 0] = 1.0
        return r * 2.0

    with pytest.raises(TraceError, match="reshape"):
        trace(f, {"x": (2, 3)})


def test_views_and_several_outputs_still_alias_as_numpy_does():
    def f(x):
        x = x.copy()
        a, b = np.split(x, 2)
        s = a * b
        t = x.T
        t[0] = 7.0  # writes through the transpose into x
        return x[:2] + s, x

    x = np.arange(8.0).reshape(4, 2)
    graph = trace(f, {"x": (4, 2)})
    from graph_lab import run

    for got, expected in zip(run(graph, {"x": x}), f(x)):
        np.testing.assert_array_equal(got, expected)


def test_recorder_found_in_lists_and_keywords():
    lr = LazyRunner()
    a = lr.tensor(np.ones((2, 3)))
    out = np.concatenate([np.zeros((2, 3)), a], axis=0)  # the stand-in inside a list
    np.testing.assert_array_equal(lr.materialize(out), np.concatenate([np.zeros((2, 3)), np.ones((2, 3))]))
    y = F.clip(a, a_max=a * 0.5)  # the stand-in in a keyword argument
    np.testing.assert_array_equal(lr.materialize(y), np.full((2, 3), 0.5))


def test_constant_snapshot_keeps_layout_and_value():
    w = np.asfortranarray(np.arange(12.0).reshape(3, 4))

    def f(x):
        return x @ w

    graph = trace(f, {"x": (2, 3)})
    (const,) = [n for n in graph.nodes if n.op == Op.CONST]
    value = const.attrs["value"]
    assert value is not w and not value.flags.writeable
    assert value.flags.f_contiguous == np.array(w, copy=True).flags.f_contiguous
    np.testing.assert_array_equal(value, w)
    w[0, 0] = 100.0  # a later write does not reach the graph
    assert value[0, 0] == 0.0


def test_static_input_types_are_right_in_every_capture():
    """trace and script give each static input the type its shape and dtype make, capture after capture, and the
    graphs compute what NumPy computes."""
    import graph_lab
    from graph_lab.frontends.trace import parse_spec

    def f(x, y):
        return np.tanh(x @ y) + x.sum()

    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    y = np.ones((4, 4), np.float32)
    shapes = {"x": ((3, 4), "float32"), "y": ((4, 4), "float32")}
    for capture in (trace, graph_lab.script):
        first, second = capture(f, shapes), capture(f, shapes)
        for g in (first, second):
            for n in g.input_nodes:
                dims, dtype = parse_spec(n.attrs["name"], shapes[n.attrs["name"]])
                assert n.output.type == TensorType(dtype, dims) == n.attrs["type"]
                assert n.output.type.dtype == np.float32
            (got,) = g.to_python()(x=x, y=y)  # (the list of outputs)
            np.testing.assert_allclose(got, f(x, y), rtol=1e-6)
        assert [n.output.type for n in first.input_nodes] == [n.output.type for n in second.input_nodes]
        assert str(first) == str(second)
    # a float64 shape of the same sizes is another type
    g = trace(f, {"x": (3, 4), "y": (4, 4)})
    assert g.input_nodes[0].output.type == TensorType(np.dtype(np.float64), (3, 4))
