"""Capture never hides its own errors (frontends/dynamo/internal_errors.py).

An exception graph_lab's own code raises while compile() captures is a bug: the break it makes says "internal error
in graph_lab while capturing: ... (please report)" in explain() and in the graph_breaks log, and under the strict
switch (set for the whole suite by conftest.py) it is raised as ``InternalCaptureError``. An error of the program
itself (an index out of range, unpacking too few values, NumPy refusing the operands) stays an ordinary break, and
the compiled function raises it exactly as eager Python does. And nothing internal to graph_lab (``BreakGraph``
and the other exceptions capture uses to steer itself) ever reaches the caller of a compiled function.
"""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from graph_lab import logs
from graph_lab.errors import InternalCaptureError
from graph_lab.frontends.dynamo import cache_hit_fast_path, capture_loop, frame
from graph_lab.frontends.tensor import Tensor
from graph_lab.ir.types import TensorType

X = np.arange(6.0).reshape(2, 3)


def test_the_suite_runs_with_strict_capture():
    """conftest.py turns the switch on, so that no test passes over an internal error."""
    assert logs.strict_capture()


@pytest.fixture
def graph_lab_bug(monkeypatch):
    """A bug of graph_lab, made on purpose: a stand-in's negation calls graph_lab code with a value it does not
    take, so the TypeError is raised inside graph_lab's package (ir/types.py)."""
    monkeypatch.setattr(Tensor, "__neg__", lambda self: TensorType.of(None))


def negate_then_add(x):
    y = -x
    return y + 1.0


def test_an_internal_error_is_raised_under_the_strict_switch(graph_lab_bug):
    with pytest.raises(InternalCaptureError, match=r"internal error in graph_lab while capturing: TypeError.*"
                                                   r"ir/types\.py.*please report") as info:
        graph_lab.compile(negate_then_add)(X)
    assert isinstance(info.value.__cause__, TypeError)  # the original, with the traceback that shows where


def test_an_internal_error_is_reported_as_one_without_the_switch(graph_lab_bug, monkeypatch, capsys):
    monkeypatch.setattr(logs, "_strict_capture", False)
    report = graph_lab.explain(negate_then_add)(X)
    assert report.graph_break_count == 1
    reason = report.breaks[0].reason
    assert reason.startswith("internal error in graph_lab while capturing: TypeError: ")
    assert reason.endswith("please report)")
    assert "internal error in graph_lab" in str(report)
    logs.set_logs("graph_breaks")
    try:
        cf = graph_lab.compile(negate_then_add)
        np.testing.assert_array_equal(cf(X), -X + 1.0, strict=True)  # the break ran NumPy's negation for real
    finally:
        logs.set_logs()
    assert "internal error in graph_lab while capturing: TypeError" in capsys.readouterr().err


# --- the program's own errors: ordinary breaks, raised as eager Python raises them


class Point:
    def __init__(self):
        self.x = 1.0


def index_past_the_end(x, xs):
    return x * xs[10]


def unpack_too_many(x, xs):
    a, b = xs
    return x * a


def unpack_too_few(x, xs):
    a, b, c, d = xs
    return x * a


def unpack_star_too_few(x, xs):
    a, b, *rest, c, d = xs
    return x * a


def missing_key(x, xs):
    return x * {"a": 1.0}["b"]


def missing_attribute(x, xs):
    return x * Point().y


def ufunc_with_one_argument(x, xs):
    return np.maximum(x)


def matmul_with_a_number(x, xs):
    return x @ 3.0


def truth_of_many_values(x, xs):
    if x > 1.0:
        return x
    return -x


def scalar_of_many_values(x, xs):
    return float(x) + 1.0


def transpose_of_a_vector(x, xs):
    return x[0].mT


def broadcast_mismatch(x, xs):
    return np.add(x, np.ones(4))


def raise_in_an_inlined_function(x, xs):
    def check(v):
        if v.shape[0] != 5:
            raise ValueError(f"want 5 rows, got {v.shape[0]}")
        return v
    return check(x) * 2.0


def error_after_a_break(x, xs):
    y = x * 2.0
    print("between graphs", end="")
    return y + xs[7]


def error_in_a_loop(x, xs):
    total = x
    for i in range(5):
        total = total + xs[i]
    return total


def caught_by_the_function(x, xs):
    try:
        return x * xs[10]
    except IndexError:
        return x - 1.0


def next_of_an_empty_iterator(x, xs):
    return x * next(iter([]))


PROGRAM_ERRORS = [index_past_the_end, unpack_too_many, unpack_too_few, unpack_star_too_few, missing_key,
                  missing_attribute, ufunc_with_one_argument, matmul_with_a_number, truth_of_many_values,
                  scalar_of_many_values, transpose_of_a_vector, broadcast_mismatch, raise_in_an_inlined_function,
                  error_after_a_break, error_in_a_loop, next_of_an_empty_iterator]

INTERNAL_TYPES = (frame.BreakGraph, frame.Unsupported, capture_loop.Restart, cache_hit_fast_path._NotFast,
                  InternalCaptureError)
"""What capture raises to steer itself (and InternalCaptureError, which these programs must not cause)."""


@pytest.mark.parametrize("fn", PROGRAM_ERRORS, ids=lambda f: f.__name__)
def test_the_programs_errors_are_raised_as_eager(fn, capsys):
    xs = [1.0, 2.0, 3.0]
    with pytest.raises(Exception) as eager:
        fn(X, xs)
    cf = graph_lab.compile(fn)
    for _ in range(2):  # the first call captures, the second runs what the first cached
        with pytest.raises(Exception) as compiled:
            cf(X, xs)
        assert not isinstance(compiled.value, INTERNAL_TYPES), repr(compiled.value)
        assert type(compiled.value) is type(eager.value)
        assert str(compiled.value) == str(eager.value)
    capsys.readouterr()


def test_an_error_the_function_catches_is_caught():
    cf = graph_lab.compile(caught_by_the_function)
    for _ in range(2):
        np.testing.assert_array_equal(cf(X, [1.0]), caught_by_the_function(X, [1.0]), strict=True)


# --- the internal errors the issue found, fixed


def count_marked_triples(mask, triples):
    """A mask check over index triples: ``mask.item(i, j, k)`` (once an internal TypeError of the stand-in)."""
    n = 0
    for i, j, k in triples:
        if mask.item(i, j, k):
            n += 1
    return n


def count_marked_tuples(mask, triples):
    n = 0
    for t in triples:
        n += mask.item(t)
    return n


@pytest.mark.parametrize("fn", [count_marked_triples, count_marked_tuples])
def test_item_with_an_index_is_a_data_dependent_break(fn):
    rng = np.random.default_rng(5)
    mask = rng.random((3, 4, 5)) > 0.5
    triples = [tuple(int(v) for v in rng.integers(0, 3, 3)) for _ in range(6)]
    cf = graph_lab.compile(fn)
    assert cf(mask, triples) == fn(mask, triples)
    report = graph_lab.explain(fn)(mask, triples)
    assert report.breaks and all(b.reason.startswith("data-dependent value: the item of a tensor")
                                 for b in report.breaks)


def test_item_with_an_index_of_a_stand_in():
    """``x.item(4)`` is a Python number: under trace (mode "error") a TraceError, under compile() a break."""
    flat = np.arange(6.0)

    def fn(x):
        return x * x.item(4)
    with pytest.raises(graph_lab.TraceError):
        graph_lab.trace(fn, {"x": (6,)})
    assert graph_lab.compile(fn)(flat).tolist() == fn(flat).tolist()
