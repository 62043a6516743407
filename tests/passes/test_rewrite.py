"""Pattern rewriting (``replace_pattern``) and the rule table (``simplify``), each checked against eager NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.support import views_samples
from graph_lab import F, GraphBuilder, GraphEditError, replace_pattern, run, simplify, trace


def same_bits(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def gelu_by_hand(h):
    """The seed's GELU, written out as in gelu_mlp."""
    return 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))


def gelu_op(h):
    return F.gelu(h)


SPECIAL = np.array([0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e300, -1e300, np.inf, -np.inf, np.nan, 3.0, -3.0])


def test_the_hand_written_gelu_is_the_gelu_op_bit_for_bit():
    x = np.concatenate([np.random.default_rng(0).standard_normal(10_000) * 4, SPECIAL])
    with np.errstate(all="ignore"):
        assert same_bits(gelu_by_hand(x), F.gelu(x))


def test_gelu_composite_in_the_seed_model_becomes_one_op():
    g = views_samples.make_graph("gelu_mlp")
    inputs = views_samples.make_inputs(g)
    before = run(g, inputs)[0]
    matches = replace_pattern(g, gelu_by_hand, gelu_op)
    assert len(matches) == 1
    assert [n.op for n in g.nodes if n.op not in ("input", "param", "const")] == ["matmul", "gelu", "matmul"]
    assert matches[0].inputs == {"h": g.nodes[3].output} and len(matches[0].nodes) == 9
    assert matches[0].replacement[0].op == "gelu" and matches[0].replacement[0].loc == matches[0].anchor.loc
    assert same_bits(run(g, inputs)[0], before)
    assert same_bits(run(g, inputs)[0], views_samples.eager("gelu_mlp", inputs)[0])
    assert same_bits(g.to_python()(**inputs)[0], before)


def test_chained_matches_are_all_replaced():
    def model(x):
        return gelu_by_hand(gelu_by_hand(x) * 2.0)

    g = trace(model, {"x": (8,)})
    x = np.concatenate([SPECIAL[:-4], [0.5, -0.5, 2.0, -2.0]])
    assert len(replace_pattern(g, gelu_by_hand, gelu_op)) == 2
    assert [n.op for n in g.nodes if n.op not in ("input", "const")] == ["gelu", "mul", "gelu"]
    with np.errstate(all="ignore"):
        assert same_bits(run(g, {"x": x})[0], model(x))


def test_softmax_pattern_with_a_value_used_twice_and_a_rank_dependent_axis():
    def softmax_by_hand(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def model(x):
        return softmax_by_hand(x @ x.T) * 3.0

    g = trace(model, {"x": (4, 3)})
    with pytest.raises(GraphEditError, match=r"could not trace softmax_by_hand with shapes \{'x': \(\)\}.*axis -1 is "
                                             r"out of bounds(.|\n)*Pass shapes="):
        replace_pattern(g, softmax_by_hand, lambda x: F.softmax(x, axis=-1))  # scalars by default
    matches = replace_pattern(g, softmax_by_hand, lambda x: F.softmax(x, axis=-1), shapes={"x": (2, 2)})
    assert len(matches) == 1 and "softmax" in [n.op for n in g.nodes]
    x = np.random.default_rng(3).standard_normal((4, 3))
    assert same_bits(run(g, {"x": x})[0], model(x))


def test_no_match_when_an_inner_value_is_used_outside():
    def model(h):
        return gelu_by_hand(h), h * h * 0.044715  # shares nothing: still a match
    def leaky(h):
        inner = math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)
        return 0.5 * h * (1.0 + F.tanh(inner)), inner

    assert len(replace_pattern(trace(model, {"h": (3,)}), gelu_by_hand, gelu_op)) == 1
    g = trace(leaky, {"h": (3,)})
    text = str(g)
    assert replace_pattern(g, gelu_by_hand, gelu_op) == [] and str(g) == text


def test_constants_must_match_bit_for_bit():
    g = trace(lambda x: x + 0.0, {"x": (3,)})
    assert replace_pattern(g, lambda x: x + (-0.0), lambda x: x) == []
    g = trace(lambda x: 0.5 * x * (1.0 + F.tanh(0.7978845608 * (x + 0.044715 * x * x * x))), {"x": (3,)})
    assert replace_pattern(g, gelu_by_hand, gelu_op) == []  # a rounded constant is another function


def test_one_wildcard_is_one_value():
    g = trace(lambda a, b: a * F.sigmoid(b), {"a": (3,), "b": (3,)})
    assert replace_pattern(g, lambda x: x * F.sigmoid(x), lambda x: F.relu(x)) == []
    g = trace(lambda a, b: a * F.sigmoid(a) + b, {"a": (3,), "b": (3,)})
    matches = replace_pattern(g, lambda x: x * F.sigmoid(x), lambda x: F.relu(x))
    assert len(matches) == 1 and [n.op for n in g.nodes][2:] == ["relu", "add"]


def test_bad_patterns_and_replacements_are_refused():
    g = views_samples.make_graph("gelu_mlp")
    with pytest.raises(GraphEditError, match="one value computed by at least one operation"):
        replace_pattern(g, lambda x: x, gelu_op)
    with pytest.raises(GraphEditError, match=r"must take the pattern's arguments \['h'\]"):
        replace_pattern(g, gelu_by_hand, lambda y: F.gelu(y))
    text = str(g)
    with pytest.raises(GraphEditError, match=r"the replacement computes f64\[\] where the match at %16 = mul\(%5, "
                                             r"%15\).* computes f64\[4,16\]; a replacement must compute the same"):
        replace_pattern(g, gelu_by_hand, lambda h: F.gelu(h).sum())
    with pytest.raises(GraphEditError, match=r"does not fit the match at %16 = mul.*: reshape: cannot reshape"):
        replace_pattern(g, gelu_by_hand, lambda h: F.gelu(h).reshape(-1))  # -1 was resolved for a scalar
    assert str(g) == text  # refused before anything changed


# --- simplify: the rule table

def test_simplify_applies_each_exact_rule_and_keeps_the_bits():
    def model(x, n):
        a = (x * 1) * 1.0 / 1.0
        b = 1.0 * (a + (-0.0)) - 0.0
        c = -(-b)
        d = c.transpose(1, 0, 2).transpose(1, 2, 0).transpose(0, 2, 1)  # (0, 2, 1) after two; identity after three
        e = d.reshape(6, 4).reshape(4, 6).reshape(2, 3, 4)
        return e, n + 0, -0.0 + n

    g = trace(model, {"x": (2, 3, 4), "n": ((5,), "int64")})
    inputs = {"x": np.random.default_rng(0).standard_normal((2, 3, 4)), "n": np.arange(5)}
    inputs["x"][0, 0, :2] = [-0.0, 0.0]
    before = run(g, inputs)
    report = simplify(g)
    names = [line.split(":")[0] for line in report]
    for rule in ("x * 1 -> x", "1 * x -> x", "x / 1 -> x", "x + (-0.0) -> x", "x - 0.0 -> x", "-(-x) -> x",
                 "transpose(transpose(x)) -> transpose(x)", "transpose(x, identity) -> x",
                 "reshape(reshape(x)) -> reshape(x)", "reshape(x, x.shape) -> x", "x + 0 -> x (integer x)"):
        assert rule in names, (rule, report)
    assert report[-1].startswith("removed ") and report[-1].endswith("nodes that nothing reads any more")
    # the first two outputs became the inputs themselves: eager returned new arrays, so they are copied
    assert [line.split(":")[0] for line in report[-3:-1]] == ["output 0 copied", "output 1 copied"]
    assert [g.outputs[i].node.op for i in range(2)] == ["copy", "copy"]
    assert [g.outputs[i].node.inputs[0] for i in range(2)] == [n.output for n in g.nodes if n.op == "input"]
    assert g.count() == 3 and g.outputs[2].node.op == "add"  # -0.0 + n is left: for i64 n it is f64
    for got, expected in zip(run(g, inputs), before, strict=True):
        assert same_bits(got, expected)
    assert simplify(g) == []


def test_simplify_leaves_what_is_not_an_identity():
    def model(x, n):
        return x + 0.0, x - (-0.0), 0.0 + x, n * 1.0, n / 1, x * 2.0, x.transpose(1, 0)

    g = trace(model, {"x": (2, 2), "n": ((2,), "int64")})
    text = str(g)
    assert simplify(g) == [] and str(g) == text
    assert np.signbit(np.float64(-0.0) + 0.0) == False  # noqa: E712  (why x + 0.0 -> x is wrong)


def test_simplify_report_names_rule_and_node():
    b = GraphBuilder("g")
    x = b.input("x", (3,))
    g = b.output(b.mul(x, 1.0))
    where = g.nodes[2].loc
    assert simplify(g) == [f"x * 1 -> x: %2 = mul(%0, %1) [{where}]",
                           "output 0 copied: a rewrite made it the same array as an input or another output",
                           "removed 1 nodes that nothing reads any more"]
    assert g.outputs[0].node.op == "copy" and g.outputs[0].node.inputs[0] is x
