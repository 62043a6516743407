"""compile()'s guards on long lists stay small: a ``for`` loop over N items keeps one "there are at least N items"
guard (not one per item), and like guards on consecutive items are checked by one loop in the generated guard
function and fast path. Compacted, they must still miss whenever an item or the length changes, report the first
guard that fails (as checking them one by one in order would), and the compiled function must agree with eager
NumPy before and after each recompile."""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from graph_lab.frontends.dynamo.guard_set import MIN_RUN, item_runs, same_value
from graph_lab.frontends.dynamo.sources import FrameInputs


def chain(x, ws):
    for w in ws:
        x = x + np.tanh(x @ w)
    return x


def scaled_sum(x, scales):
    for s in scales:
        x = x * s + 1.0
    return x


def twice(x, ws):
    for w in ws:
        x = x @ w
    for w in ws:
        x = x - w.sum()
    return x


def stacked(x, ws):
    return x @ np.stack(ws).sum(axis=0)


def weights(n: int, seed: int = 0, shape=(8, 8), dtype=np.float64) -> list:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(shape) / 3).astype(dtype) for _ in range(n)]


def first_failing_guard(seg, inputs: FrameInputs) -> int:
    """The index of the first guard that fails, checking them one by one in order (the reference the generated
    guard function must agree with); -1 if all hold."""
    for n, g in enumerate(seg.guards.guards):
        try:
            value = g.source.fetch(inputs)
            other = g.expected.fetch(inputs) if g.kind in ("alias", "distinct") else None
        except Exception:
            return n
        if g.kind == "type":
            holds = type(value) is g.expected
        elif g.kind == "id":
            holds = value is g.expected
        elif g.kind == "equals":
            holds = type(value) is type(g.expected) and same_value(value, g.expected)
        elif g.kind == "array":
            holds = type(value) is np.ndarray and value.shape == g.expected[0] and value.dtype == g.expected[1]
        elif g.kind == "len":
            holds = len(value) == g.expected
        elif g.kind == "alias":
            holds = value is other
        elif g.kind == "distinct":
            holds = value is not other
        else:
            raise AssertionError(f"no reference check for a {g.kind} guard")
        if not holds:
            return n
    return -1


def frame_inputs(fn, **arguments) -> FrameInputs:
    return FrameInputs(arguments, [], fn.__globals__, ())


def run_both(cf, fn, *args):
    """Call the compiled and the eager function; they must agree bit for bit."""
    np.testing.assert_array_equal(cf(*args), fn(*args), strict=True)


def test_a_loop_over_n_items_keeps_one_length_guard_and_its_generated_code_does_not_grow():
    sources = {}
    for n in (8, 64):
        cf = graph_lab.compile(chain, backend="codegen")
        x, ws = np.ones((4, 8)), weights(n)
        run_both(cf, chain, x, ws)
        [seg] = cf.cache[cf._first]
        length_guards = [g.describe() for g in seg.guards.guards if g.source.describe().startswith("len(ws) >")]
        assert [text.split("  (from")[0] for text in length_guards] == [f"len(ws) > {n - 1} == True",
                                                                        f"len(ws) > {n} == False"]
        assert cf.fast_path_source.startswith("def make(")
        report = graph_lab.explain(chain)(x, ws)
        assert len(report.guards) == len(seg.guards.guards)
        sources[n] = (cf.fast_path_source.count("\n"), seg.guards.compile().source_text.count("\n"),
                      len(seg.guards.guards) - n)  # one guard per item (its array guard) and a few others
    assert sources[8] == sources[64]  # a run of like guards is one loop, whatever its length


def test_a_list_that_changes_length_recompiles_and_agrees_with_eager():
    cf = graph_lab.compile(chain, backend="codegen")
    x = np.random.default_rng(1).standard_normal((4, 8))
    ws = weights(12)
    run_both(cf, chain, x, ws)
    for n in (11, 13, 0, 1, 12, 5):
        run_both(cf, chain, x, weights(n, seed=n))
        run_both(cf, chain, x, weights(n, seed=n + 100))  # the second call of a length: a cache hit
    assert cf.captures == 6  # one graph per length seen (12 was seen first and again)
    assert any("len(ws) > 11 is False, the cached graph was built for True" in m for m in cf.recompile_log)
    assert any("len(ws) > 12 is True, the cached graph was built for False" in m for m in cf.recompile_log)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
@pytest.mark.parametrize("change, words", [
    (lambda w: np.ones((8, 9)), "ws[17].shape[1] is 9"),
    (lambda w: w.astype(np.float32), "ws[17].dtype is float32"),
    (lambda w: w.T.copy().reshape(8, 8, 1), "ws[17].shape is (8, 8, 1)"),
    (lambda w: w.tolist(), "ws[17] is a list, the cached graph was built for an ndarray"),
    (lambda w: np.matrix(w), "ws[17] is a matrix"),
])
def test_an_item_that_changes_in_the_middle_of_a_long_list_misses_and_is_named(change, words):
    cf = graph_lab.compile(chain, backend="codegen")
    x = np.random.default_rng(2).standard_normal((4, 8))
    ws = weights(40)
    run_both(cf, chain, x, ws)
    changed = list(ws)
    changed[17] = change(ws[17])
    [seg] = cf.cache[cf._first]
    inputs = frame_inputs(chain, x=x, ws=changed)
    assert seg.check(inputs) == first_failing_guard(seg, inputs) >= 0
    try:
        expected = chain(x, changed)
    except Exception as e:  # eager NumPy refuses it: so must the compiled function, with the same error type
        with pytest.raises(type(e)):
            cf(x, changed)
    else:
        np.testing.assert_array_equal(cf(x, changed), expected, strict=True)
    assert cf.captures == 2 and words in cf.recompile_log[-1], cf.recompile_log
    run_both(cf, chain, x, ws)  # the first graph still serves the first list
    assert cf.captures == 2


def test_generated_guard_function_reports_the_guard_checking_one_by_one_would():
    x = np.ones((4, 8))
    ws = weights(20)
    cf = graph_lab.compile(chain, backend="codegen")
    cf(x, ws)
    [seg] = cf.cache[cf._first]
    assert item_runs(seg.guards.guards)  # the case under test: some guards are checked in a loop
    variants = [ws, ws[:19], ws + ws[:1], [], ws[:3], (tuple(ws)), x]
    for i in (0, 1, 5, 19):
        for replacement in (np.ones((8, 7)), ws[i].astype(np.float32), 1.0, None):
            changed = list(ws)
            changed[i] = replacement
            variants.append(changed)
    for variant in variants:
        inputs = frame_inputs(chain, x=x, ws=variant)
        assert seg.check(inputs) == first_failing_guard(seg, inputs)
    assert seg.check(frame_inputs(chain, x=x, ws=weights(20, seed=5))) == -1


def test_a_run_of_scalar_items_guards_their_types():
    cf = graph_lab.compile(scaled_sum, backend="codegen")
    x = np.arange(4.0)
    scales = [1.0 + i / 10 for i in range(10)]
    run_both(cf, scaled_sum, x, scales)
    [seg] = cf.cache[cf._first]
    assert any(end - start >= MIN_RUN for start, end in item_runs(seg.guards.guards).items())
    run_both(cf, scaled_sum, x, [s * 2 for s in scales])  # new values of the same types: graph inputs, a hit
    assert cf.captures == 1
    ints = list(scales)
    ints[6] = 3  # an int in the middle: the type guard on scales[6] misses
    run_both(cf, scaled_sum, x, ints)
    assert cf.captures == 2 and "scales[6] is an int" in cf.recompile_log[-1]
    run_both(cf, scaled_sum, x, tuple(scales))  # a tuple: the type guard on scales misses
    assert cf.captures == 3


def test_two_loops_over_one_list_and_a_tuple_agree_with_eager():
    cf = graph_lab.compile(twice, backend="codegen")
    x = np.random.default_rng(3).standard_normal((4, 8))
    for ws in (weights(9), weights(9, seed=1), tuple(weights(9, seed=2)), weights(4), weights(10)):
        run_both(cf, twice, x, ws)
    assert cf.captures == 4


def test_the_same_array_twice_in_a_long_list_is_guarded():
    cf = graph_lab.compile(chain, backend="codegen")
    x = np.random.default_rng(4).standard_normal((4, 8))
    ws = weights(12)
    ws[7] = ws[2]  # one array at two places: the graph reads it once
    run_both(cf, chain, x, ws)
    distinct = list(ws)
    distinct[7] = ws[2].copy() * 2  # now two arrays: must not reuse the input read once
    run_both(cf, chain, x, distinct)
    assert cf.captures == 2
    run_both(cf, chain, x, ws)
    assert cf.captures == 2


def test_a_list_passed_to_numpy_is_lifted_item_by_item_and_guarded():
    cf = graph_lab.compile(stacked, backend="codegen")
    x = np.random.default_rng(5).standard_normal((4, 8))
    ws = weights(16)
    run_both(cf, stacked, x, ws)
    run_both(cf, stacked, x, weights(16, seed=7))
    assert cf.captures == 1
    changed = list(ws)
    changed[9] = ws[9].astype(np.float32)
    run_both(cf, stacked, x, changed)
    assert cf.captures == 2 and "ws[9].dtype is float32" in cf.recompile_log[-1]
    run_both(cf, stacked, x, weights(15))
    assert cf.captures == 3


def test_the_fused_backend_agrees_with_eager_on_a_long_chain():
    cf = graph_lab.compile(chain)  # backend="auto"
    x = np.random.default_rng(6).standard_normal((4, 8))
    for ws in (weights(32), weights(32, seed=1), weights(33)):
        first = cf(x, ws)
        np.testing.assert_array_equal(cf(x, ws), first, strict=True)  # the fast path runs the same graph
        np.testing.assert_allclose(first, chain(x, ws), rtol=1e-12, atol=1e-12)
    assert cf.captures == 2


def test_a_list_of_mixed_items_at_capture_guards_each_item_as_it_was():
    x = np.random.default_rng(7).standard_normal((4, 8))
    mixed = weights(12)
    mixed[5] = mixed[5].astype(np.float32)  # one float32 weight among float64 ones (x @ w is still float64)
    mixed[9] = np.ones((8, 8))
    cf = graph_lab.compile(chain, backend="codegen")
    run_both(cf, chain, x, mixed)
    [seg] = cf.cache[cf._first]
    uniform = weights(12)
    for variant in (mixed, uniform, mixed[:6] + uniform[6:], uniform[:6] + mixed[6:]):
        inputs = frame_inputs(chain, x=x, ws=variant)
        assert seg.check(inputs) == first_failing_guard(seg, inputs)
    run_both(cf, chain, x, uniform)  # ws[5] is float64 now: it misses, and a new graph is captured
    assert cf.captures == 2 and "ws[5].dtype is float64, the cached graph was built for float32" in \
        cf.recompile_log[-1]
    run_both(cf, chain, x, mixed)
    run_both(cf, chain, x, uniform)
    assert cf.captures == 2
    scales = [1.5, 2.0, 0.5, 1.25, 3, 0.75, 1.0, 2.5]  # an int among floats: each item's type is guarded
    sums = graph_lab.compile(scaled_sum, backend="codegen")
    run_both(sums, scaled_sum, np.arange(4.0), scales)
    floats = [float(s) for s in scales]
    run_both(sums, scaled_sum, np.arange(4.0), floats)
    assert sums.captures == 2 and "scales[4] is a float, the cached graph was built for an int" in \
        sums.recompile_log[-1]


def test_item_runs_finds_only_like_guards_on_consecutive_items_of_a_checked_sequence():
    from graph_lab.frontends.dynamo.guard_set import Guard
    from graph_lab.frontends.dynamo.sources import ItemSource, LocalSource

    ws, other = LocalSource("ws"), LocalSource("other")
    f64 = ((8, 8), np.dtype(np.float64))

    def arrays(base, keys, expected=f64):
        return [Guard("array", ItemSource(base, k), expected) for k in keys]

    typed = [Guard("type", ws, list)]
    assert item_runs(typed + arrays(ws, range(MIN_RUN))) == {1: 1 + MIN_RUN}
    assert item_runs(typed + arrays(ws, range(MIN_RUN - 1))) == {}  # too short to be worth a loop
    assert item_runs(arrays(ws, range(8)) + typed) == {}  # the list's type is checked after its items
    assert item_runs(arrays(other, range(8)) + typed) == {}  # no guard says `other` is a list
    assert item_runs(typed + arrays(ws, [0, 1, 2, 4, 5, 6, 7])) == {4: 8}  # item 3 missing: items 4.. only
    f32 = ((8, 8), np.dtype(np.float32))
    mixed = arrays(ws, range(5)) + arrays(ws, [5], f32) + arrays(ws, range(6, 10))
    assert item_runs(typed + mixed) == {1: 6, 7: 11}  # item 5 is checked on its own
    scalars = [Guard("type", ItemSource(ws, k), float) for k in range(6)]
    assert item_runs([Guard("type", ws, tuple)] + scalars + arrays(ws, range(6, 12))) == {1: 7, 7: 13}


def test_random_lists_agree_with_eager_and_every_entry_checks_as_guards_one_by_one_would():
    rng = np.random.default_rng(2026)
    x = rng.standard_normal((4, 8))

    def item():
        kind = rng.integers(6)
        if kind == 0:
            return rng.standard_normal((8, 8)).astype(np.float32)
        if kind == 1:
            return float(rng.standard_normal())
        return rng.standard_normal((8, 8))

    for fn in (chain, twice, stacked):
        cf = graph_lab.compile(fn, backend="codegen", recompile_limit=1000)
        base = [rng.standard_normal((8, 8)) for _ in range(12)]
        for _ in range(40):
            ws = list(base[:rng.integers(0, 14)])
            for _ in range(rng.integers(0, 3)):  # a few items changed, or one array at two places
                if ws:
                    i = rng.integers(len(ws))
                    ws[i] = item() if rng.integers(3) else ws[rng.integers(len(ws))]
            ws = tuple(ws) if rng.integers(4) == 0 else ws
            try:
                expected = fn(x, ws)
            except Exception as e:
                with pytest.raises(type(e)):
                    cf(x, ws)
            else:
                np.testing.assert_array_equal(cf(x, ws), expected, strict=True)
            inputs = frame_inputs(fn, x=x, ws=ws)
            for seg in cf.cache.get(cf._first, []):
                assert seg.check(inputs) == first_failing_guard(seg, inputs)
        assert cf.captures > 3  # the lists really differed


def count_after_a_break(x, ws):
    for w in ws:  # takes one item, and stops
        break
    n = 0
    for w in ws:  # takes them all, reading none: only the length guards say how many there were
        n += 1
    return x * n


def pairs(x, ws):
    total = x
    for a in ws:
        for b in ws:
            total = total + 1.0
    return total


def first_items(x, ws):
    if len(ws) > 2:  # the user's own length test, besides the loop's
        x = x + ws[0]
    for w in ws:
        x = x * w
    return x


@pytest.mark.parametrize("fn", [count_after_a_break, pairs, first_items])
def test_loops_that_share_a_list_keep_the_strongest_length_guard(fn):
    cf = graph_lab.compile(fn, backend="codegen")
    x = np.arange(3.0)
    for n in (5, 2, 5, 7, 0, 3, 2, 7, 1):
        ws = [float(i + 1) for i in range(n)]
        run_both(cf, fn, x, ws)
    [seg, *_] = cf.cache[cf._first]
    bounds = [g.describe().split("  (from")[0] for g in seg.guards.guards
              if g.source.describe().startswith("len(ws) >")]
    assert bounds == ["len(ws) > 4 == True", "len(ws) > 5 == False"]  # captured for 5 items
    assert cf.captures == 6  # one graph per length seen: 5, 2, 7, 0, 3, 1
