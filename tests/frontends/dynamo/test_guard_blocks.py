"""Guards checked as one block or one generated function (a decode step's guards): the ``disjoint`` guards of a
segment (``dynamo/overlap.py``) and its shape guards (``dynamo/size_checks.py``) say exactly what the guards
one by one say (``np.may_share_memory`` of each pair; ``ShapeGuard.check`` of each fact)."""

from __future__ import annotations

import itertools
import mmap

import numpy as np
import pytest

import graph_lab
from graph_lab.frontends.dynamo.overlap import first_overlap
from graph_lab.frontends.dynamo.size_checks import sizes_check
from graph_lab.guards import ShapeGuard
from graph_lab.ir.relations import relation
from graph_lab.ir.symbolic import symbol


def array_pool() -> list:
    """Arrays that own their memory, views that overlap and views that do not, arrays on buffers that are not
    arrays (one bytearray, one mmap, one memoryview of an array), the same object twice, an empty array."""
    a = np.arange(24.0).reshape(4, 6)
    b = np.zeros((3, 3))
    raw = bytearray(64)
    mapped = mmap.mmap(-1, 64)
    pool = [a, b, a[:2], a[2:], a[:, ::2], a[:, 1::2], a.T, b[1], np.frombuffer(raw, np.float64, 4),
            np.frombuffer(raw, np.float64, 4, offset=32), np.frombuffer(raw, np.float64, 2, offset=16),
            np.frombuffer(mapped, np.uint8), np.asarray(memoryview(b)), np.ndarray((2,), np.float64, buffer=a),
            np.zeros(0), np.ones(5), np.broadcast_to(b[0], (4, 3)), a]
    return pool


def pairwise(arrays, pairs) -> int:
    return next((k for k, (i, j) in enumerate(pairs) if np.may_share_memory(arrays[i], arrays[j])), -1)


def test_the_block_answers_as_the_pairwise_guards_on_every_pair():
    pool = array_pool()
    pairs = tuple(itertools.combinations(range(len(pool)), 2))
    for pair in pairs:  # each pair alone: the first failing index is 0 or none
        arrays = tuple(pool)
        assert first_overlap(arrays, (pair,)) == pairwise(arrays, (pair,)), pair


def test_the_block_finds_the_first_failing_guard_of_random_blocks():
    pool = array_pool()
    rng = np.random.default_rng(0)
    for _ in range(400):
        chosen = tuple(pool[i] for i in rng.choice(len(pool), size=rng.integers(2, 7), replace=False))
        pairs = tuple((int(i), int(j)) for i, j in itertools.combinations(range(len(chosen)), 2)
                      if rng.random() < 0.7)
        assert first_overlap(chosen, pairs) == pairwise(chosen, pairs)


def test_arrays_that_own_their_memory_pass_without_a_pairwise_test(monkeypatch):
    arrays = tuple(np.zeros((8, 8)) for _ in range(30))
    pairs = tuple((0, j) for j in range(1, 30))
    monkeypatch.setattr(np, "may_share_memory", lambda a, b: pytest.fail("a pairwise test was run"))
    assert first_overlap(arrays, pairs) == -1


def cache_step(cache_k, cache_v, x, w, pos):
    """Two caches written at a position, read back with weights: a decode step's writes in miniature."""
    cache_k[pos] = x @ w
    cache_v[pos] = x * 2.0
    return cache_k[:pos + 1].sum(axis=0) + cache_v[:pos + 1].sum(axis=0)


def fresh():
    rng = np.random.default_rng(3)
    return np.zeros((8, 4)), np.zeros((8, 4)), rng.standard_normal(4), rng.standard_normal((4, 4))


@pytest.mark.parametrize("backend", ["codegen", "interpret"])
def test_a_compiled_step_given_overlapping_arrays_computes_what_eager_computes(backend):
    cf = graph_lab.compile(cache_step, backend=backend)
    eager_state, state = fresh(), fresh()
    for pos in range(3):  # distinct arrays: one capture, cache hits (pos becomes a size symbol)
        assert np.array_equal(cf(*state, pos), cache_step(*eager_state, pos))
    captures = cf.captures
    assert cf(*state, 3) is not None and cf.captures == captures  # (a hit: the block found no overlap)
    cache_step(*eager_state, 3)
    # x is now a row of cache_v (written by the step), and w a view of cache_k: each overlaps a written array
    for make in (lambda k, v, x, w: (k, v, v[5], w), lambda k, v, x, w: (k, v, x, k[4:])):
        got, want = cf(*make(*state), 4), cache_step(*make(*eager_state), 4)
        assert np.array_equal(got, want)
        for a, b in zip(state, eager_state):
            assert np.array_equal(a, b)
    assert any("may share memory with" in m for m in cf.recompile_log), cf.recompile_log


def facts(*relations) -> list:
    return [ShapeGuard(r, None) for r in relations]


B, T, n0, n1 = symbol("B"), symbol("T"), symbol("n0"), symbol("n1")
CASES = [
    (("B", "T"), facts(relation(">=", B, 2), relation("<=", B + T, 64), relation("==", T % 2, 0),
                       relation("!=", B * T - 12, 0), relation(">=", T // 3 - B, -5), relation("<=", B * B, 50))),
    # user names that look like the generated ones, in the other order: renamed at once, not one after the other
    (("n1", "n0"), facts(relation(">=", n1 - 2 * n0, 0), relation("==", n0 // 2, n1 % 4))),
]


@pytest.mark.parametrize("names, guards", CASES)
def test_the_generated_size_check_is_each_facts_check(names, guards):
    check = sizes_check((names, guards))
    assert "B" not in check.source_text and "T" not in check.source_text  # (renamed: no user name in the source)
    for sizes in itertools.product(range(0, 40, 3), repeat=len(names)):
        named = dict(zip(names, sizes))
        assert check(*sizes) == all(g.check(named) for g in guards), named


def grows_and_appends(x, n):
    out = []
    for _ in range(n):
        out.append(int(x.sum()))  # a break at int(), then one at the append (a list made before the break)
        x = np.concatenate([x, x[-1:] + 1.0])
    return out


def test_a_builtin_called_right_after_a_break_runs_at_that_break():
    """The append right after ``int(...)`` runs at the int's break (``break_step.concrete_step``): no segment is
    captured between the two (it would compute nothing), for any length of the growing ``x``."""
    cf = graph_lab.compile(grows_and_appends)
    for n in (6, 9):
        assert cf(np.arange(3.0), n) == grows_and_appends(np.arange(3.0), n)
    breaks = [seg.break_reason for segs in cf.cache.values() for seg in segs if seg.end == "break"]
    assert breaks and all("the int of a tensor" in reason for reason in breaks)
