"""The general path of a function with graph breaks: segments guard only the locals they may read
(``live_locals.py``), a builtin called at a break runs without a frame (``break_step.builtin_call``), and each
segment's guards are checked by a generated yes/no function (``segment_guards.py``). Every result is checked
against eager Python on the same arguments."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import graph_lab
from graph_lab.frontends.dynamo.live_locals import live_locals_at
from graph_lab.frontends.dynamo.segment_guards import make_holds
from graph_lab.frontends.dynamo.sources import FrameInputs


def _same(a, b) -> None:
    assert type(a) is type(b)
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    else:
        assert a == b


def overwritten_after_break(x, flag):
    t = x if flag else "a string"
    k = int(np.argmax(x))  # graph break: Python needs the int
    t = x * k
    return t + 1


def test_a_local_dead_after_a_break_may_change_type_without_a_recapture():
    cf = graph_lab.compile(overwritten_after_break)
    rng = np.random.default_rng(0)
    for flag in (True, False, True, False):
        x = rng.standard_normal(5)
        _same(cf(x, flag), overwritten_after_break(x, flag))
    resumes = [entries for offset, entries in cf.cache.items() if offset != cf._first]
    assert len(resumes) == 1 and len(resumes[0]) == 1  # t's type changed, the resume was captured once
    guarded = {g.source.describe() for g in resumes[0][0].guards.guards}
    assert "t" not in guarded and "x" in guarded


def read_in_handler(x, i):
    y = x * 2.0
    try:
        n = int(np.argmax(x))  # graph break
        y = x[n + i]  # IndexError for a large i: the handler reads y as it was before the try
    except IndexError:
        return y + 1.0
    return y


def test_a_local_read_only_by_an_exception_handler_is_live():
    cf = graph_lab.compile(read_in_handler)
    rng = np.random.default_rng(1)
    for shape, i in (((4,), 10), ((6,), 10), ((4,), 0), ((3, 2), 10)):
        x = rng.standard_normal(shape)
        _same(cf(x, i), read_in_handler(x, i))


def read_next_iteration(xs):
    total = np.zeros(3)
    prev = xs[0]
    for x in xs:
        if int(np.argmax(x)) > 0:  # graph break in every iteration
            total = total + prev
        prev = x * 2.0
    return total


def test_a_local_read_on_the_next_iteration_is_live():
    cf = graph_lab.compile(read_next_iteration)
    rng = np.random.default_rng(2)
    for n in (3, 5, 4):
        xs = [rng.standard_normal(3) for _ in range(n)]
        _same(cf(xs), read_next_iteration(xs))


def uses_locals(x):
    y = x + 1.0
    k = int(np.argmax(x))
    return sorted(locals()), y * k


def test_every_local_is_live_in_a_function_that_reads_its_frame():
    assert live_locals_at(uses_locals.__code__, 0) is None
    cf = graph_lab.compile(uses_locals)
    x = np.arange(4.0)
    for _ in range(2):
        got, want = cf(x), uses_locals(x)
        assert got[0] == want[0]
        _same(got[1], want[1])


def test_live_locals_of_straight_code():
    def f(a, b):
        c = a + 1
        b = c * 2
        return b

    first = live_locals_at(f.__code__, min(i.offset for i in __import__("dis").get_instructions(f)))
    assert first == {"a"}  # b is stored before it is read


def nan_to_int(x, default):
    try:
        k = int(x.sum())  # a break: int() of NaN raises ValueError, which the handler takes
    except ValueError:
        k = default
    return x * k


def test_a_builtin_raising_at_a_break_goes_to_the_functions_handler():
    cf = graph_lab.compile(nan_to_int)
    for x in (np.array([1.0, 2.0]), np.array([np.nan, 1.0]), np.array([3.0, 1.0])):
        _same(cf(x, 7), nan_to_int(x, 7))


def unhandled(x):
    return np.ones(2) * int(x.sum())


def test_a_builtin_raising_at_a_break_without_a_handler_raises_it():
    cf = graph_lab.compile(unhandled)
    _same(cf(np.array([1.0, 2.0])), unhandled(np.array([1.0, 2.0])))
    with pytest.raises(ValueError, match="NaN"):
        cf(np.array([np.nan]))


def appends(x, out):
    out.append(int(np.argmax(x)))  # two breaks: int() and the append to the caller's list
    out.append(len(out))
    return x + out[-2]


def test_builtin_calls_at_breaks_keep_their_side_effects():
    cf = graph_lab.compile(appends)
    rng = np.random.default_rng(3)
    got, want = [5], [5]
    for _ in range(3):
        x = rng.standard_normal(4)
        _same(cf(x, got), appends(x, want))
        assert got == want


def remove_or_count(x, out):
    try:
        out.remove(int(np.argmax(x)))  # a method of the caller's list at a break: ValueError when not there
    except ValueError:
        out.append(-1)
    return x * len(out)


def test_a_builtin_method_raising_at_a_break_goes_to_the_handler():
    cf = graph_lab.compile(remove_or_count)
    got, want = [0, 1, 2, 3], [0, 1, 2, 3]
    for x in (np.array([0.0, 5.0, 1.0]), np.array([0.0, 5.0, 1.0]), np.array([9.0, 1.0, 1.0])):
        _same(cf(x, got), remove_or_count(x, want))
        assert got == want


def test_the_generated_guard_check_agrees_with_the_guard_function():
    cf = graph_lab.compile(overwritten_after_break)
    rng = np.random.default_rng(4)
    cf(rng.standard_normal(5), True)
    cf(rng.standard_normal(5), True)
    states = [({"x": rng.standard_normal(5), "flag": True}, []), ({"x": rng.standard_normal(6), "flag": True}, []),
              ({"x": "no array", "flag": False}, []), ({"flag": True}, [])]
    for entries in cf.cache.values():
        for seg in entries:
            holds = make_holds(cf, seg)
            for local_vars, stack in states:
                inputs = FrameInputs(local_vars, stack, cf.fn.__globals__, cf.fn.__closure__ or ())
                assert holds(local_vars, stack) == (seg.check(inputs) < 0)


@pytest.mark.parametrize("name, most", [("gpt2_greedy", 4), ("llama_decode", 6)])
def test_decode_loops_capture_at_most(name, most):
    # (llama: the prompt, the resume after int(), the step static then symbolic, a token of 0 (sizes 0 and 1 are
    # specialized, so an int of 0 is too), the loop exit. gpt2: the prompt, the step static then symbolic, the
    # exit; the append after int() runs at the same break.)
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[3] / "benchmarks"))
    from corpus import CORPUS

    kernel = next(k for k in CORPUS if k.name == name)
    model, prompt, _ = kernel.make(16, np.random.default_rng(0))
    eager_model, _, _ = kernel.make(16, np.random.default_rng(0))
    cf = graph_lab.compile(kernel.fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cf(model, prompt, 20) == kernel.fn(eager_model, prompt, 20)
    assert cf.captures <= most
