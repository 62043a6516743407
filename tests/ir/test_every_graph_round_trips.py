"""Every graph the suite makes prints, parses back to the same text, and runs the same; and its generated
Python (``g.to_python()``) runs bit for bit like the reference interpreter.

The graphs: every op-table sample (tests/support/opinfo.py) traced, graphs with value guards, the graphs a LazyRunner
executed, and the segment graphs of compile().
"""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from graph_lab import F, LazyRunner, parse, run, trace
from tests.support.opinfo import SAMPLES
from tests.ops.test_ops import assert_same, trace_sample


def assert_round_trip(g, inputs: dict) -> None:
    text = str(g)
    back = parse(text, dict(g.param_values))
    assert str(back) == text
    with np.errstate(all="ignore"):
        want = run(g, inputs)
        got = run(back, inputs)
    for a, b in zip(got, want):
        assert_same(a, b, "run(parse(str(g)))")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id for s in SAMPLES])
def test_op_sample_round_trips_and_to_python_matches_run(sample):
    g, names = trace_sample(sample)
    inputs = dict(zip(names, (x.copy() for x in sample.inputs)))
    assert_round_trip(g, inputs)
    with np.errstate(all="ignore"):
        want = run(g, inputs)
        got = g.to_python()(**{k: v.copy() for k, v in inputs.items()})
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert_same(np.asarray(a), b, "g.to_python()")


def _branchy(x):
    s = x.sum(axis=-1).sum(axis=-1)
    if s > 0:
        return x * 2.0
    return x * -1.0


def test_guarded_trace_round_trips():
    pos = np.abs(np.random.default_rng(0).standard_normal((3, 4)))
    g = trace(_branchy, {"x": (3, 4)}, mode="guard", example={"x": pos})
    assert len(g.guards) == 1
    assert_round_trip(g, {"x": pos})
    back = parse(str(g))
    assert graph_lab.check_guards(back, {"x": pos}) and not graph_lab.check_guards(back, {"x": -pos})


def test_lazy_runner_graphs_round_trip():
    rng = np.random.default_rng(1)
    lr = LazyRunner()
    w = lr.tensor(rng.standard_normal((4, 4)))
    h = lr.tensor(rng.standard_normal((2, 4)))
    for _ in range(3):
        h = F.tanh(h @ w) + h
        if float(h.sum()) > 100:  # a break each iteration
            h = h * 0.5
    lr.materialize(h)
    assert len(lr.executed) >= 3
    for g in lr.executed:
        inputs = {n.attrs["name"]: rng.standard_normal(n.attrs["type"].shape) for n in g.input_nodes}
        assert_round_trip(g, inputs)


def _two_graphs(x, w):
    h = np.tanh(x @ w)
    if h.mean() > 0:
        return h[:, ::2] * 3.0
    return np.concatenate([h, -h], axis=1)


def test_compile_segment_graphs_round_trip():
    rng = np.random.default_rng(2)
    cf = graph_lab.compile(_two_graphs)
    for sign in (1.0, -1.0):
        x, w = rng.standard_normal((3, 4)), sign * np.abs(rng.standard_normal((4, 4)))
        cf(np.abs(x), w)
    segments = [s for entries in cf.cache.values() for s in entries if s.graph.count()]
    assert len(segments) >= 3
    for seg in segments:
        g = seg.graph
        inputs = {n.attrs["name"]: rng.standard_normal(n.attrs["type"].shape) for n in g.input_nodes}
        assert_round_trip(g, inputs)
