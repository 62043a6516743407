"""compile(): slice bounds computed by the graph (a CSR row's column range) break the graph at the slice, on every
Python version, and the function gives eager's results: no graph_lab-internal exception reaches the caller."""

from __future__ import annotations

import numpy as np

import graph_lab
from benchmarks.corpus.numpy_api import csr_matvec


def row_sum(p, v):
    return v[p[0]:p[1]].sum()


def test_a_slice_with_graph_computed_bounds_breaks_and_is_right():
    cf = graph_lab.compile(row_sum)
    v = np.arange(6.0) ** 2
    for p in ([0, 2], [1, 4], [3, 3], [0, 2]):
        p = np.array(p)
        assert cf(p, v) == row_sum(p, v)
    report = graph_lab.explain(cf)(np.array([0, 2]), v)
    assert report.graph_break_count == 1 and "slice start must be an int" in report.breaks[0].reason


def test_csr_product_gives_eagers_result():
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((6, 5)) * (rng.random((6, 5)) < 0.4)
    indptr = np.concatenate([[0], np.cumsum((dense != 0).sum(axis=1))])
    indices = np.nonzero(dense)[1]
    data = dense[dense != 0]
    cf = graph_lab.compile(csr_matvec)
    for _ in range(3):
        x = rng.standard_normal(5)
        np.testing.assert_array_equal(cf(indptr, indices, data, x), csr_matvec(indptr, indices, data, x))
