"""Allocation inside compile(): np.zeros, np.ones, np.empty, np.full, np.ndarray and np.empty_like are graph
ops (``full``), so that allocating an array and filling it in a loop is one graph."""

import numpy as np
import pytest

from tests.frontends.dynamo.test_mutation_writes import check


def conv_fill(x, w):
    N, H, W = x.shape
    out = np.empty((N, H - 2, W - 2))
    for i in range(H - 2):
        for j in range(W - 2):
            out[:, i, j] = (x[:, i:i + 3, j:j + 3] * w).sum(axis=(1, 2))
    return out


def ndarray_fill(x):
    out = np.ndarray((x.shape[0], 2), dtype=np.float64)
    out[:, 0] = x.min(axis=1)
    out[:, 1] = x.max(axis=1)
    return out


def each_allocator(x):
    a = np.zeros(3)
    b = np.ones((2, 3), dtype=np.float32)
    c = np.full((3,), 2.5)
    d = np.full(2, 7)
    e = np.empty_like(x)
    e[...] = x * 2.0
    a[1] = x[0, 0]
    b[0] += 1.0
    c[:2] = x[0, :2]
    return a, b, c, d, e


def full_with_a_number_argument(x, v):
    y = np.full(x.shape, v)
    y[0] = x[0]
    return y


@pytest.mark.parametrize("fn, make", [
    (conv_fill, lambda rng: (rng.standard_normal((2, 5, 6)), rng.standard_normal((3, 3)))),
    (ndarray_fill, lambda rng: (rng.standard_normal((4, 3)),)),
    (each_allocator, lambda rng: (rng.standard_normal((2, 3)),)),
    (full_with_a_number_argument, lambda rng: (rng.standard_normal((3, 2)), float(rng.standard_normal()))),
], ids=["conv_fill", "ndarray_fill", "each_allocator", "full_with_a_number_argument"])
@pytest.mark.parametrize("backend", ["interpret", "codegen", "auto"])
def test_allocate_then_fill_is_one_graph(fn, make, backend):
    check(fn, make, backend=backend)


def test_two_allocations_returned_are_two_arrays():
    def f(x):
        a = np.zeros(3)
        b = np.zeros(3)
        a[0] = x[0]
        return a, b
    check(f, lambda rng: (rng.standard_normal(3),))


# --- masked writes of one value are a select

def masked_store(x, y, lo):
    x[x < lo] = 0.0
    z = np.zeros(y.shape, dtype=np.int64)
    z[y > 0.5] = 3.7  # cast to the array's dtype, as NumPy's assignment casts
    y[y > 0.5] = lo
    return z


def test_masked_store_of_one_value_is_one_graph():
    check(masked_store, lambda rng: (rng.standard_normal((3, 4)), rng.random((2, 5)), -0.2))
