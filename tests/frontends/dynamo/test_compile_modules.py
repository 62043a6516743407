"""compile() of graph_lab.nn modules, hooks in compiled calls, and grad under compile(), each against eager.

The reference is always the same model run eagerly (a twin with the same state, or the same model before the
compiled call), and every comparison is bit for bit: the captured graph runs the NumPy calls eager code runs, in
the same order.
"""

import numpy as np
import pytest

import graph_lab
from graph_lab import F, nn
from graph_lab.optim import SGD


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _twins(make):
    nn.manual_seed(0)
    a = make()
    b = make()
    b.load_state_dict(a.state_dict())
    return a, b


def _mlp():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


class _CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.5)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.drop(self.act(self.bn(self.conv(x))))


class _Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 2), "reg": nn.Linear(4, 1)})

    def forward(self, x, task):
        return self.heads[task](F.relu(self.body(x)))


def _graph_inputs(report) -> set:
    return {n.attrs["name"] for g in report.graphs for n in g.input_nodes}


# --- parameters: read from the module on every call, never constants


def test_compiled_model_is_one_graph_with_the_parameters_as_inputs():
    model = _mlp()
    x = _x(5, 4)
    report = graph_lab.explain(model)(x)
    assert (report.graph_count, report.graph_break_count) == (1, 0)
    assert all(n.op != "const" or np.size(n.attrs["value"]) <= 1 for g in report.graphs for n in g.nodes)
    assert sum("_parameters']['weight']" in name for name in _graph_inputs(report)) == 2
    np.testing.assert_array_equal(graph_lab.compile(model)(x), model(x))


def test_a_write_into_a_parameter_or_a_new_parameter_gives_the_new_result():
    model = _mlp()
    cm = graph_lab.compile(model)
    x = _x(5, 4)
    first = cm(x)
    np.testing.assert_array_equal(first, model(x))
    model[0].weight[...] *= 2.0  # in place
    np.testing.assert_array_equal(cm(x), model(x))
    assert not np.array_equal(cm(x), first)
    model[2].bias = nn.Parameter(np.full(3, 7.0))  # a new array object
    np.testing.assert_array_equal(cm(x), model(x))
    setattr(model, "2", nn.Linear(8, 3))  # a new submodule
    np.testing.assert_array_equal(cm(x), model(x))
    assert cm.__func__.recompiles == 0  # (same shapes, dtypes and structure: the same graph, new inputs)


def test_optimizer_steps_between_compiled_calls_are_seen():
    eager, compiled = _twins(_mlp)
    cm = graph_lab.compile(compiled)
    x, y = _x(6, 4), _x(6, 3, seed=1)
    opts = [SGD(m, lr=0.1, momentum=0.9) for m in (eager, compiled)]
    for _ in range(3):
        for model, run, opt in ((eager, eager, opts[0]), (compiled, cm, opts[1])):
            out = run(x)
            opt.step({k: (out - y).sum() * np.ones_like(p) * 1e-3 for k, p in model.named_parameters()})
        np.testing.assert_array_equal(cm(x), eager(x))


def test_compile_of_a_function_calling_a_model_and_of_forward():
    model = _mlp()
    x = _x(5, 4)

    def loss(x):
        return F.mean(model(x) ** 2)

    assert graph_lab.compile(loss)(x) == loss(x)
    np.testing.assert_array_equal(graph_lab.compile(model.forward)(x), model.forward(x))
    assert graph_lab.explain(loss)(x).graph_count == 1


# --- training and eval mode


def test_eval_mode_is_guarded_and_matches_eager():
    eager, compiled = _twins(_CNN)
    eager.eval(), compiled.eval()
    cm = graph_lab.compile(compiled)
    x = _x(2, 3, 6, 6)
    np.testing.assert_array_equal(cm(x), eager(x))
    report = graph_lab.explain(compiled)(x)
    assert (report.graph_count, report.graph_break_count) == (1, 0)
    assert any("['bn'].training == False" in g for g in report.guards)


def test_training_mode_runs_dropout_and_batch_norm_statistics_as_eager():
    eager, compiled = _twins(_CNN)
    cm = graph_lab.compile(compiled)
    x = _x(2, 3, 6, 6)
    cm(x), eager(x)  # (a compiled call in training mode first: the later eval() must not reuse its entry)
    for m in (eager, compiled):
        m.drop.generator = np.random.default_rng(5)
    for step in range(3):
        np.testing.assert_array_equal(cm(x), eager(x))
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            np.testing.assert_array_equal(getattr(compiled.bn, name), getattr(eager.bn, name))
    assert int(compiled.bn.num_batches_tracked) == 4
    eager.eval(), compiled.eval()
    np.testing.assert_array_equal(cm(x), eager(x))
    eager.train(), compiled.train()
    np.testing.assert_array_equal(cm(x), eager(x))


def test_module_dict_key_is_guarded():
    model = _Heads()
    cm = graph_lab.compile(model)
    x = _x(3, 4)
    for task in ("cls", "reg", "cls"):
        np.testing.assert_array_equal(cm(x, task), model(x, task))
    assert cm.__func__.recompiles == 1
    report = graph_lab.explain(model)(x, "reg")
    assert "args[1] == 'reg'" in "\n".join(report.guards)
    with pytest.raises(KeyError, match="ModuleDict has no key 'seg'"):
        cm(x, "seg")


# --- hooks


def test_hooks_fire_in_compiled_calls_in_eager_order_and_removal_takes_effect():
    model = _mlp()
    cm = graph_lab.compile(model)
    x = _x(5, 4)
    seen = []
    handles = [model[0].register_forward_pre_hook(lambda m, args: seen.append("pre 0")),
               model[0].register_forward_hook(lambda m, args, out: seen.append("post 0")),
               model.register_forward_hook(lambda m, args, out: seen.append("post model"))]
    model(x)
    eager_order = list(seen)
    seen.clear()
    np.testing.assert_array_equal(cm(x), model(x))
    assert seen == eager_order * 2 == ["pre 0", "post 0", "post model"] * 2
    handles[0].remove()
    seen.clear()
    cm(x)
    assert seen == ["post 0", "post model"]
    for h in handles:
        h.remove()
    seen.clear()
    cm(x)
    assert seen == []


def test_a_hook_that_changes_the_output_is_captured_and_removed():
    model = _mlp()
    cm = graph_lab.compile(model)
    x = _x(5, 4)
    plain = model(x)
    handle = model[2].register_forward_hook(lambda m, args, out: out * 2.0)
    np.testing.assert_array_equal(cm(x), plain * 2.0)
    assert graph_lab.explain(model)(x).graph_break_count == 0  # the hook's code is in the graph
    handle.remove()
    np.testing.assert_array_equal(cm(x), plain)


def test_hooks_do_not_fire_during_symbolic_trace():
    model = _mlp()
    seen = []
    model[0].register_forward_hook(lambda m, args, out: seen.append(1))
    nn.symbolic_trace(model, {"x": (5, 4)})
    assert seen == []


# --- grad under compile


W = _x(4, 3, seed=3)


def _loss(x):
    return F.sum(F.tanh(x @ W) ** 2)


def test_compile_of_grad_equals_grad_and_reads_globals_on_each_call():
    global W
    x = _x(5, 4)
    cg = graph_lab.compile(graph_lab.grad(_loss))
    np.testing.assert_array_equal(cg(x), graph_lab.grad(_loss)(x))
    saved = W.copy()
    try:
        W[...] = 0.5  # an array the loss reads from a global: a graph input, not a constant
        np.testing.assert_array_equal(cg(x), graph_lab.grad(_loss)(x))
        W = saved * 3.0
        np.testing.assert_array_equal(cg(x), graph_lab.grad(_loss)(x))
    finally:
        W = saved
    value, g = graph_lab.compile(graph_lab.value_and_grad(_loss))(x)
    v2, g2 = graph_lab.value_and_grad(_loss)(x)
    assert value == v2
    np.testing.assert_array_equal(g, g2)


def test_grad_of_a_compiled_function_equals_grad():
    x = _x(5, 4)
    compiled = graph_lab.compile(_loss)
    compiled(x)  # (captured once already)
    np.testing.assert_array_equal(graph_lab.grad(compiled)(x), graph_lab.grad(_loss)(x))


def test_compiled_training_step_equals_the_eager_step():
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((4, 8)) * 0.5, "b1": np.zeros(8), "w2": rng.standard_normal((8, 1)) * 0.5}
    x, y = rng.standard_normal((16, 4)), rng.standard_normal((16, 1))

    def loss_fn(p, x, y):
        return F.mean((F.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] - y) ** 2)

    opt = SGD(params, lr=0.1, momentum=0.9)

    def step(p, state, x, y):
        loss, grads = graph_lab.value_and_grad(loss_fn)(p, x, y)
        new_p, new_state = opt.update(p, grads, state)
        return loss, new_p, new_state

    compiled = graph_lab.compile(step)
    eager_state = compiled_state = (params, opt.init(params))
    losses = []
    for _ in range(5):
        le, *eager_state = step(*eager_state, x, y)
        lc, *compiled_state = compiled(*compiled_state, x, y)
        assert lc == le
        for k in params:
            np.testing.assert_array_equal(compiled_state[0][k], eager_state[0][k])
        losses.append(float(lc))
    assert losses[-1] < losses[0]
    assert graph_lab.explain(step)(params, opt.init(params), x, y).graph_count == 1
