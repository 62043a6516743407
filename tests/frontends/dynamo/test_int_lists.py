"""A list of Python ints that grows between calls (a decode's token ids) becomes one graph input of symbolic
length after it changes length once (``dynamo/int_lists.py``), instead of a recompile at every length; every
other list, or another use of it, is read item by item as before. Each result is checked against eager."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import graph_lab

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from corpus import language_models as lm  # noqa: E402  (the corpus's GPT-2-style model, its inputs)

STEPS = 20


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_a_forward_given_the_growing_list_of_ids_compiles_twice_in_twenty_steps():
    model, prompt, _ = lm.gpt2_greedy_inputs(16, np.random.default_rng(0))
    cf = graph_lab.compile(lm._gpt2_logits, backend="codegen")
    ids = list(prompt)
    for _ in range(STEPS):
        got, want = cf(model, ids), lm._gpt2_logits(model, ids)
        assert same(got, want)  # the same NumPy calls: the same bits
        ids.append(int(np.argmax(want[-1])))
    assert cf.captures == 2, cf.recompile_log
    assert "the list of ints ids changed length from 6 to 7, so it becomes dynamic" in cf.recompile_log[0]
    assert cf.eager_fallback is None


def test_the_corpus_decode_loop_compiled_whole_gives_eagers_tokens_and_stops_capturing():
    """``gpt2_greedy`` itself compiled: a break at each ``int(np.argmax(...))``; the loop's segments are
    captured once static, once dynamic, then hit (and the loop's exit once); a new prompt's ints become symbols
    once. No fallback to eager."""
    def inputs(seed):
        return lm.gpt2_greedy_inputs(16, np.random.default_rng(seed))[:2]

    cf = graph_lab.compile(lm.gpt2_greedy, backend="codegen")
    for call, seed in enumerate([0, 0, 1, 2, 2]):
        model, prompt = inputs(seed)
        assert cf(model, prompt, STEPS) == lm.gpt2_greedy(model, prompt, STEPS)
        if call == 0:
            first = cf.captures
    assert first <= 5, cf.recompile_log
    assert cf.captures <= first + 1, cf.recompile_log
    assert cf.eager_fallback is None


def indexed(table, ids):
    return table[ids] * 2.0 + len(ids)


@pytest.mark.parametrize("later", [
    [3, 1.5, 2],          # a float among the ints: NumPy refuses the index, as eager does
    [True, False, True],  # all bools: NumPy reads a mask
    [4],                  # length 1: specialized
    [],                   # empty: NumPy's float64 array of nothing
    [[1, 2], [3, 4]],     # nested
    [5, 6, 7, 8, 9, 0],   # back to a plain list of ints
])
def test_a_dynamic_list_given_something_else_computes_what_eager_computes(later):
    table = np.arange(30.0).reshape(10, 3)
    cf = graph_lab.compile(indexed)
    for ids in ([1, 2, 3], [4, 5, 6, 7], [7, 8], later):
        try:
            want = indexed(table, ids)
        except Exception as e:
            with pytest.raises(type(e)):
                cf(table, ids)
            continue
        got = cf(table, ids)
        assert same(got, want), ids


def arrays_of(ids):
    a, b = np.array(ids), np.asarray(ids)
    a[0] = -1  # each is a new array: writing into one leaves the other and the list as they were
    return a, b, ids[1:], len(ids)


def test_np_array_of_a_dynamic_list_is_a_new_array_each_time():
    cf = graph_lab.compile(arrays_of)
    for ids in ([1, 2, 3], [4, 5, 6, 7], [7, 8, 9, 10, 11]):
        got, want = cf(list(ids)), arrays_of(list(ids))
        for g, w in zip(got[:2], want[:2]):
            assert same(g, w)
        assert got[2:] == want[2:]
    assert any("becomes dynamic" in m for m in cf.recompile_log)


def sliced_twice(ids):
    tail = ids[2:]
    return tail, tail


def test_a_slice_of_a_dynamic_list_is_one_new_list():
    cf = graph_lab.compile(lambda ids, n: (sliced_twice(ids), n * len(ids)))
    for ids in ([1, 2, 3], [4, 5, 6, 7], [7, 8, 9, 10, 11, 12]):
        ((a, b), n) = cf(ids, 2)
        assert a is b and a == ids[2:] and a is not ids and n == 2 * len(ids)
        a.append(0)
        assert ids == ids[:len(ids)]  # (the caller's list untouched by the append to the slice)


def constant_mask(table):
    return table[[True, False, True]] * 2.0


def test_a_constant_list_of_bools_is_checked_against_the_axis_as_numpy_checks_it():
    """A list of bools is a mask: NumPy refuses one whose length is not the axis's (compile() and trace once took
    its True positions, silently, whatever the axis)."""
    with pytest.raises(IndexError, match="boolean index did not match"):
        constant_mask(np.ones((10, 3)))
    with pytest.raises(IndexError, match="boolean index did not match"):
        graph_lab.compile(constant_mask)(np.ones((10, 3)))
    with pytest.raises(graph_lab.TraceError, match="boolean index did not match indexed array along axis 0"):
        graph_lab.trace(constant_mask, {"table": (10, 3)})
    table = np.arange(9.0).reshape(3, 3)
    assert same(graph_lab.compile(constant_mask)(table), constant_mask(table))
    cube = np.arange(24.0).reshape(2, 3, 4)
    assert same(graph_lab.compile(lambda c: c[:, [True, False, True]])(cube), cube[:, [True, False, True]])
    with pytest.raises(IndexError):
        graph_lab.compile(lambda c: c[..., [True, False, True]])(cube)
