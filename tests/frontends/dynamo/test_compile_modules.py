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


# --- the structure guard: a model's structure checked once per change, every guarantee kept


def _hit(cm) -> bool:
    """Whether the last call of ``compile(model)`` was a cache hit of the generated fast path."""
    return cm.__func__._fast_hit is not None


def _mlp_of(depth):
    layers = [nn.Linear(4, 8), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(8, 8), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(8, 3))


def test_a_model_has_few_guards_and_their_number_does_not_grow_with_depth():
    x = _x(5, 4)
    counts = {}
    for depth in (1, 4):
        report = graph_lab.explain(_mlp_of(depth))(x)
        assert (report.graph_count, report.graph_break_count) == (1, 0)
        counts[depth] = len(report.guards)
    assert counts[1] <= 30, counts
    assert counts[4] - counts[1] == 2 * 3  # (three more Linears: a weight and a bias guard each, nothing else)
    report = graph_lab.explain(_CNN().eval())(_x(2, 3, 6, 6))
    assert len(report.guards) <= 45, report.guards
    structure = [g for g in report.guards if g.startswith("the structure of self")]
    assert len(structure) == 1 and "['bn'].training == False" in structure[0]


def test_in_place_writes_and_new_parameters_are_seen_on_the_fast_path():
    model = _mlp()
    cm = graph_lab.compile(model)
    x = _x(5, 4)
    cm(x), cm(x)
    assert _hit(cm)
    model[0].weight[...] *= -1.5
    np.testing.assert_array_equal(cm(x), model(x))
    assert _hit(cm)
    model[2].weight = nn.Parameter(np.ones((3, 8)))
    np.testing.assert_array_equal(cm(x), model(x))
    model[2].weight = nn.Parameter(np.ones((5, 8)))  # another shape: a new graph
    model[2].bias = nn.Parameter(np.zeros(5))
    np.testing.assert_array_equal(cm(x), model(x))
    assert cm(x).shape == (5, 5)


def test_train_and_eval_switch_entries_on_the_fast_path():
    eager, compiled = _twins(lambda: nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.BatchNorm2d(1)))
    x = _x(2, 1, 5, 4)
    cm = graph_lab.compile(compiled)
    for m in (eager, compiled):
        m[1].generator = np.random.default_rng(3)
    for mode in ("eval", "eval", "train", "eval", "eval", "train", "eval"):
        for m in (eager, compiled):
            getattr(m, mode)()
        np.testing.assert_array_equal(cm(x), eager(x))
        np.testing.assert_array_equal(compiled[2].running_mean, eager[2].running_mean)
    eager[2].training = compiled[2].training = True  # (one submodule by assignment)
    np.testing.assert_array_equal(cm(x), eager(x))


def test_hooks_registered_after_compiling_fire_and_cleared_dicts_are_seen():
    model = _mlp()
    cm = graph_lab.compile(model)
    x = _x(5, 4)
    cm(x), cm(x)
    seen = []
    handle = model[1].register_forward_hook(lambda m, args, out: seen.append("post 1"))
    model[0].register_forward_pre_hook(lambda m, args: (args[0] * 2.0,))
    np.testing.assert_array_equal(cm(x), model(x))
    assert seen == ["post 1", "post 1"]
    handle.remove()
    seen.clear()
    np.testing.assert_array_equal(cm(x), model(x))
    assert seen == []
    model[0]._forward_pre_hooks.clear()  # (around Module's methods: the hook itself is read on every call)
    np.testing.assert_array_equal(cm(x), model(x))
    np.testing.assert_array_equal(cm(x), _mlp_eager_copy(model)(x))


def _mlp_eager_copy(model):
    copy = _mlp()
    copy.load_state_dict(model.state_dict())
    return copy


class _Scaled(nn.Module):
    shift = 1.0  # (a class attribute: not structure, read on every call)

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.scale = 2.0

    def forward(self, x):
        return self.fc(x) * self.scale + self.shift


def test_attributes_methods_and_classes_changed_after_compiling_are_seen():
    model = _Scaled()
    cm = graph_lab.compile(model)
    x = _x(3, 4)
    for _ in range(2):
        np.testing.assert_array_equal(cm(x), model(x))
    model.scale = 3.0  # an instance attribute
    np.testing.assert_array_equal(cm(x), model(x))
    _Scaled.shift = 5.0  # a class attribute
    np.testing.assert_array_equal(cm(x), model(x))
    model.fc.forward = lambda x: x[:, :2] * 10.0  # an instance attribute shadowing the method
    np.testing.assert_array_equal(cm(x), model(x))
    del model.fc.forward

    class Other(nn.Linear):
        pass

    model.fc.__class__ = Other
    np.testing.assert_array_equal(cm(x), model(x))
    Other.forward = lambda self, x: x[:, 1:3] - 1.0  # the class's method replaced
    np.testing.assert_array_equal(cm(x), model(x))
    _Scaled.shift = 1.0


def test_writes_around_modules_methods_are_seen_after_structure_changed():
    model = _CNN().eval()
    cm = graph_lab.compile(model)
    x = _x(2, 3, 6, 6)
    cm(x), cm(x)
    object.__setattr__(model.bn, "training", True)  # (around Module.__setattr__)
    nn.structure_changed()
    model.drop.generator = np.random.default_rng(1)
    twin = _CNN()
    twin.load_state_dict(model.state_dict())
    twin.eval()
    object.__setattr__(twin.bn, "training", True)
    twin.drop.generator = np.random.default_rng(1)
    np.testing.assert_array_equal(cm(x), twin(x))


def test_one_compiled_function_for_several_models_checks_each_models_structure():
    @graph_lab.compile
    def run(model, x):
        return model(x)

    a, b = _mlp(), _mlp()
    c = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3))
    b[0].register_forward_hook(lambda m, args, out: out + 1.0)
    x = _x(5, 4)
    for model in (a, b, c, a, b, c, a, a, b, b):
        np.testing.assert_array_equal(run(model, x), model(x))
    assert run.recompiles == 2


def test_a_structure_change_names_the_fact_that_changed_in_the_recompile_log():
    model = _mlp()
    cm = graph_lab.compile(model)
    x = _x(5, 4)
    cm(x), cm(x)
    setattr(model, "1", nn.GELU())
    np.testing.assert_array_equal(cm(x), model(x))
    assert cm.__func__.recompile_log[-1].endswith(
        "self._modules['1'] is a GELU, the cached graph was built for a ReLU (guard from containers.py:27)")


def test_assigning_a_submodule_again_keeps_its_place():
    model = _mlp()
    x = _x(5, 4)
    setattr(model, "1", nn.GELU())
    assert list(model._modules) == ["0", "1", "2"]
    np.testing.assert_array_equal(model(x), model[2](F.gelu(model[0](x))))
    model[0].weight = nn.Parameter(np.ones((8, 4)))
    assert list(model[0]._parameters) == ["weight", "bias"]
