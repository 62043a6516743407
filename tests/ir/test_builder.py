"""Building a graph by hand (``GraphBuilder``), editing it (insert, replace uses, erase), and ``verify()``.

Every broken invariant ``verify`` knows is made on purpose here, and its message must name the node and the rule.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support import views_samples
from graph_lab import GraphBuilder, GraphEditError, Op, OpError, VerifyError, run
from graph_lab.ir.graph import Graph, Node
from graph_lab.ir.types import TensorType
from graph_lab.ops import SOURCE_OPS


def linear_relu():
    """The course note's section 1.1 graph, y = ReLU(Wx + b), built by hand."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((128, 64)).astype(np.float32)
    b0 = rng.standard_normal(64).astype(np.float32)
    b = GraphBuilder("linear_relu")
    x = b.input("x", (32, 128), "float32")
    weight = b.param("W", w)
    bias = b.param("b", b0)
    y = b.relu(b.add(b.matmul(x, weight), bias))
    return b.output(y), w, b0


def test_section_1_1_graph_runs_as_numpy_does():
    g, w, b0 = linear_relu()
    x = np.random.default_rng(1).standard_normal((32, 128)).astype(np.float32)
    (y,) = run(g, {"x": x})
    expected = np.maximum(np.matmul(x, w) + b0, 0)
    assert y.dtype == np.float32 and y.tobytes() == expected.tobytes()
    assert [n.op for n in g.nodes] == ["input", "param", "param", "matmul", "add", "relu"]


def test_producers_and_consumers():
    g, _, _ = linear_relu()
    x, w, b, matmul, add, relu = g.nodes
    assert g.producer(g.outputs[0]) is relu
    assert g.users(x.output) == [matmul] and g.users(matmul.output) == [add] and g.users(relu.output) == []
    assert matmul.inputs == (x.output, w.output)


def test_every_op_has_a_builder_method():
    for op in Op:
        if op not in SOURCE_OPS:
            assert callable(getattr(GraphBuilder, op.value)), op


def test_arguments_are_bound_by_the_op_rule():
    b = GraphBuilder()
    x = b.input("x", (4, 4))
    idx = b.input("idx", (2,), "int64")
    s = b.sum(x, axis=-1)
    r = b.reshape(x, (2, -1))
    t = b.transpose(x)
    picked = b.index(x, (slice(None), idx))
    joined = b.concatenate([x, x], axis=-1)
    left, right = b.split(x, 2, axis=1)
    scaled = b.mul(x, 2.0)
    g = b.output(s, r, t, picked, joined, left, right, scaled)
    assert s.node.attrs == {"axis": (1,), "keepdims": False}
    assert r.node.attrs == {"shape": (2, 8)} and t.node.attrs == {"perm": (1, 0)}
    assert picked.node.inputs == (x, idx) and picked.type.shape == (4, 2)
    assert joined.node.attrs == {"axis": 1} and joined.type.shape == (4, 8)
    assert left.type.shape == (4, 2) and left.node is right.node
    assert scaled.node.inputs[1].node.op == "const" and str(scaled.node.inputs[1].type) == "float"
    inputs = {"x": np.arange(16.0).reshape(4, 4), "idx": np.array([3, 0])}
    xs = inputs["x"]
    expected = [xs.sum(-1), xs.reshape(2, 8), xs.T, xs[:, [3, 0]], np.concatenate([xs, xs], -1),
                xs[:, :2], xs[:, 2:], xs * 2.0]
    for got, want in zip(run(g, inputs), expected):
        assert np.array_equal(got, want)


def test_nodes_remember_the_builders_caller():
    b = GraphBuilder()
    x = b.input("x", (2,))
    assert x.node.loc is not None and x.node.loc.filename == __file__


def test_a_bad_call_is_an_op_error_naming_the_shapes():
    b = GraphBuilder()
    x = b.input("x", (2, 3))
    with pytest.raises(OpError, match=r"matmul: inner dimensions differ: \(2, 3\) @ \(2, 3\)"):
        b.matmul(x, x)


# --- editing

def test_insert_and_replace_uses():
    g, _, _ = linear_relu()
    add, relu = g.nodes[4], g.nodes[5]
    neg = g.insert_after(add, "neg", [add.output])
    assert g.nodes.index(neg) == 5 and neg.output.type == add.output.type
    assert g.replace_all_uses_with(add.output, neg.output) == 1  # relu's use; neg itself still reads add
    assert relu.inputs == (neg.output,) and g.users(add.output) == [neg]
    g.verify()
    half = g.insert_before(relu, Op.MUL, [neg.output, g.insert_before(relu, Op.CONST, [], {"value": 0.5}).output])
    assert g.nodes.index(half) == g.nodes.index(relu) - 1
    g.verify()


def test_replace_all_uses_updates_graph_outputs():
    b = GraphBuilder()
    x = b.input("x", (3,))
    e = b.exp(x)
    g = b.output(e, b.neg(e))
    t = g.insert_after(e.node, "tanh", [x]).output
    assert g.replace_all_uses_with(e, t) == 2
    assert g.outputs[0] is t and g.outputs[1].node.inputs == (t,)
    g.erase_node(e.node)
    g.verify()
    assert np.array_equal(run(g, {"x": np.ones(3)})[0], np.tanh(np.ones(3)))


def test_replace_refuses_another_type_or_a_later_value():
    b = GraphBuilder()
    x = b.input("x", (3,))
    s = b.sum(x)
    e = b.exp(x)
    n = b.neg(e)
    g = b.output(n)
    with pytest.raises(GraphEditError, match=r"cannot replace %1: f64\[\] by %2: f64\[3\]; a value may only be"):
        g.replace_all_uses_with(s, e)
    late = g.insert_after(n.node, "tanh", [x]).output
    with pytest.raises(GraphEditError, match=r"the user %3 = neg\(%2\).* comes before %4 is defined"):
        g.replace_all_uses_with(e, late)


def test_insert_refuses_operands_defined_later():
    g, _, _ = linear_relu()
    with pytest.raises(GraphEditError, match="operand 0 .* is not defined before that point"):
        g.insert_before(g.nodes[3], "neg", [g.nodes[5].output])


def test_erase_refuses_a_node_whose_value_is_used():
    g, _, _ = linear_relu()
    with pytest.raises(GraphEditError, match=r"cannot erase %3 = matmul\(%0, %1\).*: its value %3 is still read by "
                                             r"%4 = add\(%3, %2\).*replace_all_uses_with"):
        g.erase_node(g.nodes[3])
    with pytest.raises(GraphEditError, match="is an output of graph linear_relu"):
        g.erase_node(g.nodes[5])
    with pytest.raises(GraphEditError, match="is not a node of graph"):
        g.erase_node(Node(Op.CONST, [], {"value": 1.0}, [TensorType.of(1.0)]))


def test_erase_a_dead_node_drops_its_uses_and_its_parameter():
    b = GraphBuilder()
    x = b.input("x", (3,))
    w = b.param("w", np.ones(3))
    dead = b.add(x, w)
    g = b.output(b.exp(x))
    g.erase_node(dead.node)
    assert x.users == [g.nodes[-1]] and w.users == []
    g.erase_node(w.node)
    assert g.param_values == {} and len(g.nodes) == 2
    g.verify()


# --- verify: each rule, broken on purpose

def _swap_operations(g):
    g.nodes[3], g.nodes[4] = g.nodes[4], g.nodes[3]


def _edit_inputs_behind_the_bookkeeping(g):
    g.nodes[4]._inputs = (g.nodes[3].output, g.nodes[3].output)


def _share_nodes_with_another_graph(g):
    other = Graph("other")
    other.nodes = g.nodes[:4]
    other.outputs = [g.nodes[3].output]
    g.nodes, g.outputs = other.nodes, other.outputs


def _remove_without_erasing(g):
    g.outputs = [g.nodes[4].output]
    g.nodes.remove(g.nodes[5])


def _output_of_erased_node(g):
    g.nodes.pop().inputs = ()


def _place_node_twice(g):
    g.nodes.append(g.nodes[4])


def _wrong_output_type(g):
    g.nodes[4].outputs[0].type = TensorType(np.dtype(np.float64), (32, 64))


def _duplicate_input_name(g):
    g.nodes[1].attrs = {**g.nodes[1].attrs, "name": "x"}


def _parameter_without_value(g):
    del g.param_values["W"]


def _source_with_operand(g):
    g.nodes[2].inputs = (g.nodes[0].output,)


def _unknown_op(g):
    g.nodes[5].op = "silu"


def _missing_attribute(g):
    g.nodes[0].attrs = {"name": "x"}


def _input_without_name(g):
    g.nodes[0].attrs = {"type": g.nodes[0].attrs["type"]}


def _output_index_mismatch(g):
    g.nodes[3].outputs[0].index = 1


@pytest.mark.parametrize("breaker, message", [
    (_swap_operations, r"node 3 \(%3 = add\(%4, %2\).*\): operand 0 was used before it has been defined; nodes must "
                       r"be in topological order"),
    (_edit_inputs_behind_the_bookkeeping, r"node 4 .*operand 0 lists this node 1 times among its users but the node "
                                          r"reads it 2 times"),
    (_share_nodes_with_another_graph, r"value %2 is read by <Node add .*>, which is not a node of this graph: a node "
                                      r"belongs to one graph only"),
    (_remove_without_erasing, r"value %4 is read by <Node relu .*>, which is not a node of this graph.*erase_node"),
    (_output_of_erased_node, r"graph output 0 .* is not defined by any node of the graph; was its node erased"),
    (_place_node_twice, r"node 6 \(%6 = add.*\): appears twice in graph.nodes"),
    (_wrong_output_type, r"node 4 .*: output types f64\[32,64\] differ from what add's rule gives: f32\[32,64\]"),
    (_duplicate_input_name, r"node 1 .*: the name 'x' is already used by an input"),
    (_parameter_without_value, r"node 1 .*: parameter 'W' has no stored value"),
    (_source_with_operand, r"node 2 .*: a param node is a source and reads no operands"),
    (_unknown_op, r"node 5 .*: op 'silu' is not in the op table"),
    (_missing_attribute, r"node 0 \(%0 = input\(\) \"x\".*\): its op's rule rejects the operands or attributes: "
                        r"KeyError: 'type'"),
    (_input_without_name, r"node 0 \(a node of op input\): an input node needs a string attribute 'name', got None"),
    (_output_index_mismatch, r"node 3 .*: output 0 records another producer or position"),
])
def test_verify_names_the_node_and_the_rule(breaker, message):
    g, _, _ = linear_relu()
    g.verify()
    breaker(g)
    with pytest.raises(VerifyError, match=message):
        g.verify()


@pytest.mark.parametrize("name", list(views_samples.SAMPLES))
def test_traced_samples_verify(name):
    views_samples.make_graph(name).verify()
