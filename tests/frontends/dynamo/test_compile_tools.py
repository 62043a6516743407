"""compile()'s tooling: the opcode handler table, explain(), and the logging switch."""

from __future__ import annotations

import dis
import inspect
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import graph_lab
from graph_lab.frontends.dynamo.handlers import HANDLERS, supported_opnames


def test_every_handler_is_an_opcode_of_this_python():
    # Registration refuses names that are not in dis.opmap for the versions a handler claims; check it held.
    assert supported_opnames() <= set(dis.opmap)
    assert len(supported_opnames()) > 80
    for name, entries in HANDLERS.items():
        for versions, fn in entries:
            assert versions[0] <= versions[1] and callable(fn), name
        spans = sorted(versions for versions, _ in entries)  # one handler per opcode on any one version
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:])), (name, spans)


def test_the_table_refuses_a_name_dis_does_not_know_and_two_handlers_for_one_version():
    from graph_lab.frontends.dynamo.opcodes import handles
    minor = sys.version_info.minor
    with pytest.raises(RuntimeError, match="NOT_AN_OPCODE, which is not an opcode of this Python"):
        handles("NOT_AN_OPCODE", versions=(minor, minor))(lambda frame, ins: None)
    with pytest.raises(RuntimeError, match="both claim BINARY_OP"):
        handles("BINARY_OP", versions=(minor, minor))(lambda frame, ins: None)
    assert [v for v, _ in HANDLERS["BINARY_OP"]] == [(11, 13)]  # (neither was registered)


def test_each_version_runs_its_own_handler_of_a_changed_opcode():
    """CALL changed its stack in 3.13 and LOAD_ATTR took LOAD_METHOD's place in 3.12: one entry per meaning."""
    from graph_lab.frontends.dynamo import opcodes
    assert [v for v, _ in HANDLERS["CALL"]] == [(11, 12), (13, 13)]
    assert [v for v, _ in HANDLERS["LOAD_ATTR"]] == [(11, 11), (12, 12), (13, 13)]
    for minor in (11, 12, 13):
        (fn,) = [fn for (low, high), fn in HANDLERS["LOAD_ATTR"] if low <= minor <= high]
        try:
            opcodes.PYTHON = (3, minor)
            assert opcodes.handler_for("LOAD_ATTR") is fn
            assert ("PRECALL" in supported_opnames()) == (minor == 11)
            assert ("TO_BOOL" in supported_opnames()) == (minor == 13)
        finally:
            opcodes.PYTHON = tuple(sys.version_info[:2])


def _star_import_free(x):
    return np.tanh(x) * 2.0


def test_unhandled_opcodes_are_named_not_crashes():
    missing = sorted(set(dis.opmap) - supported_opnames() - {"CACHE"})
    # whatever is missing must be reported by name when met (never an AttributeError deep inside)
    from graph_lab.frontends.dynamo.handlers import handler_for
    from graph_lab.frontends.dynamo.frame import Unsupported
    for name in missing:
        fake = dis.Instruction(name, dis.opmap[name], 0, 0, "", 0, None, False, None)
        try:
            handler_for(name)(None, fake)
        except Unsupported as e:
            assert name in str(e)
        else:
            raise AssertionError(f"{name} has no handler yet did not say so")


def _branchy(x):
    s = x.sum()
    if s > 0:  # @branch
        return x * 2.0
    return x * -1.0


def _line_of(marker: str) -> int:
    lines, start = inspect.getsourcelines(sys.modules[__name__])
    return next(i for i, line in enumerate(lines, max(start, 1)) if marker in line)  # a module starts at 0


def test_explain_reports_graphs_breaks_guards_and_stitching_code():
    report = graph_lab.explain(_branchy)(np.ones((2, 3)))
    assert report.graph_count == 2 and report.graph_break_count == 1
    assert report.ops_per_graph == [2, 1]
    (brk,) = report.breaks
    assert "data-dependent" in brk.reason and brk.instruction.startswith("POP_JUMP")
    assert brk.line == f"test_compile_tools.py:{_line_of('# @branch')}"
    assert brk.hint and "if s > 0" in brk.code
    assert any("x is an ndarray of shape (2, 3)" in g for g in report.guards)
    text = str(report)
    assert "stitching code" in text and "graph_0(" in text and "graph_1(" in text and "run_as_python" in text
    # capture and backend are timed apart, and the first line says both (with the sum of the segments' own)
    assert report.compile_seconds > 0 and report.backend_seconds > 0
    assert f"captured in {report.compile_seconds * 1e3:.1f} ms, backend {report.backend_seconds * 1e3:.1f} ms" \
        in text.splitlines()[0]
    # explain() compiles afresh: it does not disturb (or reuse) another compiled copy
    cf = graph_lab.compile(_branchy)
    cf(np.ones((2, 3)))
    assert graph_lab.explain(cf)(-np.ones((2, 3))).graph_count == 2 and cf.captures == 2


def test_set_logs_prints_each_event(capsys):
    graph_lab.set_logs("graph_breaks", "recompiles", "guards", "graphs")
    try:
        cf = graph_lab.compile(_branchy)
        cf(np.ones((2, 3)))
        cf(np.ones((4, 3)))
    finally:
        graph_lab.set_logs()
    err = capsys.readouterr().err
    for topic in ("graph_breaks", "recompiles", "guards", "graphs"):
        assert f"[graph_lab:{topic}]" in err, topic
    assert "x.shape[0] is 4, the cached graph was built for 2" in err


def test_graph_lab_logs_environment_variable_is_read_at_import():
    code = ("import numpy as np, graph_lab\n"
            "def f(x):\n    print('side effect')\n    return x + 1\n"
            "graph_lab.compile(f)(np.ones(2))\n")
    env = dict(os.environ, GRAPH_LAB_LOGS="graph_breaks",
               PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "[graph_lab:graph_breaks]" in out.stderr and "print" in out.stderr
    assert "[graph_lab:guards]" not in out.stderr


def test_unknown_log_topic_is_refused():
    try:
        graph_lab.set_logs("everything")
    except ValueError as e:
        assert "graph_breaks" in str(e)
    else:
        raise AssertionError("set_logs accepted an unknown topic")


def _described(x, w, scale, names):
    h = x @ w
    n = len(names)
    return np.tanh(h) * scale + n


def test_each_captured_step_is_put_in_words_when_asked():
    cf = graph_lab.compile(_described)
    names = ["a", "b"]
    x, w = np.ones((4, 8)), np.ones((8, 8))
    np.testing.assert_array_equal(cf(x, w, 0.5, names), _described(x, w, 0.5, names))
    [seg] = cf.cache[cf._first]
    steps = {(opname, arg): what for _, opname, arg, what in seg.steps}
    assert [s[:2] for s in seg.steps] == [(i.offset, i.opname) for i in dis.get_instructions(_described)
                                          if i.opname != "CACHE"]
    if sys.version_info >= (3, 13):
        # 3.13 loads x and w with one instruction (w on top), and pushes a call's NULL after the callable (the
        # step says what is below it); np.tanh is called with a PUSH_NULL after LOAD_ATTR
        assert steps[("LOAD_FAST_LOAD_FAST", "x, w")] == "tensor f64[8,8]"
        len_global, np_global = "len + NULL", "np"
        assert steps[("PUSH_NULL", "")] == "stack bookkeeping"
    else:
        assert steps[("LOAD_FAST", "x")] == "tensor f64[4,8]"
        len_global, np_global = "NULL + len", "NULL + np"
    assert steps[("BINARY_OP", "@")] == "recorded matmul"
    assert steps[("STORE_FAST", "h")] == "Python binding h"
    assert steps[("LOAD_FAST", "scale")] == "Python value 0.5"
    assert steps[("LOAD_GLOBAL", len_global)] == "Python value builtin_function_or_meth"  # (24 characters)
    assert steps[("LOAD_GLOBAL", np_global)] == "Python value module"
    assert steps[("LOAD_ATTR", "tanh")] == "Python value ufunc"
    assert steps[("CALL", "")] == "recorded tanh"  # (the later of the two CALLs: len's left a Python value 2)
    assert steps[("LOAD_FAST", "names")] == "Python value list"
    assert steps[("RETURN_VALUE", "")] == "return"
    assert seg.steps is seg.steps  # worded once
