"""script(): the corpus of functions with control flow on tensor data (tests/support/script_corpus.py) converted from
source, each graph equal to eager NumPy bit for bit on inputs that take every branch and every loop count; and
what script keeps that trace loses."""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from graph_lab import F, Interpreter, LazyRunner, Op, ScriptError, TraceError, parse, run, script, trace
from graph_lab.backends.prepared import prepare
from tests.support.script_corpus import CORPUS, Case, sign_branch
from tests.ops.test_ops import assert_same


def eager_outputs(case: Case, inputs: dict) -> list[np.ndarray]:
    args = [inputs[name].copy() for name in case.shapes] + ([case.params] if case.params is not None else [])
    out = case.fn(*args)
    return [np.asarray(v) for v in (out if isinstance(out, tuple) else (out,))]


def control_ops(g) -> set:
    found, pending = set(), [g]
    while pending:
        graph = pending.pop()
        for node in graph.nodes:
            if node.regions:
                found.add(node.op)
                pending += node.regions
    return found


def test_the_corpus_is_big_enough_and_has_every_kind_of_control_flow():
    assert len({c.fn for c in CORPUS}) >= 15
    kinds = set().union(*(control_ops(script(c.fn, c.shapes, c.params, loops=c.loops)) for c in CORPUS))
    assert kinds == {Op.COND, Op.WHILE_LOOP, Op.FORI_LOOP, Op.SCAN}


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
def test_scripted_graph_equals_eager_on_every_path(case: Case):
    g = script(case.fn, case.shapes, case.params, loops=case.loops)
    g.verify()
    assert control_ops(g), f"{case.id}: no control-flow node in\n{g}"
    compiled, prepared, back = g.to_python(), prepare(g), parse(str(g), g.param_values)
    assert str(back) == str(g)
    for inputs in case.inputs:
        want = eager_outputs(case, inputs)
        for how, got in [("run", run(g, inputs)), ("to_python", compiled(**inputs)),
                         ("prepare", prepare(g)(inputs)), ("Interpreter", Interpreter(g).run(inputs)),
                         ("run(parse(str(g)))", run(back, inputs))]:
            assert len(got) == len(want)
            for a, b in zip(got, want):
                assert_same(np.asarray(a), b, f"{case.id} {how} on {inputs}")
    del prepared


def test_loop_counts_include_zero_iterations():
    from tests.support.script_corpus import halve_until_small, collatz_steps, counted_loop
    assert halve_until_small(np.full(4, 0.1))[1] == 0
    assert collatz_steps(np.array(1))[1] == 0
    assert np.array_equal(counted_loop(np.arange(4.0), np.array(0)), np.zeros(4))


def test_specialize_is_wrong_on_the_other_sign_and_script_is_right():
    pos, neg = np.array([1.0, 2.0, 3.0, 4.0]), np.array([-1.0, -2.0, -3.0, -4.0])
    specialized = trace(sign_branch, {"x": (4,)}, mode="specialize", example={"x": pos})
    scripted = script(sign_branch, {"x": (4,)})
    assert Op.COND not in {n.op for n in specialized.nodes}  # the else branch is gone
    assert not np.array_equal(run(specialized, {"x": neg})[0], sign_branch(neg))  # silently wrong
    for x in (pos, neg):
        assert_same(run(scripted, {"x": x})[0], sign_branch(x), "script")
    with pytest.raises(TraceError, match="data-dependent value"):
        trace(sign_branch, {"x": (4,)})


def test_script_does_not_run_the_function():
    calls = []

    def f(x):
        calls.append(1)   # a side effect a graph cannot repeat: refused, and never run
        return x * 2.0

    with pytest.raises(ScriptError, match="side effect"):
        script(f, {"x": (2,)})
    assert calls == []

    def g(x):
        seen = []
        seen.append(x * 2.0)   # a list the function makes itself: fine
        return seen[0]

    assert script(g, {"x": (2,)}).count() == 1


def test_params_are_lifted_into_branches_by_name():
    def model(x, p):
        if x.sum() > 0:
            return np.tanh(x @ p["w1"])
        return x @ p["w2"] * 0.5

    rng = np.random.default_rng(0)
    p = {"w1": rng.standard_normal((3, 3)), "w2": rng.standard_normal((3, 3))}
    g = script(model, {"x": (2, 3)}, p)
    (cond,) = [n for n in g.nodes if n.op == Op.COND]
    assert cond.attrs["then"].input_names == cond.attrs["else"].input_names == ["x", "p['w1']", "p['w2']"]
    assert {n.op for n in g.nodes} == {"input", "param", "sum", "const", "gt", "cond"}  # both layers in regions


def test_fori_option_and_tensor_bounds():
    def f(x, n):
        acc = x
        for i in range(3):
            acc = acc * 0.5 + i
        for j in range(n):
            acc = acc + j
        return acc

    unrolled = script(f, {"x": (2,), "n": ((), "int64")})
    fori = script(f, {"x": (2,), "n": ((), "int64")}, loops="fori")
    assert [n.op for n in unrolled.nodes].count(Op.FORI_LOOP) == 1
    assert [n.op for n in fori.nodes].count(Op.FORI_LOOP) == 2
    for n in (0, 4):
        x = np.array([1.0, -2.0])
        for g in (unrolled, fori):
            assert_same(run(g, {"x": x, "n": np.array(n)})[0], f(x, np.array(n)), f"n={n}")


def test_python_control_flow_is_decided_while_converting():
    def f(x, scale=2.0):
        if x.ndim == 1:      # known now: no cond
            x = x * scale
        for k in [1, 2]:     # unrolled
            x = x + k
        return x if scale > 1 else -x

    g = script(f, {"x": (3,)})
    assert not control_ops(g) and [n.op for n in g.nodes if n.op not in ("input", "const")] == ["mul", "add", "add"]


def test_the_same_python_value_in_both_branches_stays_a_python_value():
    def f(x):
        if x.sum() > 0:
            n, y = 3, x * 2.0
        else:
            n, y = 3, x * 3.0
        return np.tile(y, n)   # n must be known now

    g = script(f, {"x": (2,)})
    for x in (np.ones(2), -np.ones(2)):
        assert_same(run(g, {"x": x})[0], f(x), "tile")


def test_a_number_from_both_branches_keeps_python_semantics():
    def f(x):
        k = 2 if x.sum() > 0 else 3     # a Python int either way
        return x * k

    x = np.ones(2, np.float32)
    g = script(f, {"x": ((2,), "float32")})
    (cond,) = [n for n in g.nodes if n.op == Op.COND]
    assert str(cond.output.type) == "int" and run(g, {"x": x})[0].dtype == np.float32


def test_python_number_carried_by_a_loop_that_eager_code_would_compute_in_float32_is_refused():
    def f(x):
        total = 0.0
        while x.sum() > 1.0:
            x = x * np.float32(0.5)
            total = total + x.sum()
        return x, total

    with pytest.raises(ScriptError, match=r"total starts as a Python number") as e:
        script(f, {"x": ((3,), "float32")})
    assert "np.float32(0.0)" in e.value.hint

    def fixed(x):
        total = np.float32(0.0)
        while x.sum() > 1.0:
            x = x * np.float32(0.5)
            total = total + x.sum()
        return x, total

    g = script(fixed, {"x": ((3,), "float32")})
    x = np.array([3.0, 2.0, 1.0], np.float32)
    for a, b in zip(run(g, {"x": x}), fixed(x)):
        assert_same(a, np.asarray(b), "float32 total")


def test_writing_into_an_array_a_branch_may_have_passed_through_is_refused():
    def f(x):
        y = x.copy()
        z = y if x.sum() > 0 else y * 2.0   # on one path z *is* y
        z[0] = 100.0                        # eager: changes y too on that path
        return y

    with pytest.raises(ScriptError, match="may be the\\s+same array"):
        script(f, {"x": (3,)})


def test_F_control_flow_in_a_scripted_function_and_in_lazy_tensors():
    def f(x):
        return F.while_loop(lambda c: c[0].sum() > 1.0, lambda c: (c[0] * 0.5, c[1] + 1), (x, 0))

    g = script(f, {"x": (3,)})
    x = np.array([4.0, 2.0, 1.0])
    want = f(x)
    for a, b in zip(run(g, {"x": x}), want):
        assert_same(a, np.asarray(b), "while_loop")
    lr = LazyRunner()
    out = F.cond(lr.tensor(x).sum() > 0, lambda a: a * 2.0, lambda a: -a, lr.tensor(x))
    assert_same(lr.materialize(out), x * 2.0, "lazy cond")
    assert lr.graphs == [3]  # one graph: sum, gt and the cond (no break)


def test_compile_runs_F_cond_right():
    def model(x):
        return F.cond(x.sum() > 0, lambda a: np.tanh(a), lambda a: -a, x)

    cf = graph_lab.compile(model)
    for x in (np.ones(3), -np.ones(3)):
        assert_same(cf(x), model(x), "compile")
    # compile() captures the branches from their bytecode into the regions of one cond node, as trace and
    # script record F.cond
    report = graph_lab.explain(model)(np.ones(3))
    assert (report.graph_count, report.graph_break_count) == (1, 0)
    assert any(n.op == "cond" for n in report.graphs[0].nodes)


def test_symbolic_sizes_flow_into_regions():
    from tests.support.script_corpus import branch_inside_loop, halve_until_small, sign_branch

    for fn in (sign_branch, halve_until_small, branch_inside_loop):
        g = script(fn, {"x": ("N",)})
        assert str(parse(str(g))) == str(g) and "f64[N]" in str(g)
        compiled = g.to_python()
        for n in (3, 5, 8):
            x = np.linspace(-2.0, 5.0, n)
            want = fn(x)
            want = want if isinstance(want, tuple) else (want,)
            for got in (run(g, {"x": x}), compiled(x=x), Interpreter(g).run({"x": x})):
                for a, b in zip(got, want):
                    assert_same(np.asarray(a), np.asarray(b), f"{fn.__name__} N={n}")


def test_a_method_is_scripted_with_its_object():
    class Model:
        """The course note's ModelWithControlFlow, with its two layers as weights on the object."""

        def __init__(self):
            rng = np.random.default_rng(3)
            self.w1, self.w2 = rng.standard_normal((4, 2)), rng.standard_normal((4, 2))

        def forward(self, x):
            if x.sum() > 0:
                return x @ self.w1
            else:
                return x @ self.w2

    model = Model()
    g = script(model.forward, {"x": (3, 4)})
    for x in (np.ones((3, 4)), -np.ones((3, 4))):
        assert_same(run(g, {"x": x})[0], model.forward(x), "method")
