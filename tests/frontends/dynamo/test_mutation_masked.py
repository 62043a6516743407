"""Masked and indexed writes under compile(): x[mask] op= v and x[mask] = y[mask] as a where; x[idx] = v with
repeated indices (the last write wins, as in NumPy); np.add.at and its siblings accumulating.

Every form is one graph with no break, and over several calls gives eager's results and argument contents bit
for bit (``check`` of test_mutation_writes). What a graph cannot do with x[mask] (its length, its sum) is a
graph break at which NumPy makes the real selection, so the result is still eager's."""

import numpy as np
import pytest

import graph_lab as gl
from tests.frontends.dynamo.test_mutation_writes import check, graphs_and_breaks


def vec(n=8):
    return lambda rng: (rng.standard_normal(n), rng.standard_normal(n))


# --- boolean masks: one graph, a where

def mask_sub_number(x, y):
    x[x > 0.5] -= 1.0


def mask_iadd_scalar_arg(x, y):
    x[y > 0] += 2.5


def mask_from_other(x, y):
    x[x > 0] = y[x > 0]


def mask_expression(x, y):
    x[x > 0] = y[x > 0] * 2.0 - x[x > 0]


def mask_reused(x, y):
    m = x < 0
    x[m] -= y[m]
    x[m] *= 2.0
    y[m] = np.sqrt(np.abs(y[m]))


def mask_number(x, y):
    x[y < 0] = 0.0


def mask_rows(x, y):
    x[y[:, 0] > 0] = y[0]            # a row of values for every selected row


def mask_rows_from_other(x, y):
    m = x[:, 1] < 0
    x[m] = y[m] + 1.0


def mask_of_a_fresh_array(x, y):
    out = x.copy()
    out[out > 0] **= 1  # (a form a selection does not take: a graph break, still eager's result)
    z = np.zeros_like(x)
    z[x > 0] = x[x > 0]
    return z


def mask_reflected(x, y):
    x[x > 0] = 1.0 - x[x > 0]
    y[y > 0] = 2.0 / y[y > 0]


def mask_periodic(pos, vel):
    """The corpus's particles_in_box: wrap positions into the box."""
    L = 1.0
    pos += 0.3 * vel
    pos[pos >= L] -= L
    pos[pos < 0] += L
    return pos.sum()


@pytest.mark.parametrize("fn", [mask_sub_number, mask_iadd_scalar_arg, mask_from_other, mask_expression, mask_reused,
                                mask_number, mask_reflected, mask_periodic])
def test_masked_write_is_one_graph(fn):
    check(fn, vec())


@pytest.mark.parametrize("fn", [mask_rows, mask_rows_from_other])
def test_masked_rows_are_one_graph(fn):
    check(fn, lambda rng: (rng.standard_normal((5, 3)), rng.standard_normal((5, 3))))


def test_mask_into_an_int_array_keeps_its_other_elements():
    def f(x, y):
        x[y > 0] = 0.5  # NumPy casts the value to int64 first; 2**62 + 1 is no float64
    check(f, lambda rng: (np.arange(6, dtype=np.int64) + 2**62 + 1, rng.standard_normal(6)))


def test_mask_into_float32_from_float64():
    def f(x, y):
        x[x > 0] = y[x > 0] / 3.0
    check(f, lambda rng: (rng.standard_normal(7).astype(np.float32), rng.standard_normal(7)))


def test_masked_write_graph_is_a_where():
    cf = gl.compile(mask_from_other)
    cf(np.ones(4), np.zeros(4))
    text = str(cf.last_events[0].segment.graph)
    assert "where" in text and "index_update" not in text


@pytest.mark.parametrize("fn", [mask_of_a_fresh_array])
def test_other_uses_of_a_selection_break_and_stay_eager(fn):
    check(fn, vec(), one_graph=False)


def selection_sum(x, y):
    s = x[x > 0]
    y[0] = 1.0
    return s.sum() + len(s)


def selection_returned(x, y):
    s = x[x > 0] * 2.0
    x[...] = 0.0
    return s


def selection_times_array(x, y):
    return x[x > 0] * y[:1]


def selection_function(x, y):
    return np.sum(x[x > 0]), np.exp(x[x > 0])


def wrong_length(x, y):
    x[x > 0] = y  # NumPy refuses this unless every element is selected


@pytest.mark.parametrize("fn", [selection_sum, selection_returned, selection_times_array, selection_function])
def test_a_selection_used_otherwise_is_numpy_s_copy(fn):
    check(fn, vec(), one_graph=False)


def test_a_selection_needed_by_python_is_a_break_with_the_reason():
    report = gl.explain(selection_sum)(np.ones(3), np.ones(3))
    assert "boolean-mask indexing x[mask] has a data-dependent shape" in str(report)
    assert ".sum of a selection" in str(report)


def test_value_of_the_wrong_length_raises_as_in_numpy():
    cf = gl.compile(wrong_length)
    with pytest.raises(ValueError, match="boolean array indexing assignment"):
        wrong_length(np.array([1.0, -1.0, 2.0]), np.zeros(3))
    with pytest.raises(ValueError, match="boolean array indexing assignment"):
        cf(np.array([1.0, -1.0, 2.0]), np.zeros(3))
    x = np.ones(3)
    cf(x, np.full(3, 4.0))  # every element selected: NumPy accepts it
    np.testing.assert_array_equal(x, [4.0, 4.0, 4.0])


# --- integer index arrays: NumPy's last write wins; np.add.at accumulates

REPEATED = np.array([1, 3, 1, 1, 0, 3])


def index_set(x, i, v):
    x[i] = v


def index_iadd(x, i, v):
    x[i] += v  # buffered: a repeated index is incremented once, by its last value


def index_constant(x, i, v):
    x[REPEATED] = v * 2.0


def add_at(x, i, v):
    np.add.at(x, i, v)


def subtract_at_constant(x, i, v):
    np.subtract.at(x, REPEATED, v)
    np.maximum.at(x, i, 0.5)


def add_at_fresh(x, i, v):
    counts = np.zeros(4)
    np.add.at(counts, i, 1.0)
    np.multiply.at(x, i, v)
    return counts


def add_at_2d(x, i, v):
    grid = np.zeros((4, 3))
    np.add.at(grid, (i, i % 3), v)
    return grid


def indexed(rng):
    return rng.standard_normal(4), rng.permutation(REPEATED), rng.standard_normal(6)


@pytest.mark.parametrize("fn", [index_set, index_iadd, index_constant, add_at, subtract_at_constant, add_at_fresh,
                                add_at_2d])
@pytest.mark.parametrize("backend", ["interpret", "codegen", "auto"])
def test_indexed_writes_with_repeated_indices(fn, backend):
    check(fn, indexed, backend=backend)


def test_repeated_indices_hand_computed():
    cf = gl.compile(add_at)
    x = np.zeros(3)
    cf(x, np.array([0, 2, 0, 0]), np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(x, [8.0, 0.0, 2.0])
    cf2 = gl.compile(index_set)
    y = np.zeros(3)
    cf2(y, np.array([0, 2, 0, 0]), np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(y, [4.0, 0.0, 2.0])
    assert graphs_and_breaks(cf) == (1, 0) and graphs_and_breaks(cf2) == (1, 0)


def test_add_at_graph_and_its_text_round_trip():
    cf = gl.compile(add_at)
    cf(np.zeros(3), np.array([0, 0]), np.ones(2))
    g = cf.last_events[0].segment.graph
    assert 'mode="add"' in str(g)
    assert str(gl.parse(str(g))) == str(g)


def test_add_at_casts_as_numpy_does():
    """ufunc.at casts the value into the array's dtype without complaint (float into int truncates)."""
    def f(x, i, v):
        np.add.at(x, i, v)
    check(f, lambda rng: (np.arange(4, dtype=np.int64), np.array([0, 0, 3]), rng.standard_normal(3) * 3.0))
    check(f, lambda rng: (np.zeros(4, dtype=np.float32), np.array([0, 0, 3]), rng.standard_normal(3)))
