"""compile() captures F.cond, F.while_loop, F.fori_loop and F.scan as one control-flow node each, with the
functions it is given captured into regions from their bytecode (guarded like any inlined call); what cannot be
captured inside them makes the whole call a graph break. Every result is compared with the plain-Python reference
of the op-table's control-flow samples, or with eager calls."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import graph_lab
from graph_lab import F
from graph_lab.ops import Op

from tests.support import opinfo

CONTROL_OPS = {Op.COND, Op.WHILE_LOOP, Op.FORI_LOOP, Op.SCAN}
SAMPLES = [s for s in opinfo.SAMPLES if s.op in CONTROL_OPS]


def region_ops(graph) -> set:
    return {n.op for n in graph.nodes if n.regions}


def assert_bits(got, want, where):
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_bits(g, w, f"{where}[{i}]")
        return
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=where, strict=True)


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id for s in SAMPLES])
def test_control_flow_samples_are_captured_as_one_graph(sample):
    cf = graph_lab.compile(sample.fn, backend="codegen")
    for _ in range(2):  # the capture, then a cache hit
        got = cf(*sample.inputs)
        assert_bits(got, sample.fn(*sample.inputs), f"{sample.id} vs F eagerly")
        assert_bits(got, sample.ref(*sample.inputs), f"{sample.id} vs plain Python")
    events = cf.last_events
    assert [e.segment.end for e in events] == ["return"], [e.segment.break_reason for e in events]
    assert sample.op in region_ops(events[0].segment.graph)
    assert cf.captures == 1


def test_one_graph_is_right_for_both_branches_and_every_trip_count():
    def f(x, w):
        y = F.cond(x.sum() > 0, lambda h: np.tanh(h @ w), lambda h: -h, x)
        y, n = F.while_loop(lambda c: np.abs(c[0]).sum() > 1.0, lambda c: (c[0] * 0.5, c[1] + 1), (y, 0))
        return y * 2.0, n

    cf = graph_lab.compile(f, backend="codegen")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 3))
    for sign, scale in [(1, 1.0), (-1, 1.0), (1, 100.0), (-1, 0.01)]:
        x = sign * np.abs(rng.standard_normal((2, 3))) * scale
        assert_bits(cf(x, w), f(x, w), f"sign {sign} scale {scale}")
    assert cf.captures == 1 and len(cf.last_events) == 1


SCALE = 2.0
OFFSET = 1
REPEAT = 2


def doubled(h):
    for _ in range(REPEAT):  # Python control flow inside a branch: decided at capture, so guarded
        h = h * 2.0
    return h


def test_what_a_branch_reads_is_read_again_or_guarded():
    def f(x):
        return F.cond(x.sum() > 0, lambda h: doubled(h) * SCALE + OFFSET, lambda h: h - OFFSET, x)

    cf = graph_lab.compile(f, backend="codegen")
    x = np.ones(3)
    assert_bits(cf(x), f(x), "first")
    module = sys.modules[__name__]
    try:
        module.OFFSET, module.SCALE = 5, 3.0  # numbers in arithmetic: graph inputs, lifted into the region
        assert_bits(cf(x), f(x), "after OFFSET and SCALE changed")
        assert_bits(cf(-x), f(-x), "other branch")
        assert cf.captures == 1
        module.REPEAT = 3
        assert_bits(cf(x), f(x), "after REPEAT changed")
        assert cf.captures == 2 and "global REPEAT is 3" in cf.recompile_log[-1]
    finally:
        module.OFFSET, module.SCALE, module.REPEAT = 1, 2.0, 2


def test_closure_cells_and_python_bounds_are_guarded():
    def make(k):
        return lambda x, n: F.fori_loop(0, n, lambda i, acc: acc * k + x[i], x)

    fn = make(0.5)
    cf = graph_lab.compile(fn, backend="codegen")
    x = np.arange(4.0)
    for n in (3, 3, 2, 4):
        assert_bits(cf(x, n), fn(x, n), f"n={n}")
    fn.__closure__[0].cell_contents = 0.25
    assert_bits(cf(x, 4), fn(x, 4), "k changed")


class Model:
    def __init__(self, w):
        self.w = w

    def branch(self, h):
        return h @ self.w

    def __call__(self, x):
        return F.cond(x[0, 0] > 0, self.branch, lambda h: h, x)


def test_a_bound_method_as_a_branch():
    m = Model(np.eye(3) * 2.0)
    cf = graph_lab.compile(m.__call__.__func__, backend="codegen")
    for x in (np.ones((2, 3)), -np.ones((2, 3))):
        assert_bits(cf(m, x), m(x), "method branch")
    m.w = np.eye(3) * 3.0  # a new array object in the attribute: read through its source on each call
    assert_bits(cf(m, np.ones((2, 3))), m(np.ones((2, 3))), "new weights")


def test_a_print_inside_a_branch_makes_the_call_a_graph_break(capsys):
    def f(x):
        def loud(h):
            print("then")
            return h * 2.0
        return F.cond(x.sum() > 0, loud, lambda h: -h, x) + 1.0

    cf = graph_lab.compile(f, backend="codegen")
    for x in (np.ones(2), -np.ones(2), np.ones(2)):
        assert_bits(cf(x), f(x), "print in branch")
    assert capsys.readouterr().out == "then\n" * 4  # two compiled calls with x > 0, two eager ones
    assert any(e.segment.end == "break" for e in cf.last_events)
    with pytest.raises(graph_lab.GraphBreak, match="print"):
        graph_lab.compile(f, fullgraph=True)(np.ones(2))


def test_a_python_branch_on_a_tensor_inside_a_region_is_a_graph_break():
    def f(x):
        def body(h):
            if h.sum() > 10:  # a region is traced once, so it cannot decide this
                return h
            return h * 2.0
        return F.cond(x[0] > 0, body, lambda h: h, x)

    cf = graph_lab.compile(f, backend="codegen")
    for x in (np.ones(3), np.full(3, 5.0), -np.ones(3)):
        assert_bits(cf(x), f(x), f"x={x}")
    report = graph_lab.explain(f)(np.ones(3))
    assert report.graph_break_count == 1


def test_a_python_predicate_runs_the_python_branch_guarded():
    def f(x, flag):
        return F.cond(flag, lambda h: h * 2.0, lambda h: h * 3.0, x)

    cf = graph_lab.compile(f, backend="codegen")
    x = np.ones(2)
    for flag in (True, False, True):
        assert_bits(cf(x, flag), f(x, flag), f"flag={flag}")
    assert cf.captures == 2
