"""``Graph.verify()``: graphs built by hand, then broken one invariant at a time. Each break raises
``VerifyError`` naming the node (its position and printed form) and the rule."""

import numpy as np
import pytest

from graph_lab import Graph, Node, OpError, TensorType, VerifyError
from graph_lab.ops import Op

F64_23 = TensorType(np.dtype(np.float64), (2, 3))


def small_graph():
    """x -> mul(x, 2.0) -> neg: a valid graph, and its nodes by name."""
    g = Graph("hand")
    x = g.add_input("x", F64_23)
    two = g.add_const(2.0)
    mul = g.add_node(Op.MUL, (x, two))
    neg = g.add_node(Op.NEG, (mul.output,))
    g.outputs = [neg.output]
    return g, {"x": x.node, "two": two.node, "mul": mul, "neg": neg}


def verify_error(g) -> str:
    with pytest.raises(VerifyError) as e:
        g.verify()
    assert e.type is VerifyError and isinstance(e.value, ValueError)
    return str(e.value)


def test_hand_built_graph_verifies():
    g, _ = small_graph()
    g.verify()
    assert g.count() == 2
    assert str(g).splitlines()[1:5] == [
        '  %0: f64[2,3] = input "x"',
        "  %1: float = const 2.0",
        "  %2: f64[2,3] = mul %0, %1",
        "  %3: f64[2,3] = neg %2",
    ]


def test_add_node_checks_the_ops_rule_while_building():
    g = Graph()
    x = g.add_input("x", F64_23)
    with pytest.raises(OpError, match="inner dimensions"):
        g.add_node(Op.MATMUL, (x, x))


def test_use_before_definition():
    g, n = small_graph()
    g.nodes = [n["x"], n["mul"], n["two"], n["neg"]]  # the constant now comes after its user
    msg = verify_error(g)
    assert "node 1 (%1 = mul(%0, %2))" in msg
    assert "operand 1 was used before it has been defined" in msg and "topological order" in msg


def test_value_from_another_graph():
    g, n = small_graph()
    other = Graph("other")
    y = other.add_input("y", F64_23)
    n["mul"].inputs = (n["x"].output, y)
    msg = verify_error(g)
    assert "node 2 (%2 = mul(%0, %?))" in msg
    assert "operand 1 is not defined by any node of this graph" in msg


def test_value_defined_twice():
    g, n = small_graph()
    g.nodes.insert(3, n["mul"])  # the same node, so the same value, twice
    msg = verify_error(g)
    assert "node 3 (" in msg and "= mul(" in msg
    assert "appears twice in graph.nodes" in msg and "a node is placed once" in msg


def test_output_claimed_by_another_node():
    g, n = small_graph()
    impostor = Node(Op.NEG, (n["mul"].output,), {}, (F64_23,))
    impostor.outputs = n["neg"].outputs  # defines a value whose producer is `neg`
    g.nodes[3] = impostor
    msg = verify_error(g)
    assert "node 3 (%3 = neg(%2))" in msg and "records another producer" in msg


def test_output_type_disagrees_with_rule():
    g, n = small_graph()
    n["neg"].outputs[0].type = TensorType(np.dtype(np.float32), (2, 3))
    msg = verify_error(g)
    assert "node 3 (%3 = neg(%2))" in msg
    assert "output types f32[2,3] differ from what neg's rule gives: f64[2,3]" in msg


def test_attribute_edit_that_changes_the_rules_result():
    g = Graph()
    x = g.add_input("x", F64_23)
    r = g.add_node(Op.RESHAPE, (x,), {"shape": (3, 2)})
    g.outputs = [r.output]
    g.verify()
    r.attrs["shape"] = (6,)
    msg = verify_error(g)
    assert "node 1 (%1 = reshape(%0) shape=(6,))" in msg
    assert "output types f64[3,2] differ from what reshape's rule gives: f64[6]" in msg


def test_operands_the_rule_rejects():
    g, n = small_graph()
    wide = g.add_input("w", TensorType(np.dtype(np.float64), (5,)))
    g.nodes.remove(wide.node)
    g.nodes.insert(0, wide.node)
    n["mul"].inputs = (n["x"].output, wide)
    msg = verify_error(g)
    assert "= mul(" in msg and "rule rejects the operands" in msg and "could not be broadcast" in msg


def test_param_without_stored_value():
    g = Graph()
    x = g.add_input("x", F64_23)
    w = g.add_param("W", np.ones((3, 4)))
    mm = g.add_node(Op.MATMUL, (x, w))
    g.outputs = [mm.output]
    g.verify()
    del g.param_values["W"]
    msg = verify_error(g)
    assert "node 1 (%1 = param() \"W\")" in msg and "parameter 'W' has no stored value" in msg


def test_duplicate_input_names():
    g = Graph()
    a = g.add_input("x", F64_23)
    b = g.add_input("x", F64_23)
    g.outputs = [g.add_node(Op.ADD, (a, b)).output]
    msg = verify_error(g)
    assert "node 1 (%1 = input() \"x\")" in msg and "the name 'x' is already used by an input" in msg


def test_param_named_like_an_input():
    g = Graph()
    a = g.add_input("x", F64_23)
    w = g.add_param("x", np.ones((2, 3)))
    g.outputs = [g.add_node(Op.ADD, (a, w)).output]
    msg = verify_error(g)
    assert "node 1" in msg and "the name 'x' is already used by an input" in msg


def test_undefined_graph_output():
    g, n = small_graph()
    other = Graph("other")
    g.outputs = [n["neg"].output, other.add_input("y", F64_23)]
    msg = verify_error(g)
    assert "graph output 1 (f64[2,3] from input) is not defined by any node of the graph" in msg


def test_output_of_a_removed_node():
    g, n = small_graph()
    g.nodes.remove(n["neg"])
    msg = verify_error(g)
    assert "which is not a node of this graph" in msg and "erase_node" in msg


def test_use_lists_out_of_date():
    g, n = small_graph()
    n["neg"]._inputs = (n["x"].output,)  # bypasses the setter, so x does not know its new user
    msg = verify_error(g)
    assert "node 3 (%3 = neg(%0))" in msg and "lists this node 0 times among its users" in msg
