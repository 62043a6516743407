"""Loop regions: compile() keeps a ``for _ in range(n)`` loop whose iterations are captured alike as one
``fori_loop`` node (graph_lab/frontends/dynamo/loop_regions.py). Every test compares with eager NumPy, bit for
bit, results and the final contents of the arguments; loops that must not be kept are checked to stay unrolled
(and still right), with explain() saying why."""

import sys

import numpy as np
import pytest

import graph_lab as gl
from graph_lab.frontends.dynamo import loop_regions

MIN = loop_regions.MIN_TRIPS


@pytest.fixture(autouse=True)
def regions_of_any_size(monkeypatch):
    """Small loops, kept as regions as a loop of 1,000 nodes would be (test_only_large_loops_are_kept_by_default
    checks the size rule itself)."""
    monkeypatch.setattr(loop_regions, "MIN_UNROLLED_NODES", 0)


def jacobi_1d(A, B, steps):
    for t in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A.sum()


LOOP_LINE = f"test_loop_regions.py:{jacobi_1d.__code__.co_firstlineno + 1}"


def heat_2d(T, alpha, steps):
    for _ in range(steps):
        T[1:-1, 1:-1] = T[1:-1, 1:-1] + alpha * (T[2:, 1:-1] + T[:-2, 1:-1] + T[1:-1, 2:] + T[1:-1, :-2]
                                                 - 4.0 * T[1:-1, 1:-1])
    return T


def recurrence(x, W, n):
    y = x
    for _ in range(n):
        y = np.tanh(y @ W) + x
    return y


def accumulate(acc, x, n):
    scale = x * 0.5  # read by every iteration, never changed: loop-invariant
    for _ in range(n):
        acc += scale
        acc *= 0.75
    return acc


def run_both(fn, make, *, cf=None):
    """fn eagerly and compiled on two copies of the same inputs: results and arguments must be equal."""
    eager_args, compiled_args = make(), make()
    cf = cf or gl.compile(fn)
    expected, got = fn(*eager_args), cf(*compiled_args)
    np.testing.assert_array_equal(got, expected, strict=True)
    for a, b in zip(eager_args, compiled_args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(b, a, strict=True)
    return cf


def loop_notes(fn, make) -> list[str]:
    return gl.explain(fn)(*make()).loops


def graph_ops(fn, make) -> list[str]:
    return [n.op for g in gl.explain(fn)(*make()).graphs for n in g.nodes]


def stencil_inputs(steps, n=30, seed=0):
    def make():
        A = np.random.default_rng(seed).random(n)
        return A, A.copy(), steps
    return make


# --- loops that are kept


@pytest.mark.parametrize("steps", [MIN, MIN + 1, 40, 500])
def test_jacobi_time_loop_is_one_region_and_eagers_result(steps):
    make = stencil_inputs(steps)
    run_both(jacobi_1d, make)
    (note,) = loop_notes(jacobi_1d, make)
    assert note.startswith("loop at test_loop_regions.py:")
    assert f"kept as a fori_loop region: {steps} iterations (the last unrolled, {steps - 1} in the region), body " \
           f"14 nodes" in note
    ops = graph_ops(jacobi_1d, make)
    assert ops.count("fori_loop") == 1 and len(ops) < 30  # unrolled: 14 nodes per step


def test_heat_2d_with_a_scalar_argument():
    def make():
        return np.random.default_rng(3).random((12, 14)), 0.1, 25
    run_both(heat_2d, make)
    assert "kept as a fori_loop region" in loop_notes(heat_2d, make)[0]


def test_recurrence_and_accumulation_loops():
    def rec():
        rng = np.random.default_rng(1)
        return rng.random((4, 4)), rng.random((4, 4)) * 0.3, 30
    run_both(recurrence, rec)
    assert "body 3 nodes" in loop_notes(recurrence, rec)[0]

    def acc():
        rng = np.random.default_rng(2)
        return rng.random(5), rng.random(5), 20
    run_both(accumulate, acc)
    assert "kept as a fori_loop region" in loop_notes(accumulate, acc)[0]


def test_region_gives_the_unrolled_graphs_result(monkeypatch):
    make = stencil_inputs(64, n=50, seed=4)
    with_region = gl.compile(jacobi_1d)(*make())
    monkeypatch.setattr(loop_regions, "MIN_TRIPS", sys.maxsize)
    unrolled = gl.compile(jacobi_1d)
    args = make()
    assert unrolled(*args) == with_region
    assert "fori_loop" not in graph_ops(jacobi_1d, make)


def test_only_large_loops_are_kept_by_default(monkeypatch):
    monkeypatch.undo()
    assert loop_regions.MIN_UNROLLED_NODES == 1000
    small, large = stencil_inputs(20), stencil_inputs(72)  # 14 nodes per step: 280 and 1,008 nodes unrolled
    run_both(jacobi_1d, small)
    run_both(jacobi_1d, large)
    assert loop_notes(jacobi_1d, small) == [f"loop at {LOOP_LINE} unrolled (20 iterations): unrolled it is about "
                                            f"280 nodes, under the 1000 where a region pays for its cost per "
                                            f"iteration"]
    assert "kept as a fori_loop region: 72 iterations" in loop_notes(jacobi_1d, large)[0]


@pytest.mark.parametrize("steps", [0, 1, 2, 3, MIN - 1])
def test_short_loops_stay_unrolled_and_right(steps):
    make = stencil_inputs(steps)
    run_both(jacobi_1d, make)
    assert loop_notes(jacobi_1d, make) == [] and "fori_loop" not in graph_ops(jacobi_1d, make)


def test_a_new_trip_count_recompiles_and_each_is_right():
    cf = gl.compile(jacobi_1d)
    for steps in (10, 30, 10, 9, 30):
        run_both(jacobi_1d, stencil_inputs(steps, seed=steps), cf=cf)
    assert cf.captures == 3  # 10, 30 and 9: the trip count is guarded, as the unrolled loop's is


def test_loop_in_a_called_function_and_nested_loops():
    def step(u):
        for _ in range(10):
            u = 0.5 * (u + np.roll(u, 1))
        return u

    def outer(u, T):
        for _ in range(T):
            u = step(u) - 0.01
        return u

    def make():
        return np.random.default_rng(5).random(16), 12
    run_both(outer, make)
    notes = loop_notes(outer, make)
    assert sum("kept as a fori_loop region" in n for n in notes) >= 1


def test_write_through_a_view_made_before_the_loop():
    def f(A, n):
        inner = A[2:-2]
        for _ in range(n):
            inner += 1.0
            inner *= 0.5
        return A

    run_both(f, lambda: (np.random.default_rng(6).random(20), 16))
    assert "kept as a fori_loop region" in loop_notes(f, lambda: (np.ones(20), 16))[0]


# --- loops that must stay unrolled (and still give eager's results)


def test_a_body_branching_on_the_loop_variable_is_unrolled():
    def g(x, n):
        for i in range(n):
            if i % 3 == 0:  # a Python branch on i: iterations 0 and 1 alone would not show it
                x = x * 2.0
            x = x - 1.0
        return x

    make = lambda: (np.random.default_rng(7).random(4), 12)
    run_both(g, make)
    (note,) = loop_notes(g, make)
    assert "unrolled (12 iterations): the loop variable 'i' is read and '(i % 3) == 0', computed from it, is used " \
           "by Python code" in note
    assert "fori_loop" not in graph_ops(g, make)
    # (a body using i as a number of the graph is kept: tests/frontends/dynamo/test_loop_index.py)


def test_python_state_that_changes_keeps_the_loop_unrolled():
    def counter(x, n):
        k = 1.0
        for _ in range(n):
            x = x * k
            k = k + 1.0
        return x

    def growing_list(x, n):
        outs = []
        for _ in range(n):
            x = np.sin(x)
            outs.append(x)
        return np.stack(outs)

    def first_time_only(x, n):
        seen = None
        for _ in range(n):
            if seen is None:
                seen = x * 2.0
            x = x + seen
        return x

    def swap(a, n):
        b = a + 1.0
        for _ in range(n):
            a, b = b, a + b
        return b

    for fn in (counter, growing_list, first_time_only, swap):
        make = lambda: (np.random.default_rng(8).random(3), 10)
        run_both(fn, make)
    for fn in (counter, growing_list, swap):
        (note,) = loop_notes(fn, make)
        assert "unrolled (10 iterations)" in note, note
    # first_time_only: iteration 0 differs from the rest, but iterations 1 and 2 start alike: kept, and right
    assert "(the first and the last unrolled, 8 in the region)" in loop_notes(first_time_only, make)[0]


def test_breaks_inside_the_loop():
    def data_break(x, n):
        for _ in range(n):
            x = x * 1.5
            if x.sum() > 40.0:  # data-dependent: a graph break in iteration 0, the loop runs as Python
                break
        return x

    def flag_break(x, n, stop):
        for _ in range(n):
            x = x + 1.0
            if stop:  # a guarded argument: the same in every iteration
                break
        return x

    for scale in (0.1, 1.0, 5.0):
        run_both(data_break, lambda: (np.full(4, scale), 20))
    for stop in (True, False):
        run_both(flag_break, lambda: (np.zeros(3), 20, stop))
    assert "kept as a fori_loop region" in loop_notes(flag_break, lambda: (np.zeros(3), 20, False))[0]
    assert "fori_loop" not in graph_ops(flag_break, lambda: (np.zeros(3), 20, True))


def test_random_draws_in_the_body_stay_unrolled():
    def noisy(x, n, seed):
        rng = np.random.default_rng(seed)
        for _ in range(n):
            x = x + rng.standard_normal(3)
        return x

    run_both(noisy, lambda: (np.zeros(3), 10, 0))
    assert "fori_loop" not in graph_ops(noisy, lambda: (np.zeros(3), 10, 0))


def test_state_carried_in_a_list_and_in_an_objects_array():
    def in_a_list(x, n):
        state = [x * 1.0, x + 1.0]
        for _ in range(n):
            state[0] = state[0] * 0.5 + state[1]
        return state[0]

    class Model:
        def __init__(self, h):
            self.h = h

    def in_an_attribute(m, n):
        for _ in range(n):
            m.h *= 0.9
            m.h += 1.0
        return m.h.sum()

    make = lambda: (np.random.default_rng(9).random(3), 12)
    run_both(in_a_list, make)
    assert "kept as a fori_loop region" in loop_notes(in_a_list, make)[0]
    cf = gl.compile(in_an_attribute)
    eager, compiled = Model(np.arange(4.0)), Model(np.arange(4.0))
    assert cf(compiled, 12) == in_an_attribute(eager, 12)
    np.testing.assert_array_equal(compiled.h, eager.h, strict=True)
    assert "kept as a fori_loop region" in gl.explain(in_an_attribute)(Model(np.arange(4.0)), 12).loops[0]


def test_symbolic_sizes_keep_the_loop_unrolled_and_right():
    cf = gl.compile(jacobi_1d, dynamic=True)
    for n in (30, 41):
        run_both(jacobi_1d, stencil_inputs(12, n=n, seed=n), cf=cf)
    assert cf.captures == 1  # one graph for both sizes
    assert gl.explain(cf)(*stencil_inputs(12)()).loops == [
        f"loop at {LOOP_LINE} unrolled (12 iterations): the body has symbolic sizes"]


def test_explicit_fori_loop_bodies_run_compiled_with_their_carries_in_place():
    def f(A, n):
        def body(i, a):
            a = a.copy()
            a[1:-1] = 0.5 * (a[:-2] + a[2:]) + i
            return a
        return gl.F.fori_loop(0, n, body, A)

    make = lambda: (np.random.default_rng(10).random(20), 9)
    for backend in ("auto", "codegen", "interpret"):
        run_both(f, make, cf=gl.compile(f, backend=backend))


def test_a_graph_with_a_loop_region_prints_parses_and_runs_as_eager():
    make = stencil_inputs(12, n=16, seed=11)
    (g,) = gl.explain(jacobi_1d)(*make()).graphs
    assert any(n.op == "fori_loop" for n in g.nodes)
    g.verify()
    text = str(g)
    back = gl.parse(text, dict(g.param_values))
    assert str(back) == text
    A, B, steps = make()
    inputs = dict(zip(g.input_names, (A.copy(), B.copy())))
    A_eager = A.copy()
    jacobi_1d(A_eager, B.copy(), steps)
    for graph in (g, back):
        outs = gl.run(graph, dict((k, v.copy()) for k, v in inputs.items()))
        assert any(np.array_equal(o, A_eager) for o in outs)  # A's final value, written back by compile()
