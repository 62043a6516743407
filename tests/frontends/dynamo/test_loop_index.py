"""Loop regions whose body reads the loop variable (graph_lab/frontends/dynamo/loop_index.py): ``A[i, 1:-1]``,
``x[i - 1]``, ``x * i`` make one body for every iteration, with ``i`` its input; a use of ``i`` that shapes the
graph keeps the loop unrolled, and explain() says why. Every test compares with eager NumPy bit for bit (results
and the arguments' final contents), and the kept loops with the same loop unrolled. (seidel_rows,
floyd_warshall and xorshift_uniform are the benchmark corpus's kernels.)"""

import numpy as np
import pytest

import graph_lab as gl
from benchmarks.corpus.linalg_loops import floyd_warshall
from benchmarks.corpus.numpy_api import xorshift_uniform as xorshift
from benchmarks.corpus.stencils import seidel_rows
from graph_lab.frontends.dynamo import loop_regions


@pytest.fixture(autouse=True)
def regions_of_any_size(monkeypatch):
    monkeypatch.setattr(loop_regions, "MIN_UNROLLED_NODES", 0)


def fdtd_1d(ey, hz, source, steps):
    for t in range(steps):
        ey[0] = source[t]
        ey[1:] -= 0.5 * (hz[1:] - hz[:-1])
        hz[:-1] -= 0.7 * (ey[1:] - ey[:-1])
    return ey.sum()


def from_the_end(x, out, n):
    for i in range(n):
        out[-i - 1] = x[i] * 2.0 + x[i - 3]  # x[i - 3] is x[-3], x[-2], x[-1] first: NumPy's wrap
    return out


def weighted(x, n):
    for i in range(n):
        x = x * 0.5 + i
    return x


def through_a_view(A, n):
    for i in range(n):
        A[i][1:] = A[i][:-1] * 0.5 + 1.0  # A[i] is a view: the write reaches A
    return A


def nested(A, n):
    for i in range(n):
        for j in range(n):
            A[i, j] = A[i - 1, j] + A[i, j - 1] * 0.25
    return A


BREAKS_EVERY_ITERATION = pytest.mark.filterwarnings("ignore::graph_lab.frontends.dynamo.resume.BreakBudgetWarning")
"""For the tests whose loop breaks the graph at every iteration on purpose (compile() then warns once)."""


def run_both(fn, make, *, cf=None):
    eager_args, compiled_args = make(), make()
    cf = cf or gl.compile(fn)
    expected, got = fn(*eager_args), cf(*compiled_args)
    if expected is not None:
        np.testing.assert_array_equal(got, expected, strict=True)
    for a, b in zip(eager_args, compiled_args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(b, a, strict=True)
    return compiled_args, got


def notes(fn, make) -> list[str]:
    return gl.explain(fn)(*make()).loops


def fori_loops(fn, make) -> list:
    return [n for g in gl.explain(fn)(*make()).graphs for n in g.nodes if n.op == "fori_loop"]


rng = np.random.default_rng(0)
CASES = {
    "seidel_rows": (seidel_rows, lambda: (np.random.default_rng(1).random((14, 12)), 2)),
    "fdtd_1d": (fdtd_1d, lambda: (*np.random.default_rng(2).random((2, 30)), np.random.default_rng(3).random(12),
                                  12)),
    "floyd_warshall": (floyd_warshall, lambda: (np.random.default_rng(4).integers(1, 50, (10, 10)).astype(float),)),
    "xorshift": (xorshift, lambda: (np.random.default_rng(5).integers(1, 2 ** 63, 16, dtype=np.uint64), 9)),
    "from_the_end": (from_the_end, lambda: (np.random.default_rng(6).random(12), np.zeros(12), 12)),
    "weighted": (weighted, lambda: (np.random.default_rng(7).random(4).astype(np.float32), 12)),
    "through_a_view": (through_a_view, lambda: (np.random.default_rng(8).random((10, 6)), 10)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_kept_with_the_loop_variable_equal_to_eager_and_to_unrolled(name, monkeypatch):
    fn, make = CASES[name]
    kept_args, kept = run_both(fn, make)
    loops = fori_loops(fn, make)
    assert loops and all(loop.attrs["body"].input_names[0] == "i" for loop in loops)
    assert any(note.endswith("in the region), body " + str(loops[0].attrs["body"].count()) + " nodes")
               for note in notes(fn, make))
    monkeypatch.setattr(loop_regions, "MIN_TRIPS", 10 ** 6)  # the same function, every loop unrolled
    unrolled_args, unrolled = run_both(fn, make)
    assert not fori_loops(fn, make)
    for a, b in zip(kept_args, unrolled_args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, strict=True)
    if kept is not None:
        np.testing.assert_array_equal(kept, unrolled, strict=True)


def test_the_body_indexes_with_its_input_i():
    fn, make = CASES["seidel_rows"]
    loop = fori_loops(fn, make)[0]  # (one region for each of the two steps)
    text = str(loop.attrs["body"])
    assert "key=[@2, 1:-1]" in text and "key=[@1, :-2]" in text  # A[i, 1:-1] = ..., A[i - 1, :-2]
    i = loop.attrs["body"].input_nodes[0].outputs[0]
    assert any(i in node.inputs for node in loop.attrs["body"].nodes if node.op == "index")
    lower, upper = (v.node.attrs["value"] for v in loop.inputs[:2])
    assert (lower, upper) == (1, 12)  # range(1, 13): items 1 .. 11 in the region, the last (12) unrolled


def test_a_float32_array_times_the_loop_variable_stays_float32():
    fn, make = CASES["weighted"]
    _, got = run_both(fn, make)
    assert got.dtype == np.float32


def test_changing_trip_counts_recompile_or_guard():
    cf = gl.compile(from_the_end)
    for n in (12, 20, 9, 12):
        run_both(from_the_end, lambda: (np.random.default_rng(n).random(n), np.zeros(n), n), cf=cf)


def test_nested_loops_reading_both_variables():
    make = lambda: (np.random.default_rng(9).random((9, 9)), 9)
    run_both(nested, make)
    outer = [loop for loop in fori_loops(nested, make) if "fori_loop" in [n.op for n in loop.attrs["body"].nodes]]
    assert len(outer) == 1  # the inner loop, inside the outer one (and in the outer one's first and last)


def test_a_view_kept_from_one_iteration_to_the_next_stays_unrolled():
    def row_view(A, n):
        for i in range(n):
            row = A[i]
            row[1:] = row[:-1] * 0.5 + 1.0
        return A

    _unrolled_because(row_view, lambda: (np.random.default_rng(8).random((10, 6)), 10),
                      "the Python state changes from one iteration to the next (local 'row'")


def _unrolled_because(fn, make, *reason):
    run_both(fn, make)
    assert not fori_loops(fn, make)
    text = " ".join(notes(fn, make))
    for part in reason:
        assert part in text, text


def test_a_slice_whose_length_depends_on_i_stays_unrolled():
    def prefix_rows(A, n):
        for i in range(1, n):
            A[i, :i] = A[i - 1, :i] * 0.5
        return A

    _unrolled_because(prefix_rows, lambda: (np.random.default_rng(10).random((10, 10)), 10),
                      "unrolled (9 iterations): the slice ':i' (axis 1 of f64[10,10]) at line",
                      "is not a slice a:b of a fixed length whose start a is computed from the loop variable 'i'")


def test_range_of_i_and_a_shape_of_i_stay_unrolled():
    def inner_range(x, n):
        for i in range(n):
            for j in range(i):  # (the inner loop of 8 may be kept; the outer one is not)
                x = x + 1.0
        return x

    def shape_of_i(x, n):
        for i in range(n):
            x = x + np.zeros(i + 1)[:1]
        return x

    for fn in (inner_range, shape_of_i):
        make = lambda: (np.ones(3), 9)
        run_both(fn, make)
        assert any(note.startswith(f"loop at test_loop_index.py:{fn.__code__.co_firstlineno + 1} unrolled (9 "
                                   f"iterations): the loop variable 'i' is read and") for note in notes(fn, make))


def test_a_python_break_on_i_stays_unrolled():
    def until(x, n):
        for i in range(n):
            if i == 5:
                break
            x[i] = x[i - 1] + 1.0
        return x

    _unrolled_because(until, lambda: (np.zeros(12), 12), "'i == 5', computed from it, is used by Python code")


def test_a_number_computed_from_i_in_array_arithmetic_stays_unrolled():
    def shifted(x, n):  # i - 1 is an int64 in a graph, which NumPy would promote unlike eager's Python int
        for i in range(n):
            x = x * 0.5 + (i - 1)
        return x

    _unrolled_because(shifted, lambda: (np.ones(4, np.float32), 12),
                      "'i - 1', computed from the loop variable 'i', is a number in array arithmetic")


def test_an_index_out_of_range_raises_as_eager_does():
    def ahead(x, n):
        for i in range(n):
            x[i] = x[i + 1] * 0.5  # x[n] at the last iteration: IndexError
        return x

    make = lambda: (np.ones(10), 10)
    with pytest.raises(IndexError) as eager:
        ahead(*make())
    with pytest.raises(IndexError) as compiled:
        gl.compile(ahead)(*make())
    assert str(compiled.value) == str(eager.value)
    (note,) = notes(ahead, lambda: (np.ones(10), 9))  # (in range: the loop of 9 is kept)
    assert "kept as a fori_loop region" in note


def test_an_index_out_of_range_at_a_later_iteration_keeps_the_loop_unrolled():
    def ahead(x, y, n):
        for i in range(n):
            y[i] = x[i + 1] * 0.5
        return y

    x, eager_y, compiled_y = np.arange(10.0), np.zeros(12), np.zeros(12)
    with pytest.raises(IndexError) as eager:
        ahead(x, eager_y, 12)
    with pytest.raises(IndexError) as compiled:
        gl.compile(ahead)(x, compiled_y, 12)
    assert str(compiled.value) == str(eager.value)
    np.testing.assert_array_equal(compiled_y, eager_y, strict=True)  # y[0..8] written before the error
    assert compiled_y[8] == 4.5
    loop_regions._NOTES.clear()
    with pytest.raises(IndexError):
        gl.explain(ahead)(x, np.zeros(12), 12)
    # (notes of graphs from earlier tests may still be alive: the collector decides when they go)
    notes = [note for notes_of in loop_regions._NOTES.values() for note in notes_of if "'i + 1'" in note]
    assert notes
    for text in notes:
        assert "the index 'i + 1' (axis 0 of f64[10]) at line" in text
        assert "is 10 when i is 9, out of bounds, where eager NumPy raises IndexError" in text


@BREAKS_EVERY_ITERATION
def test_a_bool_made_from_i_is_a_mask_as_in_eager():
    def masked(x, n):
        for i in range(n):
            x = x + x[i > 3].sum()  # x[True] is x with a new axis, x[False] an empty one
        return x

    make = lambda: (np.ones(3), 9)
    run_both(masked, make)  # (a Python bool index breaks the graph: NumPy's own indexing runs it)
    assert not fori_loops(masked, make)


def test_a_loop_variable_assigned_in_the_body_stays_unrolled():
    def rebinds(x, n):
        for i in range(n):
            x[i] = 1.0
            i = i + 1
        return x + i

    _unrolled_because(rebinds, lambda: (np.zeros(12), 12), "the loop variable 'i' is assigned in the loop's body")


def test_a_number_from_i_and_an_argument_is_read_again_on_each_call():
    def offset(x, n, k):
        for i in range(n):
            x = x + (i + k)  # i + k in array arithmetic: the loop stays unrolled, and k is an input of it
        return x

    cf = gl.compile(offset)
    for k in (1, 5, -2):
        run_both(offset, lambda: (np.zeros(3), 9, k), cf=cf)


def columns(A, out, n):
    for k in range(n):
        out[:, k:k + 2] = A[:, k:k + 2] * 2.0 + A[:, k + 1:k + 3]  # slices of two items starting at k
    return out


def test_a_slice_of_a_fixed_length_starting_at_i_is_kept():
    make = lambda: (np.random.default_rng(11).random((4, 12)), np.zeros((4, 12)), 9)
    run_both(columns, make)
    (loop,) = fori_loops(columns, make)
    assert "key=[:, @1:+2]" in str(loop.attrs["body"])


def test_the_corpus_convolution_keeps_both_loops():
    from benchmarks.corpus import CORPUS
    kernel = next(k for k in CORPUS if k.name == "conv2d_fill")
    make = kernel.inputs
    run_both(kernel.fn, make)
    assert sum("kept as a fori_loop region" in note for note in notes(kernel.fn, make)) == 2


def test_a_slice_whose_start_wraps_differently_stays_unrolled():
    def window(x, y, n):
        for k in range(n):
            y[k] = x[k - 3:k - 1].sum()  # x[-3:-1] first, then x[-1:1], which is empty
        return y

    _unrolled_because(window, lambda: (np.arange(12.0), np.zeros(12), 12),
                      "the slice '(k - 3):(k - 1)' (axis 0 of f64[12])", "has a length that changes with k")


OUTSIDE: list = []


@BREAKS_EVERY_ITERATION
def test_a_view_made_with_i_and_held_at_a_graph_break_is_rebuilt_with_its_index():
    def breaks_at_iteration_1(A, n):
        seen = []
        for i in range(n):
            row = A[i - 1]
            row *= 2.0
            if seen:
                OUTSIDE.append(i)  # a side effect from iteration 1 on: the graph breaks with row held
            seen.append(0)
            row += 1.0
        return A

    run_both(breaks_at_iteration_1, lambda: (np.random.default_rng(12).random((10, 3)), 9))


def test_a_body_using_i_is_kept_from_four_times_the_size(monkeypatch):
    make = CASES["from_the_end"][1]
    monkeypatch.setattr(loop_regions, "MIN_UNROLLED_NODES", 10 ** 6)
    (note,) = notes(from_the_end, make)
    nodes = int(note.split("unrolled it is about ")[1].split()[0])
    monkeypatch.setattr(loop_regions, "MIN_UNROLLED_NODES", nodes // 2)
    (note,) = notes(from_the_end, make)
    assert note.endswith(f"unrolled it is about {nodes} nodes, under the {4 * (nodes // 2)} where a region whose "
                         f"body uses the loop variable pays for its cost per iteration")
    monkeypatch.setattr(loop_regions, "MIN_UNROLLED_NODES", nodes // 4)
    assert "kept as a fori_loop region" in notes(from_the_end, make)[0]
    run_both(from_the_end, make)


def test_an_unrolled_inner_loop_keeps_the_outer_variable_of_a_kept_outer_loop(monkeypatch):
    monkeypatch.setattr(loop_regions, "MIN_UNROLLED_NODES", 25)  # inner loop 9 x 5 nodes: unrolled; outer: kept
    make = lambda: (np.random.default_rng(13).random((9, 9)), 9)
    run_both(nested, make)
    text = notes(nested, make)
    assert any("loop at test_loop_index.py" in note and "kept as a fori_loop region" in note for note in text)
    assert any("under the 100 where a region whose body uses the loop variable" in note for note in text)



@pytest.mark.parametrize("name", ["gram_schmidt", "trmm_upper"])
def test_a_window_of_a_loop_variable_written_through_keeps_its_key(name):
    # Regression: a window written through (A[:, j] -= ..., B[i, :] += ...) is read again as the window of the new
    # base; it was rebuilt with the view's key but not the key's operands (A[:, j] came back as A[:, None, ...]),
    # and capture broke the graph there
    import copy
    from benchmarks.corpus import CORPUS
    kernel = next(k for k in CORPUS if k.name == name)
    cf = gl.compile(kernel.fn, backend="codegen")
    for seed in (0, 1):
        args = kernel.inputs(small=True, seed=seed)
        eager_args = copy.deepcopy(args)
        want, got = kernel.fn(*eager_args), cf(*args)
        for a, b in zip((got, *args), (want, *eager_args)):
            if isinstance(b, np.ndarray):
                np.testing.assert_array_equal(a, b)
    report = str(gl.explain(cf)(*kernel.inputs(small=True, seed=2)))
    assert " 1 graph(s), 0 graph break(s)" in report.splitlines()[0], report
