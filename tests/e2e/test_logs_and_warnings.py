"""The logging switch (``GRAPH_LAB_LOGS`` and ``set_logs`` take the same names) and the warnings graph_lab
raises, each of which must point at the user's line (``stacklevel``), not at graph_lab's own code."""

import ast
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import graph_lab
from graph_lab import FusedFallbackWarning, FusedOptions, RecompileLimitWarning, compile_graph, logs, trace
from graph_lab.backends import fused

REPO = Path(__file__).resolve().parents[2]
NO_COMPILER = FusedOptions(fuse="always", compiler="/nonexistent/cc")


def run_python(code: str, logs_value: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, GRAPH_LAB_LOGS=logs_value, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)


PRINT_ENABLED = "import graph_lab.logs as logs\nprint(','.join(t for t in logs.TOPICS if logs.on(t)))\n"


# ---------------------------------------------------------------------------------------------------------
# GRAPH_LAB_LOGS and set_logs


def test_environment_variable_all_turns_every_topic_on():
    out = run_python(PRINT_ENABLED, "all")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    assert out.stdout.strip().split(",") == list(logs.TOPICS)


def test_environment_variable_with_an_unknown_topic_warns_at_the_import_and_keeps_the_known_ones():
    out = run_python(PRINT_ENABLED, " guards , recompile ")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "guards"
    warning_line = out.stderr.splitlines()[0]
    # the user's line is the import (line 1 of the -c program), and the message lists every known topic
    assert warning_line.startswith("<string>:1: UserWarning: GRAPH_LAB_LOGS: unknown log topics ['recompile']")
    assert all(topic in warning_line for topic in logs.TOPICS) and "all" in warning_line


def test_set_logs_takes_all_and_refuses_unknown_topics_naming_the_known_ones():
    try:
        graph_lab.set_logs("all")
        assert all(logs.on(t) for t in logs.TOPICS)
        with pytest.raises(ValueError, match="unknown log topics \\['recompile'\\]; known: graph_breaks, guards"):
            graph_lab.set_logs("guards", "recompile")
        assert all(logs.on(t) for t in logs.TOPICS), "a refused call changed the topics"
        graph_lab.set_logs("guards")
        assert [t for t in logs.TOPICS if logs.on(t)] == ["guards"]
    finally:
        graph_lab.set_logs()
    assert not any(logs.on(t) for t in logs.TOPICS)


# ---------------------------------------------------------------------------------------------------------
# Every warning points at the user's line


def add_one(x):
    return x * 2.0 + 1.0


def assert_points_here(record: list, category: type, line: int) -> None:
    ours = [w for w in record if issubclass(w.category, category)]
    assert len(ours) == 1, [str(w.message) for w in record]
    assert (ours[0].filename, ours[0].lineno) == (__file__, line), str(ours[0].message)


def test_fused_fallback_warning_from_compile_graph_points_at_the_call(monkeypatch):
    monkeypatch.setattr(fused, "_warned", set())
    g = trace(add_one, {"x": ((4096,), "float32")})
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        compiled = compile_graph(g, "fused", options=NO_COMPILER)
    assert_points_here(record, FusedFallbackWarning, line)
    x = np.arange(4096, dtype=np.float32)
    np.testing.assert_array_equal(compiled(x)[0], x * np.float32(2.0) + np.float32(1.0))


def test_fused_fallback_warning_from_a_compiled_function_points_at_its_first_call(monkeypatch):
    monkeypatch.setattr(fused, "_warned", set())
    compiled = graph_lab.compile(add_one, backend="fused")
    monkeypatch.setattr(fused, "_DEFAULT_OPTIONS", NO_COMPILER)  # what compile() asks for, with no compiler
    x = np.arange(4096, dtype=np.float32)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        result = compiled(x)
    assert_points_here(record, FusedFallbackWarning, line)
    np.testing.assert_array_equal(result, x * np.float32(2.0) + np.float32(1.0))


def grows(x, n):
    for _ in range(n):
        x = x + 1.0
    return x


def test_recompile_limit_warning_points_at_the_call_that_hit_the_limit():
    compiled = graph_lab.compile(grows, recompile_limit=1)
    compiled(np.zeros(3), 1)
    compiled(np.zeros(3), 2)  # the one recompile allowed
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        result = compiled(np.zeros(3), 3)
    assert_points_here(record, RecompileLimitWarning, line)
    np.testing.assert_array_equal(result, np.full(3, 3.0))


def test_user_stacklevel_counts_past_every_graph_lab_frame():
    """The helper itself: called from this file (not graph_lab's), it names this very frame."""
    from graph_lab.ir.source import user_stacklevel
    assert user_stacklevel() == 1


def test_every_warning_graph_lab_raises_computes_its_stacklevel():
    """A count written by hand goes stale as calls move (the fused fallback's `stacklevel=4` once named
    backends/compiled.py): each `warnings.warn` call in graph_lab passes `stacklevel=user_stacklevel()`."""
    calls = []
    for path in sorted((REPO / "graph_lab").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "warnings.warn":
                levels = [ast.unparse(k.value) for k in node.keywords if k.arg == "stacklevel"]
                calls.append((f"{path.relative_to(REPO)}:{node.lineno}", levels))
    assert len(calls) >= 3, calls  # the fused fallback, the recompile limit, GRAPH_LAB_LOGS
    assert all(levels == ["user_stacklevel()"] for _, levels in calls), calls
