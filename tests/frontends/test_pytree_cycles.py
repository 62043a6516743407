"""pytree's walks must not keep leaves alive in reference cycles: a lazy tensor still alive becomes an output of
the graph the LazyRunner cuts, so a cycle made the graph depend on when the cyclic GC last ran."""

import gc
import weakref

import numpy as np

from graph_lab import F, LazyRunner
from graph_lab.frontends import pytree


class Leaf:
    pass


def _without_gc(fn):
    was = gc.isenabled()
    gc.disable()
    try:
        return fn()
    finally:
        if was:
            gc.enable()


def test_flatten_and_unflatten_free_their_leaves_without_the_gc():
    def run():
        leaf = Leaf()
        ref = weakref.ref(leaf)
        leaves, treedef = pytree.flatten({"a": [leaf, (1, {"b": leaf})]})
        rebuilt = pytree.unflatten(treedef, [v for _, v in leaves])
        assert rebuilt["a"][0] is leaf and rebuilt["a"][1][1]["b"] is leaf
        del leaf, leaves, rebuilt
        return ref() is None
    assert _without_gc(run)


def test_cond_predicate_dies_with_its_last_reference():
    def run():
        lr = LazyRunner()
        x = lr.tensor(np.arange(4, dtype=np.float32))
        p = x.sum() > 0
        ref = weakref.ref(p)
        y = F.cond(p, lambda a: a * 2, lambda a: a - 1, x)
        del p
        alive = ref() is not None
        return alive, lr.materialize(y)
    alive, y = _without_gc(run)
    assert not alive
    np.testing.assert_array_equal(y, np.arange(4, dtype=np.float32) * 2)


def test_lazy_graph_outputs_do_not_depend_on_the_gc():
    def program(collect: bool):
        lr = LazyRunner()
        x = lr.tensor(np.arange(6, dtype=np.float32))
        y = F.cond(x.sum() > 0, lambda a: a * 2, lambda a: a - 1, x)
        if collect:
            gc.collect()
        return lr, lr.materialize(y + 1)
    (lr_a, a), (lr_b, b) = _without_gc(lambda: program(False)), _without_gc(lambda: program(True))
    np.testing.assert_array_equal(a, b)
    assert lr_a.graphs == lr_b.graphs
    assert [len(g.outputs) for g in lr_a.executed] == [len(g.outputs) for g in lr_b.executed] == [2]  # y and y + 1: both alive
