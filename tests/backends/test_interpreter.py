"""``Interpreter`` (one method per op family, hooks) and ``Transformer`` (a graph in, a new graph out)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support import views_samples
from graph_lab import GraphEditError, GraphExecutionError, Interpreter, Transformer, run
from graph_lab.backends.interpreter import FAMILIES
from graph_lab.ops import opdef


def same_bits(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", list(views_samples.SAMPLES))
def test_interpreter_equals_run_bit_for_bit(name):
    g = views_samples.make_graph(name)
    inputs = views_samples.make_inputs(g)
    for got, expected in zip(Interpreter(g).run(inputs), run(g, inputs), strict=True):
        assert same_bits(got, expected)


def test_hook_records_every_intermediate_shape_and_range():
    g = views_samples.make_graph("gelu_mlp")
    x = views_samples.make_inputs(g)["x"]
    interp = Interpreter(g)
    seen = []
    handle = interp.register_hook(lambda node, value: seen.append(
        (node, np.shape(value), float(np.min(value)), float(np.max(value)))))
    (y,) = interp.run({"x": x})
    assert [s[0] for s in seen] == g.nodes
    assert all(shape == node.output.type.shape for node, shape, _, _ in seen)
    last = seen[-1]
    assert last[2] == y.min() and last[3] == y.max()
    tanh = next(s for s in seen if s[0].op == "tanh")
    assert -1.0 <= tanh[2] <= tanh[3] <= 1.0
    handle.remove()
    interp.run({"x": x})
    assert len(seen) == len(g.nodes)


def test_one_method_per_family_can_be_overridden():
    calls = {family: 0 for family in FAMILIES}

    class Counting(Interpreter):
        pass

    for family in FAMILIES:
        def counted(self, node, args, family=family):
            if self.graph is self.top:  # nodes inside regions run through these methods too, once per run
                calls[family] += 1
            return getattr(Interpreter, family)(self, node, args)
        setattr(Counting, family, counted)

    for name in views_samples.SAMPLES:
        g = views_samples.make_graph(name)
        interp = Counting(g)
        interp.top = g
        interp.run(views_samples.make_inputs(g))
    total = {family: 0 for family in FAMILIES}
    for name in views_samples.SAMPLES:
        for node in views_samples.make_graph(name).nodes:
            total[opdef(node.op).family] += 1
    assert calls == total and all(total.values())


def test_a_failing_node_is_named_as_run_names_it():
    g = views_samples.make_graph("gelu_mlp")
    with pytest.raises(GraphExecutionError) as from_run:
        run(g, {"x": np.ones((4, 7))})
    with pytest.raises(GraphExecutionError) as from_interp:
        Interpreter(g).run({"x": np.ones((4, 7))})
    assert str(from_run.value).startswith(str(from_interp.value))  # run() adds why the inputs differ
    assert from_interp.value.node is g.nodes[3]


def test_parameters_given_by_name_replace_stored_ones():
    g = views_samples.make_graph("gelu_mlp")
    inputs = {**views_samples.make_inputs(g), "p['W2']": np.zeros((16, 8))}
    assert not Interpreter(g).run(inputs)[0].any()


# --- Transformer

@pytest.mark.parametrize("name", list(views_samples.SAMPLES))
def test_identity_transform_prints_the_same_text(name):
    g = views_samples.make_graph(name)
    new = Transformer(g).transform()
    assert new is not g and str(new) == str(g)
    assert not set(map(id, new.nodes)) & set(map(id, g.nodes))
    inputs = views_samples.make_inputs(g)
    for got, expected in zip(run(new, inputs), run(g, inputs), strict=True):
        assert same_bits(got, expected)


class TanhAsExp(Transformer):
    """tanh(x) = (exp(2x) - 1) / (exp(2x) + 1)."""

    def unary(self, node, args):
        if node.op != "tanh":
            return super().unary(node, args)
        b = self.builder
        e = b.exp(b.mul(args[0], 2.0))
        return b.div(b.sub(e, 1.0), b.add(e, 1.0))


def test_transformer_replaces_tanh_and_the_result_equals_eager():
    g = views_samples.make_graph("gelu_mlp")
    new = TanhAsExp(g).transform()
    assert "tanh" not in [n.op for n in new.nodes] and new.count() == g.count() + 4  # tanh -> mul, exp, sub, add, div
    tanh_line = next(n.loc for n in g.nodes if n.op == "tanh")
    assert all(n.loc == tanh_line for n in new.nodes if n.op in ("exp", "sub", "div"))
    inputs = views_samples.make_inputs(g)
    (got,) = run(new, inputs)
    (expected,) = views_samples.eager("gelu_mlp", inputs)
    assert np.max(np.abs(got - expected)) <= 1e-12  # another formula for tanh: close, not the same bits


def test_transformer_failure_names_the_node():
    class Broken(Transformer):
        def linalg(self, node, args):
            return self.builder.matmul(args[0], args[0])

    with pytest.raises(GraphEditError, match=r"while transforming %3 = matmul\(%0, %1\).*OpError: matmul: inner"):
        Broken(views_samples.make_graph("gelu_mlp")).transform()


def test_transformer_is_not_run():
    with pytest.raises(TypeError, match="call transform"):
        Transformer(views_samples.make_graph("gelu_mlp")).run({})
