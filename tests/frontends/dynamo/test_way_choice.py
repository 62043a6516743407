"""Which way compile()'s cache hits run (``frontends/dynamo/way_choice.py``): the graphs or the original function.

The choice must never change a result: both ways are checked against eager NumPy bit for bit, call after call,
on corpus kernels that write into their arguments, break their graphs and call functions at the breaks. The
decision rule and the whole-graph cost model (``backends/graph_cost.py``) are pure functions, checked on numbers
given here; their timings are not asserted (the machine is shared), only what they decide from given timings.
"""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from benchmarks.corpus import CORPUS
from benchmarks.corpus.check import first_difference
from graph_lab.backends.graph_cost import GraphFacts, WholeCalibration, predict
from graph_lab.frontends.dynamo import way_choice
from graph_lab.frontends.dynamo.way_choice import (DECISIVE, FUNCTION, GRAPHS, GRAPHS_MARGIN, MAX_SAMPLES,
                                                   MIN_SAMPLES, RECHECK_EVERY, decide, graphs_pinned)

US = 1e-6
CAL = WholeCalibration(python_instruction=0.02 * US, guard_check=0.1 * US, numpy_call=1 * US, numpy_byte=0.001 * US,
                       numpy_scalar_op=0.05 * US, zero_d_op=1 * US, graph_break=10 * US)


# --- the decision rule


def test_no_decision_before_min_samples_of_each_way():
    assert decide([1.0] * (MIN_SAMPLES - 1), [9.0] * 10) is None
    assert decide([1.0] * 10, [9.0] * (MIN_SAMPLES - 1)) is None


def test_a_clear_difference_decides_after_min_samples():
    way, reason = decide([2.0, 2.1, 1.9], [1.0, 1.1, 0.9])
    assert way == FUNCTION and "0.50x" in reason
    assert decide([1.0, 1.1, 0.9], [2.0, 2.1, 1.9])[0] == GRAPHS


def test_close_medians_measure_on_until_max_samples_then_the_graphs_need_the_margin():
    close = 1.0 * (1 + (DECISIVE - 1) / 2)  # the graphs 7.5% faster: inside DECISIVE
    assert decide([1.0] * MIN_SAMPLES, [close] * MIN_SAMPLES) is None
    assert close < GRAPHS_MARGIN
    assert decide([1.0] * MAX_SAMPLES, [close] * MAX_SAMPLES)[0] == FUNCTION, "not by the margin: the function"
    assert decide([close] * MAX_SAMPLES, [1.0] * MAX_SAMPLES)[0] == FUNCTION
    clear = GRAPHS_MARGIN * 1.01
    assert clear < DECISIVE
    assert decide([1.0] * (MAX_SAMPLES - 1), [clear] * (MAX_SAMPLES - 1)) is None
    assert decide([1.0] * MAX_SAMPLES, [clear] * MAX_SAMPLES)[0] == GRAPHS


def test_the_median_keeps_one_slow_call_out():
    slow_once = [1.0] * (MAX_SAMPLES - 1) + [50.0]
    assert decide(slow_once, [2.0] * MAX_SAMPLES)[0] == GRAPHS


def test_overlapping_timings_do_not_decide_early_however_far_apart_the_medians():
    # medians 2x apart, but one call of the faster way took as long as the slower way's fastest
    assert decide([1.0, 1.0, 2.0], [2.0, 2.0, 2.0]) is None
    assert decide([2.0, 2.0, 2.0], [1.0, 2.5, 1.0]) is None
    assert decide([1.0, 1.0, 1.9], [2.0, 2.0, 2.0])[0] == GRAPHS, "apart: decided"


def test_each_ways_first_call_is_a_warm_up_not_a_sample():
    cf = graph_lab.compile(mutate)
    calls = 0
    while True:
        a, b = np.ones(5), np.arange(5.0)
        a2 = a.copy()
        assert cf(a, b) == mutate(a2, b)
        np.testing.assert_array_equal(a, a2, strict=True)
        calls += 1
        if calls > 2 and not cf.ways.measuring:
            break
        assert calls < 4 * MAX_SAMPLES, cf.ways.reason
    ways = cf.ways
    assert [len(ways.warm_up[w]) for w in (GRAPHS, FUNCTION)] == [way_choice.WARM_UP] * 2
    assert min(len(ways.samples[w]) for w in (GRAPHS, FUNCTION)) >= MIN_SAMPLES
    assert f"measured {len(ways.samples[GRAPHS])} + {len(ways.samples[FUNCTION])} calls" in ways.reason
    measured = sum(len(ways.samples[w]) + len(ways.warm_up[w]) for w in (GRAPHS, FUNCTION))
    assert measured <= calls - 2, "the capture and the call that made the fast path are no samples"


# --- the whole-graph cost model


def test_write_back_copies_and_breaks_count_against_the_graphs():
    # 10 array nodes of 8 kB; 2 copies of 80 kB back into the caller's arrays; 1 break; 100 instructions
    facts = GraphFacts(array_nodes=10, array_bytes=80_000, scalar_nodes=0, instructions=100, guards=20,
                       writebacks=2, written_bytes=160_000, breaks=1)
    p = predict(facts, CAL)
    shared = 10 * 1 * US + 3 * 80_000 * 0.001 * US + 20 * 0.1 * US
    assert p.eager_seconds == pytest.approx(shared + 100 * 0.02 * US)
    assert p.graphs_seconds == pytest.approx(shared + 2 * 1 * US + 2 * 160_000 * 0.001 * US + 10 * US)
    assert p.speedup < 1
    assert "write-back" in p.reason and "graph breaks" in p.reason


def test_kernel_savings_count_for_the_graphs():
    facts = GraphFacts(array_nodes=40, array_bytes=4_000_000, scalar_nodes=0, instructions=500, guards=4,
                       kernel_savings=10_000 * US)
    p = predict(facts, CAL)
    shared = 40 * 1 * US + 3 * 4_000_000 * 0.001 * US + 4 * 0.1 * US
    assert p.graphs_seconds == pytest.approx(shared - 10_000 * US)
    assert p.speedup > 2 and "C kernels' predicted saving" in p.reason


def test_scalar_results_cost_a_ufunc_call_in_the_graph_and_a_scalar_op_eagerly():
    facts = GraphFacts(array_nodes=0, array_bytes=0, scalar_nodes=1000, instructions=5000, guards=2)
    p = predict(facts, CAL)
    assert p.eager_seconds == pytest.approx(2 * 0.1 * US + 1000 * 0.05 * US + 5000 * 0.02 * US)
    assert p.graphs_seconds == pytest.approx(2 * 0.1 * US + 1000 * 1 * US)


# --- compile(): every way gives eager's results


def with_breaks(x, log):
    """Graph breaks on every iteration (an append to the caller's list), writes into the argument."""
    total = 0.0
    for i in range(12):
        log.append(i)
        x[i % x.shape[0]] += 1.0
        total += float(x.sum())
    return x * total


def test_a_function_whose_breaks_do_not_pay_runs_as_itself_with_eagers_results():
    cf = graph_lab.compile(with_breaks)
    captured = None
    for call in range(4 * MAX_SAMPLES):
        if call == 2:
            captured = (cf.captures, cf.recompiles)
        x, log = np.arange(4.0), []
        x2, log2 = x.copy(), []
        got = cf(x, log)
        want = with_breaks(x2, log2)
        np.testing.assert_array_equal(got, want, strict=True)
        np.testing.assert_array_equal(x, x2, strict=True)
        assert log == log2, f"call {call}: the side effect"
    assert cf.ways.way == FUNCTION, cf.ways.reason
    assert (cf.captures, cf.recompiles) == captured, "a hit run as the function captures nothing"
    assert cf.ways.unchecked > 0 and cf.last_events == [], "the last call ran the function without the guards"
    text = str(graph_lab.explain(cf)(np.arange(4.0), []))
    assert "this compiled function's cache hits run the original function" in text
    assert "measured" in text and "graph breaks" in text


def mutate(a, b):
    a += b
    a *= 2.0
    return a.sum()


def test_the_function_way_keeps_guards_and_recompiles():
    cf = graph_lab.compile(mutate)
    a, b = np.ones(5), np.arange(5.0)
    cf(a, b)
    cf.ways.pin(FUNCTION, "the test")
    for n in (5, 5, 7, 7):
        a, b = np.ones(n), np.arange(float(n))
        a2 = a.copy()
        got, want = cf(a, b), mutate(a2, b)
        assert type(got) is type(want) and got == want
        np.testing.assert_array_equal(a, a2, strict=True)
    assert cf.captures == 2 and cf.recompiles == 1, "a new shape still captures, with the function way chosen"
    assert cf.last_events and not cf.last_events[0].captured


def test_a_backend_asked_for_by_name_always_runs_graphs():
    cf = graph_lab.compile(mutate, backend="codegen")
    for _ in range(4 * MAX_SAMPLES):
        cf(np.ones(5), np.ones(5))
    assert cf.ways.way == GRAPHS and not cf.ways.measuring
    assert "backend='codegen' was asked for by name" in cf.ways.describe()


def test_graphs_pinned_runs_the_graphs_then_gives_the_choice_back():
    cf = graph_lab.compile(mutate)
    cf(np.ones(5), np.ones(5))
    cf.ways.pin(FUNCTION, "the test")
    chosen = cf.ways
    with graphs_pinned(cf, "checking the graphs"):
        cf(np.ones(5), np.ones(5))
        assert cf.ways.way == GRAPHS and not cf.ways.eager
        assert cf._fast is not None and "K" in cf.fast_path_source
    assert cf.ways is chosen and cf.ways.eager


def test_explain_says_which_way_and_why():
    text = str(graph_lab.explain(mutate)(np.ones(5), np.ones(5)))
    assert "cache hits: measuring both ways (predicted" in text


SAMPLE = ["jacobi_1d", "seidel_rows", "game_of_life", "lu_rows", "gemver", "sgd_momentum", "adam_step",
          "kv_cache_decode", "batchnorm_train", "tanh_trace", "xorshift_uniform", "quantize", "covariance_rows",
          "crc32", "llama_decode"]
"""Corpus kernels that write into their arguments (arrays, lists and dicts of arrays, objects), break their graphs,
call functions at the breaks, loop over scalars."""


@pytest.mark.parametrize("way", [GRAPHS, FUNCTION, "chosen"])
@pytest.mark.parametrize("name", SAMPLE)
def test_no_way_changes_a_corpus_kernels_results(name, way):
    kernel = next(k for k in CORPUS if k.name == name)
    cf = graph_lab.compile(kernel.fn)
    calls = 3 * MAX_SAMPLES if way == "chosen" else 3
    problem, _ = first_difference(kernel, cf, small=True, seeds=(0,))  # the capture
    assert not problem, problem
    if way != "chosen":
        for f in [cf] + list(cf.nested.values()):
            f.ways.pin(way, "the test")
    problem, _ = first_difference(kernel, cf, small=True, seeds=range(1, calls))
    assert not problem, f"{way}: {problem}"


def test_the_function_way_runs_on_aliased_arguments_as_eager_does():
    # the graph was captured for two distinct arrays; with the function way the same array twice runs the
    # function (the guards on aliasing are the graph's alone), with eager's result and eager's writes
    cf = graph_lab.compile(mutate)
    cf(np.ones(5), np.arange(5.0))
    cf(np.ones(5), np.arange(5.0))
    cf.ways.pin(FUNCTION, "the test")
    x = np.arange(5.0)
    x2 = x.copy()
    got, want = cf(x, x), mutate(x2, x2)
    assert got == want
    np.testing.assert_array_equal(x, x2, strict=True)
