"""nn.symbolic_trace (call_module leaves, FX's table and code), GraphModule, inline_modules, fuse_conv_bn and the
module transformer, each against the eager model."""

from __future__ import annotations

import numpy as np
import pytest

from graph_lab import F, nn, parse, run
from graph_lab.errors import GraphEditError, TraceError
from graph_lab.nn.graph_module import fx_rows

RNG = np.random.default_rng(4)


class ConvNet(nn.Module):
    """The course note's section 4 model: nested Sequential features, a classifier with flatten."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(8 * 4 * 4, 10))

    def forward(self, x):
        return F.softmax(self.classifier(self.features(x)), axis=-1)


def trained_convnet() -> ConvNet:
    m = ConvNet()
    m(RNG.standard_normal((4, 3, 8, 8)))  # running statistics that are not the initial ones
    return m.eval()


def test_rows_are_fx_rows():
    gm = nn.symbolic_trace(trained_convnet(), {"x": (2, 3, 8, 8)})
    assert fx_rows(gm.graph) == [
        ["placeholder", "x", "x", "()", "{}"],
        ["call_module", "features_0", "features.0", "(x,)", "{}"],
        ["call_module", "features_1", "features.1", "(features_0,)", "{}"],
        ["call_module", "features_2", "features.2", "(features_1,)", "{}"],
        ["call_module", "features_3", "features.3", "(features_2,)", "{}"],
        ["call_module", "classifier_0", "classifier.0", "(features_3,)", "{}"],
        ["call_module", "classifier_1", "classifier.1", "(classifier_0,)", "{}"],
        ["call_function", "softmax", "F.softmax", "(classifier_1,)", "{axis: 1}"],
        ["output", "output", "output", "(softmax,)", "{}"],
    ]
    assert gm.code.splitlines()[:3] == ["def forward(self, x):", "    features_0 = getattr(self.features, '0')(x)",
                                        "    features_1 = getattr(self.features, '1')(features_0)"]
    assert gm.code.splitlines()[-1] == "    return softmax"


def test_graph_module_runs_like_eager_and_reads_parameters_per_call():
    model = trained_convnet()
    gm = nn.symbolic_trace(model, {"x": (2, 3, 8, 8)})
    x = RNG.standard_normal((2, 3, 8, 8))
    np.testing.assert_array_equal(gm(x), model(x))
    np.testing.assert_array_equal(run(gm.graph, {"x": x})[0], model(x))
    model.classifier[1].weight *= 2.0  # an in-place update (what an optimizer does)
    np.testing.assert_array_equal(gm(x), model(x))
    assert gm.get_submodule("features.0") is model.features[0]


def test_ir_text_prints_and_parses_back_call_module_nodes():
    gm = nn.symbolic_trace(trained_convnet(), {"x": (2, 3, 8, 8)})
    text = str(gm.graph)
    assert 'call_module %0, %1, %2 target="features.0" n_args=1' in text
    again = parse(text, gm.graph.param_values)
    assert str(again) == text
    x = RNG.standard_normal((2, 3, 8, 8))
    np.testing.assert_array_equal(run(again, {"x": x})[0], gm(x))


def test_inline_modules_gives_plain_ops_that_compute_the_same():
    gm = nn.symbolic_trace(trained_convnet(), {"x": (2, 3, 8, 8)})
    flat = nn.inline_modules(gm)
    assert [str(n.op) for n in flat.nodes if n.op not in ("input", "param", "const")] == \
        ["conv2d", "batch_norm", "relu", "max_pool2d", "reshape", "linear", "softmax"]
    x = RNG.standard_normal((2, 3, 8, 8))
    np.testing.assert_array_equal(run(flat, {"x": x})[0], gm(x))


def test_hooks_fire_in_eager_and_graph_module_calls_not_while_tracing():
    model = trained_convnet()
    counts = {"pre": 0, "post": 0}
    model.features[0].register_forward_pre_hook(lambda m, a: counts.__setitem__("pre", counts["pre"] + 1))
    model.features[0].register_forward_hook(lambda m, a, o: counts.__setitem__("post", counts["post"] + 1))
    x = RNG.standard_normal((2, 3, 8, 8))
    model(x)
    assert counts == {"pre": 1, "post": 1}
    gm = nn.symbolic_trace(model, {"x": (2, 3, 8, 8)})
    assert counts == {"pre": 1, "post": 1}  # tracing fires no hook
    gm(x)
    assert counts == {"pre": 2, "post": 2}  # the GraphModule calls the module, hooks and all


def test_is_leaf_module_policy_traces_through_non_leaves():
    class NoConvLeaf(nn.Tracer):
        def is_leaf_module(self, module, name):
            return not isinstance(module, nn.Conv2d) and super().is_leaf_module(module, name)

    model = trained_convnet()
    gm = nn.symbolic_trace(model, {"x": (2, 3, 8, 8)}, tracer=NoConvLeaf())
    rows = fx_rows(gm.graph)
    assert ["call_function", "conv2d", "F.conv2d", "(x, features_0_weight, features_0_bias)",
            "{stride: (1, 1), padding: (1, 1), dilation: (1, 1), groups: 1, has_bias: True}"] in rows
    assert ["get_attr", "features_0_weight", "features.0.weight", "()", "{}"] in rows
    x = RNG.standard_normal((2, 3, 8, 8))
    np.testing.assert_array_equal(gm(x), model(x))


def test_python_side_effects_run_once_at_trace_time():
    class Counting(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.counter = 0

        def forward(self, x):
            self.counter += 1
            return self.fc(x)

    m = Counting()
    gm = nn.symbolic_trace(m, {"x": (1, 2)})
    assert m.counter == 1
    gm(np.ones((1, 2)))
    gm(np.ones((1, 2)))
    assert m.counter == 1  # the graph has no trace of the Python side effect


def test_training_mode_batch_norm_updates_its_buffers_through_the_graph_module():
    model = ConvNet()
    gm = nn.symbolic_trace(model, {"x": (2, 3, 8, 8)})
    assert 'writes="running_mean,running_var,num_batches_tracked"' in str(gm.graph)
    x = RNG.standard_normal((2, 3, 8, 8))
    gm(x)
    assert int(model.features[1].num_batches_tracked) == 1
    with pytest.raises(GraphEditError, match="writes its buffers running_mean"):
        nn.inline_modules(gm)


def test_fuse_conv_bn_numerics_and_the_user_model_untouched():
    model = trained_convnet()
    gm = nn.symbolic_trace(model, {"x": (2, 3, 8, 8)})
    x = RNG.standard_normal((2, 3, 8, 8))
    before = gm(x)
    report = nn.fuse_conv_bn(gm)
    assert report == ["fused features.0 -> features.1 into features.0"]
    assert [r[2] for r in fx_rows(gm.graph) if r[0] == "call_module"] == \
        ["features.0", "features.2", "features.3", "classifier.0", "classifier.1"]
    np.testing.assert_allclose(gm(x), before, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(run(gm.graph, {"x": x})[0], before, rtol=1e-7, atol=1e-7)
    assert isinstance(model.features[1], nn.BatchNorm2d)  # the model's own tree is unchanged
    np.testing.assert_array_equal(model(x), before)
    h = gm.get_submodule("features.0")(x)  # the fused convolution is conv then batch norm in one
    ref = model.features[1](model.features[0](x))
    np.testing.assert_allclose(h, ref, rtol=1e-9, atol=1e-9)


def test_fuse_conv_bn_refuses_in_training_mode_and_with_a_second_reader():
    train_gm = nn.symbolic_trace(ConvNet(), {"x": (2, 3, 8, 8)})
    report = nn.fuse_conv_bn(train_gm)
    assert len(report) == 1 and report[0].startswith("kept features.0 -> features.1: features.1 is in training mode")

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)

        def forward(self, x):
            h = self.conv(x)
            return self.bn(h) + h

    gm = nn.symbolic_trace(Residual().eval(), {"x": (1, 2, 3, 3)})
    report = nn.fuse_conv_bn(gm)
    assert report[0].startswith("kept conv -> bn: the output of conv is also read by")
    assert sum(1 for r in fx_rows(gm.graph) if r[0] == "call_module") == 2


def test_module_transformer_replaces_a_module_call_by_a_subgraph():
    model = trained_convnet()
    gm = nn.symbolic_trace(model, {"x": (2, 3, 8, 8)})

    class ReluToSoftplusLike(nn.ModuleTransformer):
        def call_module(self, node, target, args):
            if isinstance(self.module.get_submodule(target), nn.ReLU):
                b = self.builder
                return (b.log1p(b.exp(args[0])),)
            return super().call_module(node, target, args)

    new = ReluToSoftplusLike(gm).transform()
    assert "relu" not in str(new) and "log1p" in str(new)
    x = RNG.standard_normal((2, 3, 8, 8))
    h = model.features[1](model.features[0](x))
    want = model.classifier(model.features[3](np.log1p(np.exp(h))))
    np.testing.assert_allclose(run(new, {"x": x})[0], F.softmax(want, axis=-1), rtol=1e-12)


def test_errors_name_the_problem():
    with pytest.raises(TraceError, match="takes a graph_lab.nn.Module"):
        nn.symbolic_trace(lambda x: x, {"x": (2,)})

    class Stray(nn.Module):
        def forward(self, x):
            return nn.ReLU()(x)

    with pytest.raises(TraceError, match="not a submodule"):
        nn.symbolic_trace(Stray(), {"x": (2,)})
