"""Loops that break the graph at every iteration (frontends/dynamo/resume.py).

After its break budget in one call (``BREAK_BUDGET`` breaks, or ``RECAPTURE_BUDGET`` captures again at a place the
call has captured at), a compiled function runs the rest of that call as plain Python: CPython runs a copy of the
function's bytecode from the instruction after the last break, with the frame's locals and stack. Every later call
runs the function itself. Each case is checked against eager Python, and against the budgets' numbers.
"""

from __future__ import annotations

import sys
import traceback
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

import graph_lab
from graph_lab.frontends.dynamo.frame import NULL
from graph_lab.frontends.dynamo.resume import (BREAK_BUDGET, RECAPTURE_BUDGET, BreakBudgetWarning, resumable,
                                               resume_function)

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from corpus.numpy_api import crc32  # noqa: E402  (the corpus's kernel: a branch on every bit of every byte)


def crc32_reference(data: np.ndarray) -> int:
    """CRC-32 by the table-free formula of zlib, for an independent check of the kernel's results."""
    import zlib
    return zlib.crc32(data.tobytes())


@pytest.mark.parametrize("n", [10, 100, 10_000])
def test_crc32_at_any_length(n):
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8)
    cf = graph_lab.compile(crc32)
    with pytest.warns(BreakBudgetWarning, match="captures again at one place in one call"):
        assert cf(data) == crc32(data) == crc32_reference(data)
    # Captures stop at the recapture budget, well before the recompile limit.
    assert cf.recompiles < cf.recompile_limit
    assert cf.captures <= RECAPTURE_BUDGET + 2
    captures = cf.captures
    other = np.random.default_rng(n + 1).integers(0, 256, n, dtype=np.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once, not on every call
        assert cf(other) == crc32_reference(other)
    assert cf.captures == captures


def test_explain_gives_one_reason():
    data = np.arange(200, dtype=np.uint8)
    with pytest.warns(BreakBudgetWarning):
        report = graph_lab.explain(crc32)(data)
    assert report.eager_fallback.startswith(f"{RECAPTURE_BUDGET} captures again at one place in one call")
    assert str(report).count("runs as plain Python") == 1
    assert report.graph_break_count <= RECAPTURE_BUDGET + 2


def test_after_the_budget_every_call_is_the_function_itself():
    """What keeps such a function within a few percent of eager (benchmarks/bench_corpus.py --only crc32 times
    it): once the budget is spent, later calls run the function itself, with no capture and no guard."""
    data = np.random.default_rng(0).integers(0, 256, 2_000, dtype=np.uint8)
    cf = graph_lab.compile(crc32)
    with pytest.warns(BreakBudgetWarning):
        assert cf(data) == crc32(data)
    captures, reason = cf.captures, cf.eager_fallback
    assert "every later call" in reason
    for seed in (1, 2, 3):
        other = np.random.default_rng(seed).integers(0, 256, 2_000 + seed, dtype=np.uint8)
        assert cf(other) == crc32(other)
    assert cf.captures == captures and cf.eager_fallback == reason


def sign_walk(x):
    """A branch on every element's value, with the same guards each time: every iteration is a cache hit."""
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            total += 1.0
        else:
            total -= 0.5
    return total


def test_a_loop_of_cache_hits_stops_at_the_break_budget():
    x = np.random.default_rng(1).standard_normal(BREAK_BUDGET + 100)
    cf = graph_lab.compile(sign_walk)
    with pytest.warns(BreakBudgetWarning, match=f"{BREAK_BUDGET} graph breaks in one call"):
        assert cf(x) == sign_walk(x)
    assert cf(x[::-1].copy()) == sign_walk(x[::-1].copy())


def test_a_short_loop_that_breaks_stays_compiled():
    """Under both budgets: the graphs are reused, nothing runs as plain Python."""
    x = np.random.default_rng(2).standard_normal(20)
    cf = graph_lab.compile(sign_walk)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cf(x) == sign_walk(x)
        assert cf(-x) == sign_walk(-x)
    assert cf.eager_fallback is None


def test_the_rest_of_the_call_keeps_side_effects_and_raises_as_eager():
    log = []

    def walk(x, limit):
        for i in range(x.shape[0]):
            if x[i] > 0:
                log.append(i)
            if i == limit:
                raise IndexError(f"stopped at {i}")  # @raise
        return len(log)

    x = np.random.default_rng(3).standard_normal(BREAK_BUDGET * 2)
    stop = x.shape[0] - 4  # past the budget: raised by the rest of the call, run as plain Python
    cf = graph_lab.compile(walk)
    with pytest.warns(BreakBudgetWarning), pytest.raises(IndexError, match=f"stopped at {stop}") as info:
        cf(x, stop)
    assert log == [i for i in range(stop + 1) if x[i] > 0]
    last = traceback.extract_tb(info.value.__traceback__)[-1]
    assert last.name == "walk" and last.line.endswith("# @raise")
    log.clear()
    assert cf(x, -1) == len([v for v in x if v > 0])


# --- resume_function itself


def test_resume_in_a_loop_with_a_closure_and_its_cell():
    def f(xs, k):
        seen = []

        def add(v):
            seen.append(v)
        total = 0
        for x in xs:
            total += x * k
            add(total)
        return total, seen

    cell = types.CellType([99])  # the cell of ``seen``, shared with the function made before the break

    def add_to_cell(v):
        cell.cell_contents.append(v)
    offset = next(i.offset for i in _instructions(f) if i.opname == "FOR_ITER")
    g = resume_function(f, offset, {"xs": [1, 2, 3], "k": 2, "total": 10, "seen": cell, "add": add_to_cell},
                        [iter([5, 6])], NULL)
    assert g() == (10 + 10 + 12, [99, 20, 32])


def test_resume_inside_a_try_block_finds_the_handler():
    def f(k):
        try:
            return 1 // k
        except ZeroDivisionError:
            return "caught"

    at = next(i for i in _instructions(f) if i.opname == "LOAD_FAST")  # `k`, with the 1 already on the stack
    assert resume_function(f, at.offset, {"k": 0}, [1], NULL)() == "caught"
    assert resume_function(f, at.offset, {"k": 1}, [1], NULL)() == 1


def test_resume_in_the_middle_of_a_call():
    def f(k):
        return print("value", k, end="") or k + 1

    ins = _instructions(f)
    loaded = next(i for i in ins if i.opname == "LOAD_GLOBAL")
    after = ins[ins.index(loaded) + 1]
    stack = [NULL, print] if sys.version_info < (3, 13) else [print, NULL]  # (3.13 pushes NULL above)
    assert resume_function(f, after.offset, {"k": 41}, stack, NULL)() == 42


def test_generators_are_not_resumed():
    def gen(x):
        yield x
    assert not resumable(gen) and resumable(sign_walk)


def _instructions(f):
    import dis
    return [i for i in dis.get_instructions(f) if i.opname != "CACHE"]
