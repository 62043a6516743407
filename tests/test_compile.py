"""``graph_lab.compile`` against eager Python: the corpus of ``compile_corpus.py``, every guard kind, the
recompile limit and ``fullgraph=True``.

Eager and compiled runs always get separate copies of every piece of mutable state (arguments, lists, objects,
globals), and must agree bit for bit: results (type, dtype, shape, values), what was printed, the state after each
call, writes into the caller's arrays, and which returned arrays alias which arguments.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import graph_lab
from graph_lab import F, GraphBreak, RecompileLimitWarning

HERE = Path(__file__).resolve().parent


def _load_corpus():
    # Loaded by path, so it works under any pytest import mode and never shadows another module.
    spec = importlib.util.spec_from_file_location("graph_lab_compile_corpus", HERE / "compile_corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
CASES = {case.name: case for case in corpus.CASES}


# --- comparing eager and compiled runs


def assert_same(eager, compiled, where="result"):
    """Same structure, same types, arrays equal bit for bit with the same dtype and shape."""
    assert type(compiled) is type(eager), f"{where}: {type(compiled).__name__} != {type(eager).__name__}"
    if isinstance(eager, np.ndarray):
        assert compiled.dtype == eager.dtype, f"{where}: dtype {compiled.dtype} != {eager.dtype}"
        assert compiled.shape == eager.shape, f"{where}: shape {compiled.shape} != {eager.shape}"
        np.testing.assert_array_equal(compiled, eager, err_msg=where, strict=True)
    elif isinstance(eager, (list, tuple)):
        assert len(compiled) == len(eager), f"{where}: length {len(compiled)} != {len(eager)}"
        for i, (e, c) in enumerate(zip(eager, compiled)):
            assert_same(e, c, f"{where}[{i}]")
    elif isinstance(eager, dict):
        assert list(compiled) == list(eager), f"{where}: keys {list(compiled)} != {list(eager)}"
        for k in eager:
            assert_same(eager[k], compiled[k], f"{where}[{k!r}]")
    elif isinstance(eager, np.generic):
        assert compiled.dtype == eager.dtype and (compiled == eager or (compiled != compiled and eager != eager))
    elif isinstance(eager, (corpus.Config,)):
        assert vars(compiled) == vars(eager)
    else:
        assert compiled == eager, f"{where}: {compiled!r} != {eager!r}"


def leaves(x) -> list:
    """The arrays in a nest of lists, tuples, dicts and objects, in order."""
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, (list, tuple)):
        return [a for v in x for a in leaves(v)]
    if isinstance(x, dict):
        return [a for v in x.values() for a in leaves(v)]
    return []


def aliasing(result, args) -> list[list[bool]]:
    """Which returned arrays share memory with which argument arrays (NumPy's views must stay views)."""
    return [[np.shares_memory(r, a) for a in leaves(args)] for r in leaves(result)]


class Run:
    """One program run call by call, eagerly or compiled; records everything observable."""

    def __init__(self, case, compiled: bool, **options):
        self.program = case.make()
        self.fn = graph_lab.compile(self.program.fn, **options) if compiled else self.program.fn

    def call(self, args, capsys) -> dict:
        args = copy.deepcopy(args)
        result = self.fn(*args)
        return {"result": result, "printed": capsys.readouterr().out, "effects": self.program.effects(),
                "args after": args, "aliasing": aliasing(result, args)}


def assert_same_run(eager: dict, compiled: dict, call: int) -> None:
    for what in ("result", "printed", "effects", "args after", "aliasing"):
        assert_same(eager[what], compiled[what], f"call {call}: {what}")


def compiled_functions(cf) -> list:
    """``cf`` and the functions compiled for it: Python functions called at its graph breaks run compiled."""
    return [cf] + [g for nested in cf.nested.values() for g in compiled_functions(nested)]


def events(cf) -> list:
    return [e for g in compiled_functions(cf) for e in g.last_events]


def graphs_and_breaks(cf) -> tuple[int, int]:
    """Segments with at least one op, and segments ending at a break, in the last call (nested ones too)."""
    return (sum(1 for e in events(cf) if e.segment.graph.count() > 0),
            sum(1 for e in events(cf) if e.segment.end == "break"))


def captures(cf) -> int:
    return sum(g.captures for g in compiled_functions(cf))


def body_runs(cf) -> int:
    return sum(g.body_runs for g in compiled_functions(cf))


@pytest.mark.parametrize("name", list(CASES))
def test_corpus_matches_eager(name, capsys):
    case = CASES[name]
    calls = case.calls(np.random.default_rng(0))
    eager, compiled = Run(case, compiled=False), Run(case, compiled=True)
    cf = compiled.fn
    for i, args in enumerate(calls):
        assert_same_run(eager.call(args, capsys), compiled.call(args, capsys), i)
        if i == 0:
            graphs, breaks = graphs_and_breaks(cf)
            if case.graphs is not None:
                assert graphs == case.graphs, f"graphs on the first call: {graphs}, expected {case.graphs}"
            if case.breaks is not None:
                assert breaks == case.breaks, f"breaks on the first call: {breaks}, expected {case.breaks}"
    # A call like the first one (same shapes, dtypes and Python constants; other values) is a cache hit:
    # nothing is captured again, and only the instructions at the breaks run as Python.
    again = case.calls(np.random.default_rng(1))[0]
    captured, ran = captures(cf), body_runs(cf)
    assert_same_run(eager.call(again, capsys), compiled.call(again, capsys), len(calls))
    assert captures(cf) == captured, f"a call like the first captured again: {cf.recompile_log}"
    assert not any(e.captured for e in events(cf))
    assert body_runs(cf) - ran == graphs_and_breaks(cf)[1]
    assert all(g.eager_fallback is None for g in compiled_functions(cf))


def test_corpus_size():
    assert len(CASES) >= 30
