"""The pass pipeline's speed-up (``passes/change_check.py``) against the reference it stands for, as one property on
every graph of the suite's cases, on seeded random programs and on graphs crafted to give each pass work, and on
each state a pipeline passes through:

- a pass whose check says it would not change a graph changes nothing and reports nothing, and the check leaves
  the graph as it was;
- ``run_pipeline_on`` gives ``run_pipeline``'s graph and reports, and returns the graph itself exactly when no
  check says its pass would change it (a copy otherwise).

Then what the pipeline must keep whatever the driver: reports' counts are the graph's, ``copy_graph`` is
independent, simplify numbers each rewrite as the graph was before it."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.backend_support import cases
from tests.support.shortcut_support import random_graphs
from graph_lab import F, GraphBuilder, run_pipeline, trace
from graph_lab.ir.subgraphs import copy_graph
from graph_lab.passes import change_check, pipelines
from graph_lab.passes.fresh_outputs import keep_outputs_apart
from graph_lab.passes.simplify import simplify
from graph_lab.passes.simplify_rules import RULES


def graphs_with_work_for_the_passes():
    """Graphs where each pass has something to do (dead code, repeats, constants, identities, merged views, an
    unread impure op, a stale parameter, regions), besides the suite's cases."""
    out = []
    out.append(trace(lambda x: (x.T.T * 1.0 + np.tanh(x) + np.tanh(x)) * (2.0 * 3.0), {"x": (2, 3)}))
    out.append(trace(lambda x: (x.reshape(6).reshape(3, 2), -(-x), x / 1.0, x - 0.0), {"x": (2, 3)}))
    b = GraphBuilder("dead_and_folded")
    x = b.input("x", (3,))
    b.tanh(x)  # read by nothing
    c = b.add(b.const(np.arange(3.0)), b.const(np.ones(3)))
    out.append(b.output(b.mul(x, c), b.zeros_like(x)))
    stale = trace(lambda x, p: x @ p["w"], {"x": (2, 3)}, {"w": np.ones((3, 3))})
    stale.param_values["gone"] = np.ones(2)  # a stored value no node reads
    out.append(stale)
    out.append(trace(lambda x: F.cond(x.sum() > 0, lambda a: a * 1.0, lambda a: -a, x), {"x": (3,)}))
    return out


CASES = cases() + random_graphs(range(40)) + [(f"crafted {i}", g, None)
                                                for i, g in enumerate(graphs_with_work_for_the_passes())]
CHECKED = {name: change_check.WOULD_CHANGE[pipelines.PASSES[name]] for name in ("simplify", "fold", "cse", "dce")}


def states(graph):
    """The graph, then the graph after each pass of the exact pipeline: the states a check is asked about."""
    yield graph
    work = copy_graph(graph)
    for name in pipelines.PIPELINES["exact"]:
        if pipelines.PASSES[name](work):
            yield copy_graph(work)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_change_checks_and_their_driver_equal_the_passes(case):
    name, graph, _ = case
    for state in states(graph):
        text, params = str(state), dict(state.param_values)
        for pass_name, would_change in CHECKED.items():
            says = would_change(state)
            assert str(state) == text and state.param_values.keys() == params.keys(), "a check changed it"
            if not says:
                work = copy_graph(state)
                assert pipelines.PASSES[pass_name](work) == [] and str(work) == text, f"{pass_name} on {name}"
                assert work.param_values.keys() == params.keys(), f"{pass_name} on {name}"
    for pipeline in ("exact", "fast_math", "none"):
        before = str(graph)
        kept, reports = change_check.run_pipeline_on(graph, pipeline)
        copied, expected = run_pipeline(graph, pipeline)
        assert str(graph) == before and copied is not graph
        assert [(r.name, r.ops_before, r.ops_after, r.changes) for r in reports] == \
               [(r.name, r.ops_before, r.ops_after, r.changes) for r in expected], name
        assert str(kept) == str(copied), name
        if any(r.changes for r in reports):
            assert kept is not graph, name
        if pipeline == "exact":  # (every pass of it has a check): copied when one of them says it would change
            assert (kept is graph) == (not any(check(graph) for check in CHECKED.values())), name
        elif pipeline == "none":
            assert kept is graph


def test_the_checks_find_work_in_the_crafted_graphs():
    """The property above is not empty: on the crafted graphs each check says True somewhere and the pass then
    changes the graph."""
    found = {name: 0 for name in CHECKED}
    for graph in graphs_with_work_for_the_passes():
        for state in states(graph):
            for name, check in CHECKED.items():
                if check(state) and pipelines.PASSES[name](copy_graph(state)):
                    found[name] += 1
    assert all(found.values()), found


def test_simplify_check_groups_the_rules_again_when_the_list_changes():
    b = GraphBuilder("g")
    x = b.input("x", (4,), "float32")
    g = b.output(b.mul(x, 1.0))
    check = CHECKED["simplify"]
    assert check(g)
    assert not check(g, [r for r in RULES if r.op != "mul"])
    assert check(g)


def test_dce_check_is_answered_by_simplify_check():
    """Where simplify's check finds a graph unchanged, dce's does too (the driver skips the latter)."""
    b = GraphBuilder("g")
    x = b.input("x", (4,), "float32")
    y = b.tanh(x)
    b.exp(x)  # dead
    g = b.output(b.add(y, y))
    assert CHECKED["simplify"](g) and CHECKED["dce"](g)
    b2 = GraphBuilder("h")
    x2 = b2.input("x", (4,), "float32")
    h = b2.output(b2.tanh(x2))
    assert not CHECKED["simplify"](h) and not CHECKED["dce"](h)
    for graph in (g, h):
        assert str(change_check.run_pipeline_on(graph, "exact")[0]) == str(run_pipeline(graph, "exact")[0])


def test_the_pipeline_counts_are_the_graphs_counts():
    for name, graph, _ in CASES[::7]:
        for pipeline in ("exact", "fast_math"):
            _, reports = run_pipeline(graph, pipeline, verify=False)
            work = copy_graph(graph)
            for report in reports:
                assert report.ops_before == work.count(), name
                if report.name == "fresh_outputs":  # (the copies after the passes: see fresh_outputs)
                    keep_outputs_apart(graph, work)
                else:
                    pipelines.PASSES[report.name](work)
                assert report.ops_after == work.count(), name


def test_copy_graph_is_an_independent_equal_graph():
    for name, graph, _ in CASES:
        copy = copy_graph(graph)
        assert str(copy) == str(graph), name
        originals = {id(v) for n in graph.nodes for v in n.outputs} | {id(n) for n in graph.nodes}
        assert not any(id(n) in originals or any(id(v) in originals for v in n.outputs + n.inputs)
                       for n in copy.nodes), name
        for node in copy.nodes:  # the use lists were made as the nodes were
            for v in node.inputs:
                assert node in v.users


def test_simplify_reports_each_rewrite_numbered_as_before_it():
    def f(x, y):
        a = x.T.T * 1.0
        b = np.tanh(y) / 1.0
        c = (-(-a)).reshape(6).reshape(2, 3)
        return a + b, c * 1.0, x.T.T.T

    g = trace(f, {"x": (2, 3), "y": (2, 3)})
    report = [line.split(" [")[0] for line in simplify(g)]
    # (these lines were printed by simplify when it numbered the graph before every node it looked at)
    assert report == [
        "transpose(transpose(x)) -> transpose(x): %3 = transpose(%2) perm=(1, 0)",
        "x * 1 -> x: %5 = mul(%3, %4)",
        "x / 1 -> x: %7 = div(%5, %6)",
        "-(-x) -> x: %8 = neg(%7)",
        "reshape(reshape(x)) -> reshape(x): %9 = reshape(%8) shape=(2, 3)",
        "x * 1 -> x: %12 = mul(%9, %11)",
        "transpose(transpose(x)) -> transpose(x): %13 = transpose(%12) perm=(1, 0)",
        "transpose(transpose(x)) -> transpose(x): %14 = transpose(%13) perm=(1, 0)",
        "transpose(x, identity) -> x: %3 = transpose(%0) perm=(0, 1)",
        "reshape(x, x.shape) -> x: %8 = reshape(%0) shape=(2, 3)",
        "output 1 copied: a rewrite made it the same array as an input or another output",
        "removed 8 nodes that nothing reads any more",
    ]
