"""Cache hits of functions with graph breaks (the general path of ``compile()``): every call computes and does
what the plain function does, in order, however the branches alternate, and ``last_events``/``explain()`` still
say what happened. (The general path keeps per-segment plans and decides ``if tensor:`` without a Frame; these
tests pin that it changes nothing.)"""

import numpy as np
import pytest

import graph_lab


def model(x, w):
    h = np.tanh(x @ w)
    if h.sum() > 0:  # a branch on tensor data: a graph break
        return h * 2.0
    return -h


def inputs(n: int, rows: int = 4):
    """Inputs whose branch alternates with ``n``."""
    sign = 1.0 if n % 2 == 0 else -1.0
    return np.full((rows, 8), sign) + 0.01 * n, np.full((8, 8), 0.1)


def test_alternating_branches_match_eager():
    cf = graph_lab.compile(model)
    for n in range(40):
        x, w = inputs(n)
        np.testing.assert_array_equal(cf(x, w), model(x, w))
    assert cf.captures == 3  # the segment before the break and one per branch, each captured once
    assert cf.recompiles == 0


def test_last_events_report_each_offset_of_a_hit():
    cf = graph_lab.compile(model)
    x, w = inputs(0)
    cf(x, w)
    first = [(e.offset, e.captured) for e in cf.last_events]
    cf(x, w)
    assert [(e.offset, e.captured) for e in cf.last_events] == [(o, False) for o, _ in first]
    assert len(first) == 2 and first[0][1] and first[1][1]
    x, w = inputs(1)  # the other branch: a new offset is captured, the first is a hit
    cf(x, w)
    events = cf.last_events
    assert [e.captured for e in events] == [False, True]
    assert events[1].offset != first[1][0]
    runs = cf.body_runs
    cf(x, w)
    assert cf.body_runs == runs + 1  # the jump at the break ran once more, as Python


def test_shape_change_recompiles_and_logs_why():
    cf = graph_lab.compile(model)
    for rows in (4, 4, 6, 6, 3, 4, 6):
        for n in range(3):
            x, w = inputs(n, rows)
            np.testing.assert_allclose(cf(x, w), model(x, w), rtol=1e-12)
    assert cf.recompiles >= 1
    assert any("shape" in line or "changed" in line for line in cf.recompile_log)


def test_print_then_branch_prints_on_every_call(capsys):
    def f(x):
        h = x * 2.0
        print("sum", float(h.sum()))
        if h.sum() > 0:
            return h + 1.0
        return h - 1.0

    cf = graph_lab.compile(f)
    for n in range(10):
        x = np.full(3, 1.0 if n % 3 else -1.0)
        got = cf(x)
        compiled_out = capsys.readouterr().out
        expected = f(x)
        assert compiled_out == capsys.readouterr().out != ""
        np.testing.assert_array_equal(got, expected)


def test_side_effects_at_breaks_in_order():
    log = []

    def f(x):
        log.append("start")
        h = np.tanh(x)
        if h.max() > 0.5:
            log.append("big")
            h = h * 3.0
        else:
            log.append("small")
        log.append(h.shape)
        return h.sum()

    cf = graph_lab.compile(f)
    for n in range(12):
        x = np.full((2, 2), 2.0 if n % 2 else 0.1)
        log.clear()
        got = cf(x)
        seen = list(log)
        log.clear()
        expected = f(x)
        assert seen == log
        assert got == expected


def test_global_write_at_break():
    def f(x):
        global COUNTER
        h = x + 1.0
        COUNTER = COUNTER + 1
        if h.sum() > 0:
            return h
        return -h

    globals()["COUNTER"] = 0
    cf = graph_lab.compile(f)
    for n in range(6):
        x = np.full(2, float(n % 2) - 0.5 * (n % 3))
        np.testing.assert_array_equal(cf(x), -(x + 1.0) if (x + 1.0).sum() <= 0 else x + 1.0)
    assert COUNTER == 6


def test_if_not_and_loop_back_on_tensor():
    def f(x):
        n = 0
        while x.sum() > 1.0:  # a backward conditional jump on a tensor, at each iteration
            x = x * 0.5
            n += 1
        if not (x.max() > 0.4):
            return x, n
        return x + 1.0, n

    cf = graph_lab.compile(f, recompile_limit=100)
    for v in (8.0, 1.0, 0.3, 3.0, 8.0, 0.3):
        x = np.full(2, v)
        got, expected = cf(x), f(x)
        np.testing.assert_array_equal(got[0], expected[0])
        assert got[1] == expected[1]


def test_ambiguous_truth_raises_as_eager():
    def f(x):
        h = x * 2.0
        if h > 0:  # more than one element: ValueError, as in eager NumPy
            return h
        return -h

    cf = graph_lab.compile(f)
    for _ in range(3):
        with pytest.raises(ValueError, match="ambiguous"):
            cf(np.ones(3))
        np.testing.assert_array_equal(cf(np.ones(1)), f(np.ones(1)))


def test_ambiguous_truth_caught_by_the_function():
    def f(x):
        h = x * 2.0
        try:
            if h > 0:
                return h
        except ValueError:
            return h - 100.0
        return -h

    cf = graph_lab.compile(f)
    for x in (np.ones(3), np.ones(1), -np.ones(1), np.ones(3)):
        np.testing.assert_array_equal(cf(x), f(x))


def test_branch_on_a_local_passed_through():
    def f(x, flag):
        h = x @ x.T
        if flag:  # a Python value, not a graph output: guarded, no break here
            h = h + 1.0
        if h.trace() > 3.0:
            return h, flag
        return -h, flag

    cf = graph_lab.compile(f)
    for n in range(10):
        x = np.eye(2) * (n % 3)
        got, expected = cf(x, n % 2 == 0), f(x, n % 2 == 0)
        np.testing.assert_array_equal(got[0], expected[0])
        assert got[1] is expected[1]


def test_explain_reports_the_break_after_hits():
    cf = graph_lab.compile(model)
    x, w = inputs(0)
    for _ in range(3):
        cf(x, w)
    segments = [e.segment for e in cf.last_events]
    assert segments[0].end == "break" and "POP_JUMP" in segments[0].break_instruction
    report = graph_lab.explain(cf)(x, w)
    assert report.graph_count == 2
    assert len(report.breaks) == 1
    assert "data-dependent" in report.breaks[0].reason
