"""LazyRunner's speed-up (``frontends/lazy_run_in_slice.py``: the slice's own nodes run, and the graph made of them
rather than of copies) against its reference path (the graph copied, then run by ``_execute``), which a subclass
overriding ``_execute`` takes: on seeded random programs of the fuzzer's generator and on programs written for
the traps (live intermediates, values read later, several outputs, in-place writes and views, control flow,
scalars taken out): the same graphs, the same results bit for bit, the same cache counts, and a record that goes
on working afterwards. Then what the runner must keep either way: only what eager code keeps alive, a failing
op's error from the interpreter, ``_known`` entries that go with their values, counters per runner."""

import gc
import weakref

import numpy as np
import pytest

from tests.support.shortcut_support import random_programs

from graph_lab import F, GraphExecutionError, LazyRunner
from graph_lab.backends.reference import execute
from graph_lab.frontends import pytree
from graph_lab.frontends.tensor import Tensor


class GeneralLazy(LazyRunner):
    """The same runner, on the general path (an overridden ``_execute`` is never bypassed)."""

    def _execute(self, graph, inputs):
        env = execute(graph, inputs)
        return [env[out] for out in graph.outputs]


def chain(lr, x, ws):
    t = lr.tensor(x)
    for w in ws:
        t = t + np.tanh(t @ w)
    return [lr.materialize(t)]


def live_intermediate(lr, x, ws):
    a = lr.tensor(x)
    b = a * 2.0
    c = b + 1.0  # b stays alive: kept, and read inside the slice
    d = np.tanh(c) @ ws[0]
    out = [lr.materialize(d)]
    out.append(lr.materialize(b * 3.0))  # b is known: only the mul runs
    out.append(lr.materialize(c - b))
    return out


def read_later(lr, x, ws):
    a = lr.tensor(x)
    h = a @ ws[0]
    g = h * 2.0  # pending, reads the matmul's result
    h = h + 1.0
    out = [float(h.sum())]
    out.append(lr.materialize(g))
    out.append(lr.materialize(g + h))
    return out


def several_outputs(lr, x, ws):
    a = lr.tensor(x)
    parts = np.split(a, 2, axis=1)
    left = parts[0] * 2.0
    out = lr.materialize([left, parts[1]])
    del parts
    return list(out) + [lr.materialize(left + 1.0)]


def split_one_part_kept(lr, x, ws):
    a = lr.tensor(x)
    left, right = np.split(a + 1.0, 2, axis=1)
    total = left @ ws[0][:4, :4] + right
    out = [lr.materialize(total)]
    out.append(lr.materialize(left * right))
    return out


def loop_with_breaks(lr, x, ws):
    a = lr.tensor(x)
    w = lr.tensor(ws[0])
    out = []
    for step in range(6):
        a = np.tanh(a @ w) * 0.5 + float(step)
        if a.sum() > 0:  # a graph break per step; the same graph each time: cache hits
            a = a - 1.0
        out.append(lr.materialize(a))
    return out


def inplace_and_views(lr, x, ws):
    a = lr.tensor(x)
    v = a[1:]
    v *= 2.0
    out = [lr.materialize(a)]
    a[0] = a[0] + 1.0
    out.append(lr.materialize(a.T @ a))
    return out


def control_flow(lr, x, ws):
    a = lr.tensor(x)
    w = lr.tensor(ws[0])
    y = F.cond(a.sum() > 0, lambda h: h @ w, lambda h: h - 1.0, a)
    z = F.fori_loop(0, 3, lambda i, h: np.tanh(h) + a, y)
    # (F.cond leaves its predicate's stand-in in a reference cycle: whether it still counts as a live tensor, and
    # so an output, depends on when the collector last ran; collected here, both runners see the same)
    gc.collect()
    return [lr.materialize(z), lr.materialize(y)]


def same_value_twice(lr, x, ws):
    a = lr.tensor(x)
    b = a + 1.0
    return list(lr.materialize((b, b, a)))


def eager_scalars(lr, x, ws):
    a = lr.tensor(x)
    return [float((a * a).sum()), int((a > 0).sum()), bool(a.max() > 10), (a.mean() + 2).item()]


PROGRAMS = [chain, live_intermediate, read_later, several_outputs, split_one_part_kept, loop_with_breaks,
            inplace_and_views, control_flow, same_value_twice, eager_scalars]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_fast_path_equals_general_path(program):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 8))
    ws = [rng.standard_normal((8, 8)) / 3 for _ in range(4)]
    fast, general = LazyRunner(), GeneralLazy()
    got, expected = program(fast, x, ws), program(general, x, ws)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert type(a) is type(b)
        np.testing.assert_array_equal(a, b)
        assert np.asarray(a).dtype == np.asarray(b).dtype
    assert fast.graphs == general.graphs
    assert (fast.cache_hits, fast.cache_misses) == (general.cache_hits, general.cache_misses)
    assert [str(g) for g in fast.executed] == [str(g) for g in general.executed]
    assert [id(g) for g in fast.executed].count(id(fast.executed[-1])) == \
        [id(g) for g in general.executed].count(id(general.executed[-1]))
    for graph in fast.executed:
        graph.verify()  # the moved nodes' use lists are right


def lazily(lr, fn, arrays: dict):
    """``fn`` run on lazy tensors of ``arrays``, each tensor of the result materialized (as testing.ways does)."""
    result = fn(*[lr.tensor(x) for x in arrays.values()])
    leaves, _ = pytree.flatten(result)
    return [lr.materialize(leaf) if isinstance(leaf, Tensor) else leaf for _, leaf in leaves]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", random_programs(range(30)), ids=lambda c: c[0])
def test_random_programs_run_as_on_the_reference_path(case):
    name, fn, arrays = case
    fast, general = LazyRunner(), GeneralLazy()
    with np.errstate(all="ignore"):
        got, expected = lazily(fast, fn, arrays), lazily(general, fn, arrays)
        eager = [leaf for _, leaf in pytree.flatten(fn(*arrays.values()))[0]]
    assert len(got) == len(expected) == len(eager), name
    for a, b, e in zip(got, expected, eager):
        np.testing.assert_array_equal(a, b, strict=True)
        np.testing.assert_array_equal(a, e)
    assert fast.graphs == general.graphs and [str(g) for g in fast.executed] == [str(g) for g in general.executed]
    assert (fast.cache_hits, fast.cache_misses) == (general.cache_hits, general.cache_misses)
    for graph in fast.executed:
        graph.verify()


def test_chain_equals_eager_numpy():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    ws = [(rng.standard_normal((8, 8)) / 3).astype(np.float32) for _ in range(16)]
    lr = LazyRunner()
    (got,) = chain(lr, x, ws)
    eager = x
    for w in ws:
        eager = eager + np.tanh(eager @ w)
    np.testing.assert_array_equal(got, eager)
    assert got.dtype == eager.dtype
    assert lr.graphs == [48]


def test_moved_graph_runs_again_and_the_record_goes_on():
    lr = LazyRunner()
    a = lr.tensor(np.arange(6.0).reshape(2, 3))
    b = a * 2.0
    c = b + 1.0
    np.testing.assert_array_equal(lr.materialize(c), np.arange(6.0).reshape(2, 3) * 2 + 1)
    graph = lr.executed[0]
    (again,) = [execute(graph, {"in0": np.ones((2, 3)) * 5})[v] for v in graph.outputs[:1]]
    np.testing.assert_array_equal(again, np.ones((2, 3)) * 11)
    # the record's kept values are cut off from the graph's nodes, and further work records from them
    assert all(n not in graph.nodes for n in (b._value.node, c._value.node))
    assert b._value.node.inputs == () and c._value.node.inputs == ()
    np.testing.assert_array_equal(lr.materialize(c * b), (np.arange(6.0).reshape(2, 3) * 2 + 1) *
                                  (np.arange(6.0).reshape(2, 3) * 2))
    assert lr.graphs == [2, 1]


def test_a_failing_op_raises_the_interpreters_error_and_the_record_is_unchanged():
    def program(lr):
        a = lr.tensor(np.arange(3.0))
        i = lr.tensor(np.array([5]))
        b = a * 2.0
        return a, b[i] + 1.0  # index 5 out of bounds: found only when it runs

    messages = []
    for lr in (LazyRunner(), GeneralLazy()):
        a, bad = program(lr)
        with pytest.raises(GraphExecutionError) as e:
            lr.materialize(bad)
        messages.append(str(e.value))
        np.testing.assert_array_equal(lr.materialize(a * 3.0), np.arange(3.0) * 3)  # the record still works
        with pytest.raises(GraphExecutionError):
            lr.materialize(bad)
    assert messages[0] == messages[1]


def test_fast_path_keeps_only_what_eager_code_keeps():
    lr = LazyRunner()
    x = lr.tensor(np.zeros(1000))
    alive = []
    for step in range(30):
        x = x * 0.5 + float(step)
        alive.append(weakref.ref(lr.materialize(x)))
    gc.collect()
    assert sum(r() is not None for r in alive) <= 1


@pytest.mark.parametrize("runner", [LazyRunner, GeneralLazy])
def test_the_first_graph_is_found_again_once_keyed(runner):
    """The first graph a runner makes is keyed only when a later lookup needs it: from the graph itself, which
    must give the key its slice would have given."""
    rng = np.random.default_rng(11)
    x, w = rng.standard_normal((4, 8)), rng.standard_normal((8, 8))
    lr = runner()
    a = lr.tensor(x)

    def step(a):
        b = np.tanh(a @ w) + a  # the same structure each time: the weight is the same constant
        kept = b * 2.0  # a live tensor: the graph has two outputs, one made by a copied node
        return b, kept

    b, kept = step(a)
    first = lr.materialize(b)
    c = lr.materialize(np.split(b, 2, axis=1)[0] - 1.0)  # another graph (a multi-output op)
    b2, kept2 = step(lr.tensor(x))
    again = lr.materialize(b2)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(c, np.split(first, 2, axis=1)[0] - 1.0)
    np.testing.assert_array_equal(lr.materialize(kept2), lr.materialize(kept))
    assert (lr.cache_misses, lr.cache_hits) == (3, 2)
    assert lr.executed[2] is lr.executed[0] and lr.executed[4] is lr.executed[3]


# --- the runner's bookkeeping

rng11 = np.random.default_rng(11)


def test_known_entries_go_with_their_values_and_the_runner_with_its_last_reference():
    lr = LazyRunner()
    xs = [lr.tensor(rng11.standard_normal(3)) for _ in range(4)]
    assert len(lr._known) == 4
    y = xs[0] + xs[1]
    np.testing.assert_array_equal(lr.materialize(y), lr.materialize(xs[0]) + lr.materialize(xs[1]))
    assert len(lr._known) == 5
    del xs[2:], y
    gc.collect()  # (a value and its node refer to each other: they go when the collector runs)
    assert len(lr._known) == 2
    assert all(key() is not None for key in lr._known)
    runner = weakref.ref(lr)
    gc.disable()
    try:
        del lr, xs
        assert runner() is None  # freed at once: no reference cycle through its keys' callback
    finally:
        gc.enable()
    gc.collect()  # (the values die after their runner: their keys' callback finds no runner, and does nothing)


def test_a_value_computed_again_after_its_entry_went():
    lr = LazyRunner()
    a = lr.tensor(np.arange(3.0))
    for step in range(5):
        b = a * float(step)
        assert lr.materialize(b).tolist() == [0.0, float(step), 2.0 * step]
        del b
        gc.collect()
    assert len(lr._known) == 1


def kept_reads_kept(lr, x, w):
    """Outputs whose nodes read each other, asked for in an order that is not the graph's."""
    a = lr.tensor(x)
    b = a + 1.0
    c = b @ w
    d = np.tanh(c) * b
    out = list(lr.materialize([d, c, b]))
    out.append(lr.materialize(d - c + b))
    out.append(lr.materialize(b * 2.0))
    return out


def test_copies_reading_later_copies_equal_the_general_path():
    x, w = rng11.standard_normal((4, 4)), rng11.standard_normal((4, 4))
    fast, general = LazyRunner(), GeneralLazy()
    got, expected = kept_reads_kept(fast, x, w), kept_reads_kept(general, x, w)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)
    b = x + 1.0
    np.testing.assert_allclose(got[0], np.tanh(b @ w) * b)
    assert [str(g) for g in fast.executed] == [str(g) for g in general.executed]
    for graph in fast.executed:
        graph.verify()
    assert (fast.cache_hits, fast.cache_misses) == (general.cache_hits, general.cache_misses)


def test_counters_start_at_zero_in_each_runner():
    first = LazyRunner()
    t = first.tensor(np.ones(2))
    for _ in range(3):
        first.materialize(t * 2.0)
    assert (first.cache_hits, first.cache_misses) == (2, 1)
    second = LazyRunner()
    assert (second.cache_hits, second.cache_misses, second._unkeyed) == (0, 0, None)
    assert second.tensor(np.ones(1)).type == first.tensor(np.ones(1)).type
    assert [n.attrs["name"] for n in (second.tensor(np.ones(1))._value.node,)] == ["t2"]
