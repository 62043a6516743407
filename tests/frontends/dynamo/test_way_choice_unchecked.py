"""A compiled function whose cache hits run the original function calls it without the guards, checking them on
one call in ``RECHECK_EVERY`` (``frontends/dynamo/way_choice.py``, ``unchecked_call``).

Every call is checked against eager NumPy (result, argument writes, side effects); the counts say which calls
checked the guards: a call with an input the cache has no entry for captures only when it is a checked one.
"""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from graph_lab.frontends.dynamo import way_choice
from graph_lab.frontends.dynamo.way_choice import FUNCTION, GRAPHS

EVERY = 5


@pytest.fixture(autouse=True)
def short_interval(monkeypatch):
    monkeypatch.setattr(way_choice, "RECHECK_EVERY", EVERY)


def mutate(a, b):
    a += b
    a *= 2.0
    return a.sum()


def logged(x, log):
    """A side effect on a list, a write into the argument, a graph break (the append)."""
    log.append(float(x[0]))
    x[1:] += x[:-1]
    return x * 0.5


def function_way(fn, *args):
    cf = graph_lab.compile(fn)
    cf(*args)
    cf(*args)  # (a cache hit: the fast path is made)
    cf.ways.choose(cf, FUNCTION, "the test")
    return cf


def check_mutate(cf, n: int) -> None:
    a, b = np.ones(n), np.arange(float(n))
    a2 = a.copy()
    got, want = cf(a, b), mutate(a2, b)
    assert type(got) is type(want) and got == want
    np.testing.assert_array_equal(a, a2, strict=True)


def test_unchecked_calls_run_the_function_on_any_input_and_capture_nothing():
    cf = function_way(mutate, np.ones(5), np.arange(5.0))
    before = (cf.captures, cf.recompiles)
    for call in range(EVERY - 1):  # a shape without a cache entry: the guards would fail, but are not checked
        check_mutate(cf, 7)
        assert (cf.captures, cf.recompiles) == before, f"call {call} checked the guards"
        assert cf.last_events == [] and cf.ways.unchecked == call + 1
    check_mutate(cf, 7)  # the checked call: a miss, so it captures
    assert (cf.captures, cf.recompiles) == (before[0] + 1, before[1] + 1)
    assert cf.last_events[0].captured and cf.ways.unchecked == 0
    check_mutate(cf, 7)
    assert cf.ways.measuring, "the new capture is measured again, both ways"


def test_a_checked_call_whose_guards_hold_runs_the_function_and_says_so():
    cf = function_way(mutate, np.ones(5), np.arange(5.0))
    captures = cf.captures
    for _ in range(EVERY):
        check_mutate(cf, 5)
    assert cf.ways.unchecked == 0 and cf.captures == captures
    events = cf.last_events
    assert len(events) == 1 and not events[0].captured, "the checked call hit the cache"
    assert cf.ways.way == FUNCTION and not cf.ways.measuring
    check_mutate(cf, 5)
    assert cf.last_events == []


def test_every_unchecked_call_keeps_side_effects_and_argument_writes():
    x0 = np.arange(6.0)
    cf = function_way(logged, x0.copy(), [])
    for call in range(3 * EVERY):
        x, log = np.arange(6.0) + call, [call]
        x2, log2 = x.copy(), [call]
        got, want = cf(x, log), logged(x2, log2)
        np.testing.assert_array_equal(got, want, strict=True)
        np.testing.assert_array_equal(x, x2, strict=True)
        assert log == log2


def test_an_exception_of_the_function_is_the_callers():
    cf = function_way(mutate, np.ones(5), np.arange(5.0))
    with pytest.raises(ValueError, match="broadcast"):
        cf(np.ones(5), np.ones(3))  # (unchecked: raised by the function itself, as eagerly)


def test_choosing_the_graphs_again_checks_every_call():
    cf = function_way(mutate, np.ones(5), np.arange(5.0))
    cf.ways.choose(cf, GRAPHS, "the test")
    captures = cf.captures
    check_mutate(cf, 9)
    assert cf.captures == captures + 1, "the graphs way checks the guards on every call"


def test_pin_keeps_the_guards_on_every_call():
    cf = graph_lab.compile(mutate)
    check_mutate(cf, 5)
    cf.ways.pin(FUNCTION, "the test")
    check_mutate(cf, 5)
    check_mutate(cf, 8)
    assert cf.captures == 2 and cf.ways.unchecked == 0


def test_explain_says_how_often_the_guards_are_checked():
    cf = function_way(mutate, np.ones(5), np.arange(5.0))
    text = cf.ways.describe()
    assert text.startswith("cache hits run the original function") and "the test" in text
    assert f"checked on one call in {EVERY}" in text


def test_a_way_is_graphs_or_function():
    cf = graph_lab.compile(mutate)
    with pytest.raises(ValueError, match="'graphs' or 'function'"):
        cf.ways.choose(cf, "eager", "the test")


def test_a_function_that_gave_up_runs_as_itself():
    cf = graph_lab.compile(mutate, recompile_limit=1, dynamic=False)
    with pytest.warns(graph_lab.RecompileLimitWarning):
        for n in (3, 4, 5):
            check_mutate(cf, n)
    assert cf.eager_fallback
    captures = cf.captures
    for n in (3, 6, 6):
        check_mutate(cf, n)
    assert cf.captures == captures
