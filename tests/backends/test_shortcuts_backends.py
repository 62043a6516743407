"""The backends' speed-ups against the reference code they stand for, as one property on every graph of the suite's
cases (every op-table sample and every traced model), on seeded random programs and on a symbolic graph and one
with regions:

- ``prepared.prepare`` runs the NumPy calls ``reference.execute`` runs: the same outputs, bit for bit, or the same
  error;
- ``compiler_text``: the text codegen and fused compile is the viewable source without its comments, with the
  inputs and the parameters each bound by one line, a value read once by the next line nested in it, each NumPy
  function called by a name bound once (``np_matmul`` for ``np.matmul``), and ``del`` after each array's last
  reader: derived here from the source by that rule; and the source itself, compiled, gives the same bits.

Then what the compact text must keep: errors named by node inside nested calls, and a parser-safe nesting depth."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.support.backend_support import ALWAYS, assert_bits, cases, copies
from tests.support.shortcut_support import random_graphs
from graph_lab import Dim, F, GraphExecutionError, compile_graph, trace
from graph_lab.backends import codegen, compiler_text, python_source
from graph_lab.backends.prepared import prepare
from graph_lab.backends.reference import execute
from graph_lab.ir.symbolic import FUNCTIONS


def extra_graphs() -> list:
    """A symbolic graph and one with control-flow regions (which both the prepared function and the generated code
    treat apart)."""
    sym = trace(lambda x: np.tanh(x.reshape(-1)) * x.shape[0], {"x": (Dim("B"), 3)}, example={"x": np.ones((4, 3))})
    cond = trace(lambda x: F.cond(x.sum() > 0, lambda a: np.exp(a) * 2.0, lambda a: a - 1.0, x), {"x": (3,)})
    x = np.linspace(-1, 1, 12).reshape(4, 3)
    return [("symbolic", sym, {"x": x}), ("cond", cond, {"x": x[0]})]


CASES = cases() + random_graphs(range(40)) + extra_graphs()


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
        m = re.fullmatch(r"([v\d, ()]+) = (.*)", line_code) or re.match(r"\((v\d+) := ()", line_code)
        if m and node is not None and not re.match(r"(inputs|params)\[", m.group(2)):
            for n in re.findall(r"v\d+", m.group(1)):
                types.setdefault(n, node.outputs[0].type.ndim > 0)
    for i, line in enumerate(final):
        lhs = line.split(" = ", 1)[0]
        if re.fullmatch(r"    [v\d, ()]+", lhs) and not re.search(r"= (inputs|params)$", line):
            arrays.update(n for n in re.findall(r"v\d+", lhs) if types.get(n))
        copied = re.match(r"    \((v\d+) := ", line)  # (a copy of an update's base, written by subscript)
        if copied and types.get(copied.group(1)):
            arrays.add(copied.group(1))
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


def outputs_or_error(run):
    try:
        with np.errstate(all="ignore"):
            return [np.asarray(v) for v in run()], None
    except GraphExecutionError as e:
        return None, str(e)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_speedups_equal_the_reference(case):
    name, graph, inputs = case
    # prepared: the interpreter's own calls
    want, want_error = outputs_or_error(lambda: [execute(graph, copies(inputs))[v] for v in graph.outputs])
    got, got_error = outputs_or_error(lambda: prepare(graph)(copies(inputs)))
    assert got_error == want_error, name
    if want is not None:
        assert_bits(got, want, f"{name}: prepared")
    # compiler_text: the rule, and the viewable source compiled runs the same calls
    for backend in ("codegen", "fused"):
        cg = compile_graph(graph, backend, "exact", options=ALWAYS)
        for code in {id(c): c for c in (cg.generated.plain, cg.generated.reusing)}.values():
            assert code.text == text_by_the_rule(code), name
        if backend == "fused":
            continue
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


def test_a_failure_inside_a_region_names_the_control_flow_node():
    # (the region's generated function runs in a frame of its own: its line numbers are not the graph's)
    def f(x, y):
        a = x * 2.0
        return F.cond(x.sum() > 0, lambda a, b: np.tanh(a) @ b, lambda a, b: (a - 1.0) @ b, a, y)

    g = trace(f, {"x": (3, 4), "y": (4, 2)})
    with pytest.raises(GraphExecutionError, match=r"while executing %\d+ = cond\("):
        compile_graph(g, "codegen")(np.ones((3, 4)), np.ones((5, 2)))
