"""LazyRunner's set-up cut per capture, compared with what it replaced:

* ``_known`` is a plain dict keyed by weak references to the values (a ``WeakKeyDictionary`` before): an entry
  goes when its value dies, the runner itself is freed as soon as it is unreferenced (its keys' callback reaches
  it only through a weak reference), and lookups find values by identity.
* ``_move`` makes the copy of a kept node reading the inputs and copies already made; a copy that reads a node
  copied after it is rewired as before.

Results are compared with the general path (``GeneralLazy``, which copies the graph and runs it with the
interpreter) and with eager NumPy."""

import gc
import weakref

import numpy as np

from graph_lab import LazyRunner
from tests.frontends.lazy.test_lazy_fast_path import GeneralLazy

rng = np.random.default_rng(11)


def test_known_entries_go_with_their_values_and_the_runner_with_its_last_reference():
    lr = LazyRunner()
    xs = [lr.tensor(rng.standard_normal(3)) for _ in range(4)]
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
    x, w = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
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
