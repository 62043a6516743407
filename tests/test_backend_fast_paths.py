"""The shortcuts that make compiling a graph cheap, each checked against the general way on every case of the suite
(every op-table sample and every traced model):

- the text codegen compiles is the viewable source without its comments, with the inputs and the parameters each
  bound by one line and each NumPy function called by a name bound once (``np_matmul`` for ``np.matmul``): derived
  here from the source by that rule, and run against the source itself compiled as it was before;
- the passes' shortcuts: CSE's key of a node without attributes, the pipeline's counts, simplify's report numbered
  only when a rule applies, and ``copy_graph``."""

from __future__ import annotations

import re

import numpy as np
import pytest

from backend_support import ALWAYS, assert_bits, cases, copies
from graph_lab import F, GraphBuilder, GraphExecutionError, compile_graph, run_pipeline, trace
from graph_lab.backends import codegen, compiler_text, python_source
from graph_lab.ir.symbolic import FUNCTIONS
from graph_lab.ir.subgraphs import copy_graph
from graph_lab.passes import manager, pipelines
from graph_lab.passes.cse import node_key, value_key
from graph_lab.passes.simplify import simplify
from graph_lab.ops import Op, opdef

CASES = cases()


def text_by_the_rule(code: python_source.PyCode) -> str:
    """The text to compile, derived from the viewable source the long way (``code._body`` says which lines a
    backend wrote its own way: they are never nested)."""
    usual = [comment is None for _, comment, _ in code._body]
    lines = [line.split("  # ")[0].rstrip() for line in code.source.splitlines()]
    head, body, tail = lines[0], lines[1:-1], lines[-1]
    out, names, first = [], {"inputs": {}, "params": {}}, {}
    for line, is_usual in zip(body, usual):
        m = re.fullmatch(r"    (v\d+) = (inputs|params)\[(\d+)\]", line)
        if m and is_usual:
            names[m.group(2)][int(m.group(3))] = m.group(1)
            if m.group(2) not in first:
                first[m.group(2)] = len(out)
                out.append(None)
            continue
        out.append((line, is_usual))
    for tuple_name, at in first.items():
        unpacked = [names[tuple_name].get(i, "_") for i in range(max(names[tuple_name]) + 1)]
        out[at] = (f"    {', '.join(unpacked)}{',' if len(unpacked) == 1 else ''} = {tuple_name}", False)
    # a value read once in all the code, by the next line (a usual one, calling nothing else among its arguments),
    # is written inside it, up to NESTED_CALLS nodes a line
    everything = "\n".join([line for line, _ in out] + [tail])
    nested = []  # (line, how many nodes it writes, whether its value may go into the next line)
    for line, is_usual in out:
        may_nest = is_usual and re.match(r"    v\d+ = ", line) is not None
        if nested and nested[-1][2] and nested[-1][1] < compiler_text.NESTED_CALLS:
            name, expression = nested[-1][0].strip().split(" = ", 1)
            lhs, rhs = line.strip().split(" = ", 1) if " = " in line else (None, "")
            if is_usual and len(re.findall(rf"\b{name}\b", everything)) == 2 and \
                    len(re.findall(rf"\b{name}\b", rhs)) == 1 and "](" not in rhs:
                rhs = re.sub(rf"\b{name}\b", lambda _: expression, rhs)
                nested[-1] = (f"    {lhs} = {rhs}", nested[-1][1] + 1, may_nest)
                continue
        nested.append((line, 1, may_nest))
    # an array a line binds is dropped (``del``, names in order) after the last line that names it, unless returned
    final = [line for line, _, _ in nested]
    last, arrays = {}, set()
    types = {}  # name -> whether the node of the line that binds it gives an array (the graph's types)
    for line_code, _, node in code._body:
        m = re.fullmatch(r"([v\d, ()]+) = (.*)", line_code)
        if m and node is not None and not re.match(r"(inputs|params)\[", m.group(2)):
            for n in re.findall(r"v\d+", m.group(1)):
                types.setdefault(n, node.outputs[0].type.ndim > 0)
    for i, line in enumerate(final):
        lhs = line.split(" = ", 1)[0]
        if re.fullmatch(r"    [v\d, ()]+", lhs) and not re.search(r"= (inputs|params)$", line):
            arrays.update(n for n in re.findall(r"v\d+", lhs) if types.get(n))
        for n in re.findall(r"\bv\d+\b", line):
            last[n] = i
    returned = set(re.findall(r"v\d+", tail))
    drops = {}
    for n, i in last.items():
        if n in arrays and n not in returned:
            drops.setdefault(i, []).append(n)
    with_drops = []
    for i, line in enumerate(final):
        with_drops.append(line)
        if i in drops:
            with_drops.append("    del " + ", ".join(sorted(drops[i], key=lambda n: int(n[1:]))))
    text = "\n".join([head] + with_drops + [tail]) + "\n"
    return text.replace("np.", "np_")


def compiled_source(code: python_source.PyCode, extra=None):
    """The viewable source itself compiled, as the backends did before compiling ``text``."""
    namespace = {"__builtins__": {}, "np": np, **FUNCTIONS, **code.impls, **(extra or {})}
    exec(compile(code.source, python_source.FILENAME, "exec"), namespace)
    return namespace["forward"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_compiled_text_is_the_source_for_the_compiler(case):
    name, graph, inputs = case
    for backend in ("codegen", "fused"):
        cg = compile_graph(graph, backend, "exact", options=ALWAYS)
        for code in {id(c): c for c in (cg.generated.plain, cg.generated.reusing)}.values():
            assert code.text == text_by_the_rule(code), name
        if backend == "fused":
            continue
        # the source compiled as it was before runs the same calls: the same bits
        code = cg.generated.plain
        with np.errstate(all="ignore"):
            got = codegen.compile_source(code)(tuple(copies(inputs)[n] for n in cg.input_names), cg._params,
                                               code.consts)
            expected = compiled_source(code)(tuple(copies(inputs)[n] for n in cg.input_names), cg._params,
                                             code.consts)
        assert_bits([np.asarray(v) for v in got], [np.asarray(v) for v in expected], name)


def test_to_python_compiles_the_same_text():
    g = trace(lambda x, p: np.tanh(x @ p["w"]) * 0.5 + p["b"], {"x": (4, 8)},
              {"w": np.ones((8, 3)), "b": np.arange(3.0)})
    f = g.to_python()
    assert f.code.text == text_by_the_rule(f.code) and "= params\n" in f.code.text and "np_matmul(" in f.code.text
    x = np.linspace(0, 1, 32).reshape(4, 8)
    assert_bits(f(x=x), [np.tanh(x @ np.ones((8, 3))) * 0.5 + np.arange(3.0)], "to_python")


@pytest.mark.parametrize("backend", ["codegen", "auto"])
def test_an_error_names_its_node_in_a_line_of_nested_calls(backend):
    def model(x, p):
        return np.tanh(x @ p["w1"]) @ p["w2"] + x

    for w2, x, failing in [((8, 8), (4, 5), r"%3 = matmul\(%0, %1\)"),   # the innermost call
                           ((8, 8), (4, 8), None),
                           ((8, 3), (4, 8), r"%6 = add\(%5, %0\)"),      # the outermost
                           ((3, 8), (4, 8), r"%5 = matmul\(%4, %2\)")]:  # one in the middle
        g = trace(model, {"x": (4, 8)}, {"w1": np.ones((8, 8)), "w2": np.ones((8, 8))})
        cg = compile_graph(g, backend)
        text = cg.generated.plain.text
        assert "= params\n" in text and "np_add(np_matmul(np_tanh(np_matmul(v0, v1)), v2), v0)" in text
        params = (np.ones((8, 8)), np.ones(w2))
        if failing is None:
            assert_bits(cg._forward((np.ones(x),), params), [model(np.ones(x), {"w1": params[0], "w2": params[1]})],
                        "no failure")
            continue
        with pytest.raises(GraphExecutionError, match=rf"while executing {failing}"):
            cg._run((np.ones(x),), params)


def test_a_long_chain_is_nested_a_few_calls_per_line():
    def chain(x):
        for _ in range(150):  # (Python's parser refuses parentheses nested 200 deep)
            x = np.tanh(np.sin(x))
        return x

    g = trace(chain, {"x": (3,)})
    cg = compile_graph(g, "codegen")
    lines = [line for line in cg.generated.plain.text.splitlines() if not line.startswith("    del ")]
    assert max(line.count("np_") for line in lines) == compiler_text.NESTED_CALLS and len(lines) < 300 / 4
    x = np.linspace(-2, 2, 3)
    assert_bits(cg(x), [chain(x)], "a chain of 300 calls")


def test_the_key_of_a_node_without_attributes_is_the_general_key():
    for name, graph, _ in CASES:
        for node in graph.nodes:
            if node.op in (Op.INPUT, Op.PARAM) or not opdef(node.op).pure:
                assert node_key(node) is None
                continue
            try:
                attrs = value_key(node.attrs)
                hash(attrs)
            except TypeError:
                assert node_key(node) is None
                continue
            assert node_key(node) == (node.op, attrs, tuple(id(v) for v in node.inputs)), name


def test_the_pipeline_counts_are_the_graphs_counts():
    for name, graph, _ in CASES[::7]:
        for pipeline in ("exact", "fast_math"):
            _, reports = run_pipeline(graph, pipeline, verify=False)
            work = copy_graph(graph)
            for report in reports:
                assert report.ops_before == work.count(), name
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


# --- the pipeline asks each pass whether it would change the graph before copying it


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


CHECKED = {name: pipelines.WOULD_CHANGE[pipelines.PASSES[name]] for name in ("simplify", "fold", "cse", "dce")}


def states(graph):
    """The graph, then the graph after each pass of the exact pipeline: the states a check is asked about."""
    yield graph
    work = copy_graph(graph)
    for name in pipelines.PIPELINES["exact"]:
        if pipelines.PASSES[name](work):
            yield copy_graph(work)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_pass_said_to_find_nothing_changes_nothing():
    checked = changed = 0
    for graph in [g for _, g, _ in CASES] + graphs_with_work_for_the_passes():
        for state in states(graph):
            text, params = str(state), dict(state.param_values)
            for name, would_change in CHECKED.items():
                says = would_change(state)
                assert str(state) == text and state.param_values.keys() == params.keys(), "a check changed it"
                work = copy_graph(state)
                report = pipelines.PASSES[name](work)
                checked += 1
                if not says:
                    assert report == [] and str(work) == text, f"{name} on {state.name}"
                    assert work.param_values.keys() == params.keys(), f"{name} on {state.name}"
                elif report:
                    changed += 1
    assert checked > 1000 and changed >= 8  # (the crafted graphs give each pass work)


def test_run_pipeline_on_keeps_a_graph_no_pass_changes_and_reports_as_run_pipeline():
    for name, graph, _ in CASES[::5] + [("crafted", g, None) for g in graphs_with_work_for_the_passes()]:
        for pipeline in ("exact", "fast_math", "none"):
            before = str(graph)
            kept, reports = manager.run_pipeline_on(graph, pipeline)
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


def test_a_failure_inside_a_region_names_the_control_flow_node():
    # (the region's generated function runs in a frame of its own: its line numbers are not the graph's)
    def f(x, y):
        a = x * 2.0
        return F.cond(x.sum() > 0, lambda a, b: np.tanh(a) @ b, lambda a, b: (a - 1.0) @ b, a, y)

    g = trace(f, {"x": (3, 4), "y": (4, 2)})
    with pytest.raises(GraphExecutionError, match=r"while executing %\d+ = cond\("):
        compile_graph(g, "codegen")(np.ones((3, 4)), np.ones((5, 2)))
