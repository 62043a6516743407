"""What captures remember between calls, to be cheap, must never change what they capture.

``ops.base.infer_static`` keeps each type rule's answer for static shapes; ``ir.source.user_location`` shares one
``SourceLoc`` per line; ``trace.bind_arguments`` keeps how a function's arguments bind. Each is checked against
the answer worked out afresh.
"""

from __future__ import annotations

import numpy as np
import pytest

from graph_lab import LazyRunner, TraceError, run, trace
from graph_lab.ir.types import TensorType
from graph_lab.ops import Op, SOURCE_OPS, opdef
from graph_lab.ops import base as ops_base
from tests.support.opinfo import SAMPLES
from tests.ops.test_ops import trace_sample


@pytest.mark.parametrize("sample", SAMPLES[::5], ids=lambda s: s.id)
def test_remembered_types_equal_the_rule_asked_afresh(sample):
    """Each node of a capture, made twice (the second time from the memo), has the types its op's rule gives
    when asked again now."""
    for _ in range(2):
        graph, _ = trace_sample(sample)
        for node in graph.nodes:
            if node.op in SOURCE_OPS or node.regions:
                continue
            fresh = opdef(node.op).infer(tuple(v.type for v in node.inputs), node.attrs)
            assert tuple(v.type for v in node.outputs) == tuple(fresh), graph.node_text(node)


class _Rule:
    """A stand-in op definition whose rule reports what it was asked, to see what the memo keys on."""

    op = Op.ADD

    def __init__(self):
        self.calls = 0

    def infer(self, types, attrs):
        self.calls += 1
        value = attrs.get("k")
        if value == "fail":
            raise ValueError("the rule refused")
        return (TensorType(np.dtype(np.bool_) if type(value) is bool else np.dtype(np.int64), ()),)


def test_memo_tells_true_from_one_and_never_remembers_an_error():
    ops_base._infer_memo.clear()
    rule = _Rule()
    t = (TensorType(np.dtype(np.float64), (2,)),)
    as_bool = ops_base.infer_static(rule, t, {"k": True})
    as_int = ops_base.infer_static(rule, t, {"k": 1})
    assert as_bool[0].dtype == np.bool_ and as_int[0].dtype == np.int64  # True == 1, but not the same attribute
    assert rule.calls == 2
    assert ops_base.infer_static(rule, t, {"k": 1}) == as_int and rule.calls == 2  # remembered
    for expected_calls in (3, 4):
        with pytest.raises(ValueError):
            ops_base.infer_static(rule, t, {"k": "fail"})
        assert rule.calls == expected_calls  # asked again each time
    ops_base.infer_static(rule, t, {"k": 0.5})  # a float is not keyed: asked each time
    ops_base.infer_static(rule, t, {"k": 0.5})
    assert rule.calls == 6
    ops_base._infer_memo.clear()


def test_memo_stays_bounded():
    ops_base._infer_memo.clear()
    rule = _Rule()
    t = (TensorType(np.dtype(np.float64), (2,)),)
    for i in range(ops_base._INFER_MEMO_SIZE + 10):
        ops_base.infer_static(rule, t, {"k": i})
    assert len(ops_base._infer_memo) <= ops_base._INFER_MEMO_SIZE
    ops_base._infer_memo.clear()


def test_nodes_on_one_line_share_their_location_and_it_is_right():
    def f(x):
        for _ in range(3):
            x = x * 2.0
        return x

    graph = trace(f, {"x": (3,)})
    muls = [n for n in graph.nodes if n.op == Op.MUL]
    assert len(muls) == 3
    assert muls[0].loc is muls[1].loc is muls[2].loc
    assert muls[0].loc.lineno == f.__code__.co_firstlineno + 2
    assert muls[0].loc.text() == "x = x * 2.0"


def test_argument_binding_is_remembered_per_names_and_errors_repeat():
    def f(x, y, params):
        return x @ params["w"] + y

    w = np.eye(3)
    g = trace(f, {"x": (2, 3), "y": (2, 3)}, {"w": w})
    a, b = np.ones((2, 3)), np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(run(g, {"x": a, "y": b})[0], a @ w + b)
    for _ in range(2):  # the same wrong call fails the same way each time
        with pytest.raises(TraceError, match="not arguments of f"):
            trace(f, {"x": (2, 3), "z": (2, 3)}, {"w": w})
    g2 = trace(f, {"y": (2, 3), "x": (2, 3)}, {"w": w})  # keys in another order bind by name
    assert g2.input_names == ["x", "y"]


def test_lazy_graph_cut_out_matches_eager_with_values_read_later():
    """The lazy runner cuts a graph out of its record; values a later computation reads are kept, not
    recomputed, and every result equals eager NumPy."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((4, 8)), rng.standard_normal((8, 8))
    lr = LazyRunner()
    t = lr.tensor(x)
    h = t @ w
    g = h * 2.0
    h = h + 1.0
    first = lr.materialize(h)
    second = lr.materialize(g)
    np.testing.assert_array_equal(first, x @ w + 1.0)
    np.testing.assert_array_equal(second, (x @ w) * 2.0)
    assert lr.graphs[1] == 1  # only the multiply ran the second time: the matmul's result was kept


def test_tree_map_of_one_level_containers_equals_the_general_walk():
    """``pytree.tree_map`` maps a flat list, tuple or dict directly; the paths and the rebuilt structure must be
    the ones the general walk gives (flatten, then unflatten)."""
    from graph_lab.frontends import pytree

    def general(fn, tree, prefix):
        leaves, treedef = pytree.flatten(tree, prefix)
        return pytree.unflatten(treedef, [fn(path, leaf) for path, leaf in leaves])

    class Sub(list):
        pass

    def describe(path, leaf):
        return path, leaf.shape if isinstance(leaf, np.ndarray) else leaf

    trees = [[1, 2.0, np.ones(2)], (np.ones(3), 4), {"a": 1, 3: np.ones(1), "b'": 2.5}, [], (), {}, [[1], 2],
             {"x": {"y": 1}}, Sub([1, 2]), [(1,)], "a leaf", np.ones(2)]
    for tree in trees:
        fast, slow = pytree.tree_map(describe, tree, "p"), general(describe, tree, "p")
        assert type(fast) is type(slow) and repr(fast) == repr(slow), tree
