"""compile() and sizes: automatic dynamic (dynamic=None), always symbolic (True), never (False).

The compile counts are the claim: a loop over 10 batch sizes compiles twice with automatic dynamic (the first
size, then once more with the batch dimension symbolic), 10 times without it. Every call must still equal eager.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import graph_lab


def small(x, w, scale):
    h = x @ w
    return np.tanh(h) * scale


def run_sizes(cf, sizes, fn=small, seed=0):
    rng = np.random.default_rng(seed)
    for n in sizes:
        x, w = rng.standard_normal((n, 4)), rng.standard_normal((4, 4))
        got, want = cf(x, w, 0.5), fn(x, w, 0.5)
        assert got.dtype == want.dtype and np.array_equal(got, want), n


@pytest.mark.parametrize("dynamic, sizes, captures", [
    (None, range(2, 12), 2), (None, range(1, 11), 2), (False, range(2, 12), 10), (True, range(2, 12), 1),
    (True, range(1, 11), 2),  # size 1 is specialized even with dynamic=True
])
def test_compile_counts_over_ten_batch_sizes(dynamic, sizes, captures):
    cf = graph_lab.compile(small, dynamic=dynamic, recompile_limit=16)
    run_sizes(cf, sizes)
    assert cf.captures == captures


def test_the_recompile_log_says_which_dimension_became_dynamic_and_why():
    cf = graph_lab.compile(small)
    run_sizes(cf, [4, 5, 6, 7])
    (message,) = cf.recompile_log
    assert "x.shape[0] is 5, the cached graph was built for 4" in message
    assert "x.shape[0] changed from 4 to 5, so it becomes dynamic: the new graph holds for any size >= 2" in message
    dynamic = cf.cache[0][-1]
    assert "f64[s0,4] = input" in str(dynamic.graph)
    assert [g.kind for g in dynamic.guards.guards if g.kind in ("dims", "sizes")] == ["dims", "sizes"]


def test_a_size_of_1_after_going_dynamic_gets_its_own_static_graph():
    cf = graph_lab.compile(small)
    run_sizes(cf, [4, 5, 1, 6, 1])
    assert cf.captures == 3
    assert "sizes 0 and 1 are specialized" in cf.recompile_log[-1] or "s0 >= 2" in cf.recompile_log[-1]
    assert [e.segment.graph.input_types()["x"].shape for e in cf.last_events] == [(1, 4)]


def seed_demo2(x):
    """The seed lecture's demo 2, with math.sqrt of a size: under compile it stays symbolic."""
    T, d = x.shape
    heads = x.reshape(T, 2, d // 2).transpose(1, 0, 2)
    return heads.transpose(1, 0, 2).reshape(T, d) * (1.0 / math.sqrt(d)), T


def test_sizes_flow_through_reshape_sqrt_and_return_values():
    cf = graph_lab.compile(seed_demo2, dynamic=True)
    rng = np.random.default_rng(1)
    for T, d in [(4, 8), (5, 8), (6, 6), (3, 10), (2, 12)]:
        x = rng.standard_normal((T, d))
        (out, t), (want, t_eager) = cf(x), seed_demo2(x)
        assert np.array_equal(out, want) and t == t_eager and type(t) is int
    assert cf.captures == 1
    text = str(cf.cache[0][0].graph)
    assert "shape=(s0, 2, s1//2)" in text and "float = size 1.0/sqrt(s1)" in text and "int = size s0" in text
    assert "guard #2: shape s1 % 2 == 0" in text


def test_a_shape_guard_failing_recompiles_with_the_reason():
    cf = graph_lab.compile(seed_demo2, dynamic=True)
    cf(np.ones((4, 8)))
    with pytest.raises(ValueError):  # d = 7 cannot be split in 2 heads: eager NumPy refuses it as well
        seed_demo2(np.ones((4, 7)))
    with pytest.raises(ValueError, match="cannot reshape"):  # the compiled function fails as eager code does
        cf(np.ones((4, 7)))
    assert "break the cached graph's shape guard s1 % 2 == 0" in cf.recompile_log[0]


def test_a_returned_view_with_symbolic_attributes_is_a_view_of_the_input():
    def heads(x):
        T, d = x.shape
        return x.reshape(T, 2, d // 2)

    cf = graph_lab.compile(heads, dynamic=True)
    for T, d in [(4, 8), (3, 6), (5, 2)]:
        x = np.arange(T * d, dtype=float).reshape(T, d)
        out = cf(x)
        assert np.array_equal(out, heads(x)) and np.shares_memory(out, x)
    assert cf.captures == 1


def test_a_branch_on_a_symbolic_size_gives_one_graph_per_outcome():
    def branchy(x):
        if x.shape[0] > 4:
            return x * 2.0
        return x - 1.0

    cf = graph_lab.compile(branchy, dynamic=True)
    for n in range(2, 10):
        x = np.ones((n, 3))
        assert np.array_equal(cf(x), branchy(x))
    assert cf.captures == 2
    facts = [[str(g.fact) for g in seg.graph.guards] for seg in cf.cache[0]]
    assert facts == [["s0 >= 2", "s1 >= 2", "s0 <= 4"], ["s0 >= 2", "s1 >= 2", "s0 >= 5"]]


def test_dynamic_must_be_none_true_or_false():
    with pytest.raises(TypeError, match="dynamic must be None"):
        graph_lab.compile(small, dynamic="yes")
