"""An int index known when the graph runs (``key=[@1, 1:-1]``: operand 1 is an integer index, ops/indexing.py
``At``): NumPy's integer indexing, reads and writes, on every backend, against NumPy itself; its printed form reads
back; its rule refuses an operand that is not a 0-d integer."""

import numpy as np
import pytest

import graph_lab as gl
from graph_lab.backends.compiled import compile_graph
from graph_lab.ops.aliasing import may_be_view

ROWS = """graph rows {
  %0: f64[4,5] = input "A"
  %1: int = input "i"
  %2: int = const 1
  %3: i64[] = sub %1, %2
  %4: f64[3] = index %0, %3 key=[@1, 1:-1]
  %5: f64[4,5] = index_update %0, %4, %1 key=[@2, 1:-1]
  %6: f64[5] = index %5, %1 key=[@1]
  return %5, %6
}"""


def eager_rows(A, i):
    B = A.copy()
    B[i, 1:-1] = A[i - 1, 1:-1]
    return B, B[i]


def test_printed_form_reads_back():
    assert str(gl.parse(ROWS)).splitlines() == [line for line in ROWS.splitlines()]


@pytest.mark.parametrize("backend", ["reference", "interpret", "codegen", "fused"])
@pytest.mark.parametrize("i", range(-3, 4))  # negative indices count from the end, as in NumPy
def test_int_index_reads_and_writes_as_numpy_does(backend, i):
    graph = gl.parse(ROWS)
    A = np.random.default_rng(i + 4).random((4, 5))
    run = (lambda **kw: gl.run(graph, kw)) if backend == "reference" else compile_graph(graph, backend)
    got = run(A=A.copy(), i=i)
    for g, e in zip(got, eager_rows(A, i)):
        np.testing.assert_array_equal(g, e, strict=True)


@pytest.mark.parametrize("backend", ["reference", "codegen"])
def test_an_int_index_out_of_bounds_raises_numpys_index_error(backend):
    graph = gl.parse(ROWS)
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 0 with size 4"):
        eager_rows(np.ones((4, 5)), 4)
    run = (lambda **kw: gl.run(graph, kw)) if backend == "reference" else compile_graph(graph, backend)
    with pytest.raises(Exception, match="index 4 is out of bounds for axis 0 with size 4"):
        run(A=np.ones((4, 5)), i=4)


def test_an_int_index_is_a_view_and_an_index_array_a_copy():
    graph = gl.parse(ROWS)
    (index, *_), (update, *_) = [[n for n in graph.nodes if n.op == op] for op in ("index", "index_update")]
    assert may_be_view(index)
    arrays = gl.parse(ROWS.replace("%1: int = input", "%1: i64[2] = input").replace(
        "%6: f64[5] = index %5, %1 key=[@1]", "%6: f64[2,5] = index %5, %1 key=[$1]"
    ).replace("%3: i64[] = sub", "%3: i64[2] = sub").replace("%4: f64[3] = index %0, %3 key=[@1, 1:-1]",
                                                           "%4: f64[2,3] = index %0, %3 key=[$1, 1:-1]").replace(
        "index_update %0, %4, %1 key=[@2, 1:-1]", "index_update %0, %4, %1 key=[$2, 1:-1]"))
    assert not may_be_view([n for n in arrays.nodes if n.op == "index"][-1])


@pytest.mark.parametrize("operand, message", [
    ('%1: f64[] = input "i"', "@1 must name a 0-d integer operand"),
    ('%1: i64[2] = input "i"', "@1 must name a 0-d integer operand"),
])
def test_the_rule_refuses_an_int_index_that_is_not_one_int(operand, message):
    text = ROWS.replace('%1: int = input "i"', operand).split("  %2:")[0] + \
        '  %2: f64[3] = index %0, %1 key=[@1, 1:-1]\n  return %2\n}'
    with pytest.raises(gl.GraphLabError, match=message):
        gl.parse(text)


SPAN = """graph columns {
  %0: f64[3,6] = input "A"
  %1: int = input "k"
  %2: f64[3,2] = index %0, %1 key=[:, @1:+2]
  %3: f64[3,6] = index_update %0, %2, %1 key=[:, @2:+2] mode="add"
  return %3
}"""


def test_a_span_reads_back_and_runs_as_numpys_slice():
    graph = gl.parse(SPAN)
    assert str(graph).splitlines() == SPAN.splitlines()
    A = np.random.default_rng(3).random((3, 6))
    for k in (0, 3, 4, -6, -3):
        expected = A.copy()
        np.add.at(expected, (slice(None), slice(k, k + 2)), A[:, k:k + 2])
        for run in (lambda **kw: gl.run(graph, kw), compile_graph(graph, "codegen")):
            got = run(A=A.copy(), k=k)
            np.testing.assert_array_equal(got[0] if isinstance(got, (tuple, list)) else got, expected, strict=True)


@pytest.mark.parametrize("k", [5, -1, 6])
def test_a_span_past_the_end_of_its_axis_raises_instead_of_shrinking(k):
    graph = gl.parse(SPAN)
    assert np.ones((3, 6))[:, k:k + 2].shape[1] < 2  # (NumPy's own slice is shorter: f64[3,2] would be wrong)
    for run in (lambda **kw: gl.run(graph, kw), compile_graph(graph, "codegen")):
        with pytest.raises(Exception, match=f"slice {k}:{k + 2} is not 2 items long in axis 1 with size 6"):
            run(A=np.ones((3, 6)), k=k)

