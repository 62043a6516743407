"""graph_lab.equivalence: the tolerance table, comparing results, check(), counterexample(), blaming one graph
of several, and structural equivalence (canonical form, hash, isomorphism)."""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from graph_lab import F, trace
from graph_lab.equivalence import (TOLERANCES, ArraySpec, canonical_form, check, compare, counterexample,
                                   isomorphic, structural_hash, tolerance_for)

# --- the one table


def test_the_tolerance_table_is_the_reviewed_one():
    assert (TOLERANCES[np.dtype(np.float64)].rtol, TOLERANCES[np.dtype(np.float64)].atol) == (1e-7, 1e-7)
    assert (TOLERANCES[np.dtype(np.float32)].rtol, TOLERANCES[np.dtype(np.float32)].atol) == (1.3e-6, 1e-5)
    for exact in (np.int32, np.int64, np.uint8, np.bool_):
        assert (tolerance_for(exact).rtol, tolerance_for(exact).atol) == (0.0, 0.0)
    assert tolerance_for(np.complex64) == tolerance_for(np.float32)


# --- compare


@pytest.mark.parametrize("want, got, kind", [
    ((np.ones(2), np.ones(2)), [np.ones(2), np.ones(2)], "structure"),
    ({"a": np.ones(2)}, {"b": np.ones(2)}, "structure"),
    (np.ones(2), np.ones(3), "shape"),
    (np.ones(2), np.ones(2, np.float32), "dtype"),
    (np.array([1.0, np.nan]), np.array([1.0, 2.0]), "nan"),
    (np.array([np.inf]), np.array([-np.inf]), "inf"),
    (np.array([1, 2]), np.array([1, 3]), "value"),
    (np.array([1.0]), np.array([1.0 + 1e-3]), "value"),
    ("text", "other", "type"),
])
def test_compare_says_what_differs(want, got, kind):
    assert compare(want, got).kind == kind


def test_numbers_and_0d_arrays_compare_alike():
    assert compare(2.0, np.array(2.0)) is None
    assert compare(np.float32(0.5), np.array(0.5, np.float32)) is None
    assert compare(np.float64(0.5), np.array(0.5, np.float32)).kind == "dtype"


def test_tolerances_and_exactness():
    x = np.float64(1.0)
    assert compare(x, x + 5e-8) is None                   # within rtol = atol = 1e-7
    assert compare(x, x + 5e-8, exact=True).kind == "bits"
    assert compare(np.float32(1.0), np.float32(1.0) + np.float32(1e-6)) is None
    assert compare(np.array(-0.0), np.array(0.0)) is None  # equal values
    assert compare(np.array(-0.0), np.array(0.0), exact=True).kind == "bits"  # but not the same bits


def test_reordered_float32_sums_are_judged_against_float64():
    x = np.random.default_rng(0).standard_normal(100_000).astype(np.float32) * 100
    eager = np.cumsum(x)[-1]        # left to right, one addition after another
    reordered = np.sum(x)           # pairwise, as a fused kernel might add
    ref64 = np.sum(x.astype(np.float64))
    assert compare(eager, reordered) is not None, "the sample should not pass the plain table"
    assert compare(eager, reordered, ref64=ref64) is None
    wrong = np.float32(eager * 1.001)
    mismatch = compare(eager, wrong, ref64=ref64)
    assert mismatch is not None and "against float64" in mismatch.detail


def test_the_worst_element_is_reported():
    want = np.zeros((2, 3))
    got = want.copy()
    got[1, 2] = 0.5
    got[0, 0] = 1e-3
    mismatch = compare(want, got)
    assert "(1, 2)" in mismatch.detail and "0.5" in mismatch.detail


# --- check and counterexample


def branchy(x):
    s = x.sum(axis=-1).sum(axis=-1)
    if s > 0:
        return x * 2.0
    return x * -1.0


def test_counterexample_finds_a_negative_sum_for_a_positive_specialized_trace():
    pos = np.abs(np.random.default_rng(2).standard_normal((3, 4)))
    g = trace(branchy, {"x": (3, 4)}, mode="specialize", example={"x": pos})
    found = counterexample(branchy, g)
    assert found is not None
    assert found.inputs["x"].sum() <= 0
    assert found.mismatch.kind == "value"
    assert "graph 1 of 1" in str(found)


def test_a_guarded_trace_has_no_counterexample_its_guards_allow():
    pos = np.abs(np.random.default_rng(2).standard_normal((3, 4)))
    g = trace(branchy, {"x": (3, 4)}, mode="guard", example={"x": pos})
    assert counterexample(branchy, g) is None
    report = check(branchy, g, n=60)
    assert report and report.rejected > 0 and report.trials > 0


def test_check_varies_named_dimensions_including_empty_and_size_one():
    seen = []

    def model(x, w):
        seen.append(x.shape)
        return np.tanh(x @ w).sum(axis=-1)

    report = check(model, graph_lab.compile(model, recompile_limit=100), {"x": ("B", 4), "w": (4, 3)}, n=12)
    assert report, report
    assert (0, 4) in seen and (1, 4) in seen


def test_check_reports_printing_lost_by_trace_and_kept_by_compile():
    log = []

    def noisy(x):
        log.append(float(x.sum()))
        print("sum", round(float(x.sum()), 3))
        return x * 2.0

    traced = trace(noisy, {"x": (3,)}, mode="guard", example={"x": np.ones(3)})
    lost = check(noisy, traced, n=5)
    assert not lost and lost.difference.mismatch.kind == "printed"
    kept = check(noisy, graph_lab.compile(noisy), {"x": (3,)}, n=5)
    assert kept, kept


def test_check_compares_appends_and_attribute_writes():
    class Counter:
        calls = 0

    counter = Counter()

    def counted(x):
        counter.calls = counter.calls + 1
        return x + 1.0

    def forgets(x):  # a "capture" that lost the attribute write
        return x + 1.0

    report = check(counted, forgets, {"x": (2,)}, n=3)
    assert report.difference.mismatch.kind == "state" and "counter" in report.difference.mismatch.path
    assert check(counted, graph_lab.compile(counted), {"x": (2,)}, n=5)
    assert counter.calls == 5  # each trial ran both sides from the same state, and it moved on with them


def test_check_sees_writes_into_an_argument():
    def writes(x):
        x[0] = 7.0
        return x.sum()

    def copies(x):
        x = x.copy()
        x[0] = 7.0
        return x.sum()

    report = check(writes, copies, {"x": (3,)}, n=3)
    assert report.difference.mismatch.kind == "state" and "argument x" in report.difference.mismatch.path
    assert check(writes, graph_lab.compile(writes), {"x": (3,)}, n=3)


def test_check_with_domains_and_params():
    def logs(x, p):
        return np.log(x) * p["scale"]

    p = {"scale": np.float64(2.0)}
    spec = {"x": ArraySpec((3,), np.float32, low=0.1)}
    assert check(logs, graph_lab.compile(logs), spec, n=10, params=p)
    g = trace(logs, {"x": ((3,), "float32")}, p)
    assert check(logs, g, spec, n=10, params=p)


def two_graphs(x, w):
    h = np.tanh(x @ w)
    if h.sum() > 0:
        return h * 3.0
    return h - 1.0


def test_a_wrong_graph_among_several_is_blamed():
    cf = graph_lab.compile(two_graphs)
    x, w = np.ones((2, 3)), np.full((3, 3), 0.5)
    cf(x, w)
    first = cf.cache[min(cf.cache)][0]
    good = first.runner
    first.runner = lambda inputs: [o * 1.5 for o in good(inputs)]  # the first graph computes h wrongly
    report = check(two_graphs, cf, {"x": (2, 3), "w": (3, 3)}, n=4, seed=1)
    assert not report
    assert report.difference.blamed.startswith("segment 1 of 2")
    assert "local h" in report.difference.blamed
    assert len(report.difference.graphs) == 2


def test_report_counts_errors_when_equivalent():
    def f(x):
        return np.sqrt(np.abs(x)) + F.relu(x)

    report = check(f, graph_lab.compile(f), {"x": ((4,), "float32")}, n=15, exact=True)
    assert report and report.trials == 15 and report.max_abs_error == 0.0
    assert str(report).startswith("equivalent on 15 trial(s)")


def test_eager_errors_skip_the_trial():
    def picky(x):
        if x.shape[0] == 0:
            raise ValueError("empty")
        return x * 2

    report = check(picky, graph_lab.compile(picky), {"x": ("B",)}, n=8)
    assert report and report.skipped == 1


# --- structure


def a(x, y):
    return np.tanh(x) + np.exp(y)


def b(x, y):
    e = np.exp(y)  # recorded first: another order of independent nodes
    return np.tanh(x) + e


def test_isomorphic_ignores_node_order_and_names():
    ga, gb = trace(a, {"x": (3,), "y": (3,)}), trace(b, {"x": (3,), "y": (3,)})
    assert [n.op for n in ga.nodes] != [n.op for n in gb.nodes]
    assert isomorphic(ga, gb) and structural_hash(ga) == structural_hash(gb)
    renamed = trace(lambda p, q: np.tanh(p) + np.exp(q), {"p": (3,), "q": (3,)})
    assert isomorphic(ga, renamed)


@pytest.mark.parametrize("other", [
    lambda x, y: np.exp(y) + np.tanh(x),         # operand order is part of an edge
    lambda x, y: np.tanh(x) - np.exp(y),         # another op
    lambda x, y: np.tanh(x) + np.exp(x),         # another edge
    lambda x, y: np.tanh(x) + np.exp(y) * 1.0,   # one more node
])
def test_not_isomorphic(other):
    ga, go = trace(a, {"x": (3,), "y": (3,)}), trace(other, {"x": (3,), "y": (3,)})
    assert not isomorphic(ga, go) and structural_hash(ga) != structural_hash(go)


def test_shared_and_duplicated_subexpressions_differ():
    def shared(x):
        t = np.tanh(x)
        return t + t

    def twice(x):
        return np.tanh(x) + np.tanh(x)

    assert not isomorphic(trace(shared, {"x": (2,)}), trace(twice, {"x": (2,)}))


def test_constants_compare_by_their_bits():
    g0 = trace(lambda x: x + 0.0, {"x": (2,)})
    g1 = trace(lambda x: x + (-0.0), {"x": (2,)})
    assert not isomorphic(g0, g1)
    assert "0x0.0p+0" in canonical_form(g0)
