"""The known traps of each capture strategy, as executable tests: what each one does, checked against eager."""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from graph_lab import TraceError, run, trace


def _mutates_a_constant(x):
    m = np.zeros(3)
    y = x + m
    m[0] = 1.0  # eager: y was computed before the write, z after it
    z = x + m
    return y, z


def test_trace_snapshots_arrays_at_the_moment_they_are_used():
    x = np.arange(3.0)
    g = trace(_mutates_a_constant, {"x": (3,)})
    for got, want in zip(run(g, {"x": x}), _mutates_a_constant(x)):
        np.testing.assert_array_equal(got, want)


def test_compile_snapshots_arrays_too():
    x = np.arange(3.0)
    cf = graph_lab.compile(_mutates_a_constant)
    for _ in range(2):
        for got, want in zip(cf(x), _mutates_a_constant(x)):
            np.testing.assert_array_equal(got, want)


def _random_noise(x):
    return x + np.random.default_rng().standard_normal(x.shape)


def test_trace_freezes_random_numbers_drawn_at_trace_time():
    # The trap: NumPy's random calls do not see the stand-in, so they run once while tracing and the draw
    # becomes a constant. Every run of the graph adds the same noise; eager draws new noise each call. trace
    # refuses it by default, and freezes it with a FrozenRandomWarning when specializing is asked for.
    with pytest.raises(graph_lab.TraceError, match="random draw"):
        trace(_random_noise, {"x": (4,)})
    zeros = np.zeros(4)
    with pytest.warns(graph_lab.FrozenRandomWarning):
        g = trace(_random_noise, {"x": (4,)}, mode="specialize", example={"x": zeros})
    np.testing.assert_array_equal(run(g, {"x": zeros})[0], run(g, {"x": zeros})[0])
    assert not np.array_equal(_random_noise(zeros), _random_noise(zeros))


def test_compile_keeps_random_draws_out_of_the_graph():
    cf = graph_lab.compile(_random_noise)
    zeros = np.zeros(4)
    assert not np.array_equal(cf(zeros), cf(zeros))  # a fresh draw on each call, as eager


def _appends(x, log):
    log.append(len(log))
    return x * 2.0


def test_trace_loses_side_effects_compile_keeps_them():
    log = []
    g = trace(lambda x: _appends(x, log), {"x": (2,)})
    run(g, {"x": np.ones(2)})
    run(g, {"x": np.ones(2)})
    assert log == [0]  # happened once, while tracing
    log2 = []
    cf = graph_lab.compile(_appends)
    cf(np.ones(2), log2)
    cf(np.ones(2), log2)
    assert log2 == [0, 1]


def _writes_through_reshape(x):
    x = x.copy()
    flat = x.reshape(-1)
    flat[0] = 5.0
    return x


def test_reshape_alias_is_refused_not_guessed():
    with pytest.raises(TraceError, match="reshape"):
        trace(_writes_through_reshape, {"x": (2, 3)})


def test_compile_runs_a_refused_alias_as_python_and_stays_exact():
    x = np.arange(6.0).reshape(2, 3)
    cf = graph_lab.compile(_writes_through_reshape)
    np.testing.assert_array_equal(cf(x), _writes_through_reshape(x))
