"""Views of a graph: ``print_tabular()`` and ``g.code`` / ``g.to_python()``.

Expect tests pin the printed table and the generated code of a few graphs (files ``tests/ir/expect/views_*.txt``;
re-accept deliberate changes with ``GRAPH_LAB_ACCEPT=1``). ``to_python`` must compute what ``run`` computes, bit
for bit, on graphs that together use every op; and no text from the user may ever run as code.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from tests.support import views_samples
from graph_lab import F, GraphBuilder, GraphExecutionError, GraphInputError, Op, run, trace
from graph_lab.backends import python_emitters, python_source
from graph_lab.console import display_width
from graph_lab.ir.graph import Node
from graph_lab.ir.types import TensorType

EXPECT = Path(__file__).resolve().parent / "expect"


def check_expect(name: str, actual: str) -> None:
    path = EXPECT / f"views_{name}.txt"
    if os.environ.get("GRAPH_LAB_ACCEPT") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing; run the tests with GRAPH_LAB_ACCEPT=1 to create it"
    assert actual == path.read_text(encoding="utf-8"), f"output differs from {path} (GRAPH_LAB_ACCEPT=1 re-accepts)"


def tabular_text(graph, capsys) -> str:
    capsys.readouterr()
    graph.print_tabular()
    return capsys.readouterr().out


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# --- expect tests

@pytest.mark.parametrize("name", ["gelu_mlp", "indexing", "shapes"])
def test_print_tabular_expect(name, capsys):
    check_expect(f"{name}_tabular", tabular_text(views_samples.make_graph(name), capsys))


@pytest.mark.parametrize("name", ["gelu_mlp", "indexing", "constants", "nn"])
def test_code_expect(name):
    check_expect(f"{name}_code", views_samples.make_graph(name).code)


# --- print_tabular

def test_tabular_has_one_row_per_node_and_a_return_row(capsys):
    g = views_samples.make_graph("gelu_mlp")
    lines = tabular_text(g, capsys).splitlines()
    assert lines[0].split() == ["name", "op", "inputs", "attributes", "type", "source"]
    assert len(lines) == 2 + len(g.nodes) + 1
    assert lines[2].split()[:2] == ["%0", "input"] and lines[-1].split()[0] == "return"
    assert "%3    matmul  %0, %1" in lines[5]


def test_tabular_aligns_chinese_names_by_display_width(capsys):
    b = GraphBuilder("中文")
    x = b.input("输入张量", (2, 3))
    w = b.param("权重", np.ones((3, 4)))
    g = b.output(b.relu(b.matmul(x, w)))
    lines = tabular_text(g, capsys).splitlines()
    type_columns = {display_width(line[:line.index("f64")]) for line in lines[2:]}
    assert len(type_columns) == 1, lines  # the type column starts at the same screen column in every row


def test_tabular_shortens_long_constants_and_escapes_newlines(capsys):
    b = GraphBuilder()
    x = b.input("two\nlines", (100,))
    y = b.input("a**b**", (100,))
    g = b.output(b.add(x, b.const(np.arange(100.0))), y)
    lines = tabular_text(g, capsys).splitlines()
    assert len(lines) == 2 + len(g.nodes) + 1
    assert '"two\\nlines"' in lines[2]  # as the SSA text prints it
    assert lines[3].replace("\u200b", "").split()[2] == '"a**b**"'  # not taken for bold markup
    assert "…" in lines[4] and display_width(lines[4]) < 120


# --- g.code and to_python

@pytest.mark.parametrize("name", list(views_samples.SAMPLES))
def test_to_python_equals_run_and_eager_bit_for_bit(name):
    g = views_samples.make_graph(name)
    inputs = views_samples.make_inputs(g)
    expected = run(g, inputs)
    got = g.to_python()(**inputs)
    assert len(got) == len(expected)
    for i, (a, b) in enumerate(zip(got, expected)):
        assert same_bits(a, b), f"output {i}: {a!r} != {b!r}"
    for i, (a, b) in enumerate(zip(expected, views_samples.eager(name, inputs))):
        assert same_bits(a, b), f"run differs from eager at output {i}"


def test_samples_use_every_op_of_the_table():
    assert views_samples.ops_covered() == set(Op)


def test_each_line_defines_the_value_printed_with_that_number():
    g = views_samples.make_graph("gelu_mlp")
    body = g.code.splitlines()[1:-1]
    for n, (line, node) in enumerate(zip(body, g.nodes)):
        assert line.strip().startswith(f"v{n} = ")
        assert line.endswith(f"# {node.output.type}")
    assert "np.matmul(v0, v1)" in body[3] and "np.tanh(v12)" in body[13]


def test_numbers_are_literals_and_everything_else_is_passed_in():
    g = trace(lambda x: (x * 0.5 + 2, x * np.float32(3), x + np.nan, x * 2 ** 70, F.einsum("i,i->", x, x)),
              {"x": ((4,), "float32")})
    code = g.to_python().code
    assert "v1 = 0.5 " in code.source and "= 2 " in code.source
    assert "i,i" not in code.source  # a string attribute is never spelled out
    passed = [c for c in code.consts]
    assert any(isinstance(c, np.float32) for c in passed) and any(c == 2 ** 70 for c in passed if type(c) is int)
    assert any(isinstance(c, float) and math.isnan(c) for c in passed)


def test_parameters_can_be_replaced_by_name_as_with_run():
    g = views_samples.make_graph("gelu_mlp")
    inputs = views_samples.make_inputs(g)
    inputs["p['W2']"] = np.ones((16, 8))
    assert same_bits(g.to_python()(**inputs)[0], run(g, inputs)[0])


def test_wrong_inputs_give_the_same_error_as_run():
    g = views_samples.make_graph("gelu_mlp")
    with pytest.raises(GraphInputError) as from_run:
        run(g, {"y": np.ones((4, 8))})
    with pytest.raises(GraphInputError) as from_code:
        g.to_python()(y=np.ones((4, 8)))
    assert str(from_run.value).startswith(str(from_code.value))  # run() adds why the inputs differ


def test_a_failing_op_names_its_node_as_run_does():
    g = views_samples.make_graph("gelu_mlp")
    bad = {"x": np.ones((4, 7))}
    with pytest.raises(GraphExecutionError) as from_run:
        run(g, bad)
    with pytest.raises(GraphExecutionError) as from_code:
        g.to_python()(**bad)
    assert str(from_run.value).startswith(str(from_code.value))  # run() adds why the inputs differ
    assert str(from_code.value).startswith("while executing %3 = matmul(%0, %1)")


def test_generated_source_is_refused_if_it_would_hold_a_quote():
    with pytest.raises(RuntimeError, match="user text must never reach the source"):
        python_source._check_source("def forward(inputs, params, consts):\n    return ['x']\n")


# --- security: names, attributes and file names are user data and never run as code

def evil(canary: Path) -> str:
    """Text that runs ``open(canary, 'w')`` if it is ever pasted into generated source, in any position."""
    return f"x\"]; open({str(canary)!r},'w')#\n'); open({str(canary)!r},'w')#\n\\"


def test_user_text_never_becomes_code(tmp_path, capsys):
    canary = tmp_path / "CANARY"
    text = evil(canary)
    model_source = "def model(*args):\n    x, p = args\n    return F.tanh(x @ p[0][NAME]) * 2.0, LABELS\n"
    namespace = {"F": F, "NAME": text, "LABELS": np.array([text, "ok"])}
    exec(compile(model_source, f"{text}.py", "exec"), namespace)  # a file name with quotes and a newline
    g = trace(namespace["model"], {text: (2, 3)}, [{text: np.ones((3, 3))}])
    g.add_node(Op.EINSUM, [g.outputs[0], g.outputs[0]], {"subscripts": "ij,ij->", text: text})
    g.outputs.append(g.nodes[-1].output)
    g.verify()  # the extra attribute is not in the rule's way: a parser could make such a node

    source = g.code
    for fragment in ("open", "CANARY", "'", '"', "\\", "ij,ij"):
        assert fragment not in source
    str(g)
    g.print_tabular()
    compiled = g.to_python()
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(GraphExecutionError, match="einsum"):
        compiled(**{text: x})  # the einsum node is given an argument it does not take: fails like run
    with pytest.raises(GraphExecutionError, match="einsum"):
        run(g, {text: x})
    g.outputs.pop()
    g.remove_dead_code()
    expected, got = run(g, {text: x}), g.to_python()(**{text: x})
    assert same_bits(got[0], expected[0]) and list(got[1]) == [text, "ok"]
    assert not canary.exists()


def test_attribute_names_that_are_not_identifiers_are_passed_in_whole():
    ctx = python_emitters._Context(GraphBuilder().graph)
    assert ctx.kwargs({"axis": 1, "keepdims": False}) == ["axis=1", "keepdims=False"]
    assert ctx.kwargs({"a')#\n": 1}) == ["**consts[0]"] and ctx.consts == [{"a')#\n": 1}]
    assert ctx.kwargs({"__class__": 1}) == ["**consts[1]"]


def test_literals_are_only_exact_python_numbers():
    literal = python_emitters.literal
    assert literal(0.1) == "0.1" and literal(-0.0) == "-0.0" and literal((1, None)) == "(1, None)"
    for not_literal in (math.inf, math.nan, np.float64(1.0), 2 ** 64, "x", (1, "x"), True.__class__):
        assert python_emitters.literal(not_literal) is None


def test_node_of_unknown_emitter_falls_back_to_its_implementation():
    x = TensorType(np.dtype(np.float64), (3,))
    node = Node(Op.SOFTMAX, [], {"axis": 0}, [x])
    assert python_emitters._emitter(node) is python_emitters._emit_impl
