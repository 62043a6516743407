"""The acceptance corpus: each function captured once with symbolic sizes and run on four sizes or more.

For every size, every way of running the graph (``run``, ``prepare``, ``to_python``, ``Interpreter``, and the
graph read back from its text) computes what eager NumPy computes, bit for bit; the graph's guards accept the
inputs; the printed types use the symbols.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from graph_lab import Interpreter, Spec, check_guards, make_graph, parse, run, trace
from graph_lab.backends.prepared import prepare
from tests.support.symbolic_corpus import CASES, Case, concrete_shape, make_inputs
from tests.ops.test_ops import assert_same


def capture(case: Case):
    if case.example:
        example = make_inputs(case, case.sizes[0])
        return trace(case.fn, case.shapes, case.params, example=example)
    specs = [Spec(*_spec(s)) for s in case.shapes.values()]
    return make_graph(case.fn, *specs, *([case.params] if case.params is not None else []))


def _spec(spec):
    return (spec, np.float64) if not isinstance(spec[0], tuple) else spec


def eager(case: Case, inputs: dict) -> list[np.ndarray]:
    args = [inputs[n] for n in case.shapes] + ([case.params] if case.params is not None else [])
    out = case.fn(*args)
    return [np.asarray(v) for v in (out if isinstance(out, tuple) else (out,))]


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 15
    assert all(len(c.sizes) >= 4 for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_one_graph_for_every_size(case: Case):
    g = capture(case)
    g.verify()
    text = str(g)
    symbols = {d for spec in case.shapes.values() for d in _spec(spec)[0] if isinstance(d, str)}
    for name, spec in case.shapes.items():  # printed types use the symbols
        shown = "[" + ",".join(str(d) for d in _spec(spec)[0]) + "]"
        assert f"{shown} = input \"{name}\"" in text, text
    parsed = parse(text, dict(g.param_values))
    assert str(parsed) == text
    runners = {"run": lambda i: run(g, i), "prepare": prepare(g), "to_python": lambda i: g.to_python()(**i),
               "Interpreter": lambda i: Interpreter(g).run(i), "parsed": lambda i: run(parsed, i)}
    for seed, sizes in enumerate(case.sizes):
        assert set(sizes) == symbols
        inputs = make_inputs(case, sizes, seed)
        expected = eager(case, inputs)
        assert check_guards(g, inputs), f"sizes {sizes}"
        for how, runner in runners.items():
            results = runner(dict(inputs))
            assert len(results) == len(expected)
            for i, (got, want) in enumerate(zip(results, expected)):
                assert_same(np.asarray(got), want, f"{case.name} {sizes} output {i} by {how}")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_computed_types_use_the_symbols(case: Case):
    g = capture(case)
    computed = " ".join(str(v.type) for n in g.nodes if n.op not in ("input", "param", "const") for v in n.outputs)
    for symbol in case.sizes[0]:
        assert symbol in computed, f"{symbol} in no type computed by the graph:\n{g}"


def test_inputs_signature_is_the_functions():
    for case in CASES:
        names = list(inspect.signature(case.fn).parameters)
        assert names[:len(case.shapes)] == list(case.shapes), case.name
        for spec in case.shapes.values():
            concrete_shape(spec, {"B": 2, "T": 2, "d": 2})
