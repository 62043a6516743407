"""``np.roll`` read inside C programs (backends/roll_reads.py): every shift and axis form against eager NumPy, bit
for bit, and a check that the program really read the roll in place (no copy made by NumPy first).

Each function is captured by compile()'s frontend and compiled with every C program the fused backend can make;
its results (and the final contents of the arrays it writes) are compared with eager NumPy's on two inputs."""

import numpy as np
import pytest

import graph_lab as gl
from graph_lab.backends.roll_reads import RolledLayout, boxes, roll_shifts

from tests.support.backend_support import ALWAYS, needs_compiler
from tests.support.captured_runs import assert_like_eager, compiled_segment


def _rolled_reads(cg) -> int:
    """How many rolls the graph's C programs read in place."""
    return sum(isinstance(layout, RolledLayout) for st in cg.stencils for s in getattr(st, "statements", ())
               for _, layout in s.leaves.values())


def check_against_eager(fn, *args) -> int:
    """``fn(*args)`` compiled with C programs against eager NumPy on two inputs of the same shapes and dtypes;
    returns how many rolls its programs read in place."""
    seg, cg = compiled_segment(fn, args, ALWAYS)
    for seed in (0, 1):
        rng = np.random.default_rng(seed)
        data = [rng.standard_normal(a.shape).astype(a.dtype) if isinstance(a, np.ndarray) else a for a in args]
        assert_like_eager(fn, seg, cg, data)
    return _rolled_reads(cg)


# --- every form of shift and axis

FORMS = [  # (shape, shift, axis)
    ((40, 50), 1, 0), ((40, 50), -1, 0), ((40, 50), 1, 1), ((40, 50), -1, -1), ((40, 50), 3, 1),
    ((40, 50), 53, 1), ((40, 50), -97, 0), ((40, 50), 50, 1), ((40, 50), 0, 1),
    ((40, 50), (1, -2), (0, 1)), ((40, 50), (2, 3), (1, 1)), ((40, 50), (5, -5), (0, 0)), ((40, 50), 2, (0, 1)),
    ((2000,), 7, None), ((2000,), -3, 0), ((2000,), 2001, None),
    ((10, 12, 14), 1, 2), ((10, 12, 14), (-1, 4, 15), (0, 1, 2)), ((10, 12, 14), -3, 1),
]


@needs_compiler
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, shift, axis", FORMS)
def test_roll_forms_against_numpy(shape, shift, axis, dtype):
    def f(u, v):
        return np.roll(u, shift, axis) * 0.5 + v - u

    u = np.ones(shape, dtype)
    index = np.arange(u.size).reshape(shape)
    moves = not np.array_equal(np.roll(index, shift, axis), index)  # (a whole turn is a copy: left to NumPy)
    assert check_against_eager(f, u, u.copy()) == int(moves)


@needs_compiler
def test_roll_of_a_flattened_matrix_is_left_to_numpy():
    """``axis=None`` on 2-D rolls the flattened array: not a box of views, so NumPy computes it, correctly."""
    def f(u):
        return np.roll(u, 3) + u * 2.0

    assert check_against_eager(f, np.ones((30, 40))) == 0


def diffusion(u, steps):
    for t in range(steps):
        lap = np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1) + np.roll(u, -1, axis=1) - 4 * u
        u = u + 0.1 * lap
    return u, np.diff(u, axis=0), np.diff(u, axis=1)


@needs_compiler
def test_periodic_diffusion_time_loop_is_one_program():
    assert check_against_eager(diffusion, np.ones((60, 70)), 6) == 24


@needs_compiler
def test_roll_of_a_strided_view():
    def f(u):
        w = u[1:-1, ::2]
        return np.roll(w, 2, axis=1) + np.roll(w, -1, axis=0) * w

    assert check_against_eager(f, np.ones((50, 61))) == 2


@needs_compiler
def test_update_in_place_reading_a_roll_of_itself():
    """The right-hand side reads the written array at other elements: NumPy reads it all before the write."""
    def f(a, b):
        a[:, :] = np.roll(a, 1, axis=0) * 0.5 + b
        a[1:-1] = np.roll(a[1:-1], -2, axis=1) - a[1:-1]
        return a * 1.0

    assert check_against_eager(f, np.ones((40, 40)), np.ones((40, 40))) == 2


@needs_compiler
def test_roll_read_twice_and_outside():
    """A roll that something other than one statement reads is NumPy's array, read as a whole."""
    def f(u):
        r = np.roll(u, 1, axis=1)
        return r + u * 3.0, r * 2.0, r

    check_against_eager(f, np.ones((40, 60)))


# --- the cut itself, by hand


def test_roll_shifts_follow_numpy():
    class Node:
        attrs = {}

    cases = [((10,), 3, None, (3,)), ((10,), -3, 0, (7,)), ((4, 5), (1, 7), (0, 1), (1, 2)),
             ((4, 5), (2, 3), (1, 1), (0, 0)), ((4, 5), 6, (0, 1), (2, 1)), ((4, 5), 3, None, None)]
    for shape, shift, axis, expected in cases:
        Node.attrs = {"shift": shift, "axis": axis}
        assert roll_shifts(Node, shape) == expected, (shape, shift, axis)
        if expected is not None:  # the shifted element of every position, as NumPy places it
            a = np.arange(np.prod(shape)).reshape(shape)
            rolled = np.roll(a, shift, axis)
            index = np.indices(shape)
            source = tuple((i - s) % n for i, s, n in zip(index, expected, shape))
            np.testing.assert_array_equal(rolled, a[source])


def test_boxes_cover_the_nest_and_read_the_rolled_elements():
    shape = (6, 7)
    a = np.arange(42.0).reshape(shape)
    rolled = RolledLayout(0, (7, 1), (2, 5))
    plain = (0, (7, 1))
    seen = np.zeros(shape, int)
    for box, (r, p) in boxes(shape, [rolled, plain]):
        corner = np.unravel_index(p[0], shape)
        for i in np.ndindex(box):
            pos = tuple(c + k for c, k in zip(corner, i))
            seen[pos] += 1
            flat = r[0] + sum(k * s for k, s in zip(i, r[1]))
            assert a.flat[flat] == np.roll(a, (2, 5), (0, 1))[pos]
    assert (seen == 1).all()
    assert boxes(shape, [plain]) == [(shape, [plain])]


@needs_compiler
def test_long_time_loop_as_a_region_reads_rolls_in_its_body():
    """compile() keeps a long loop as a ``fori_loop`` region; its body's program reads the rolls in place."""
    u = np.random.default_rng(3).random((100, 100))  # (large enough for any calibration to fuse)
    cf = gl.compile(diffusion, backend="fused")
    for steps in (120, 131):
        for got, want in zip(cf(u.copy(), steps), diffusion(u.copy(), steps)):
            np.testing.assert_array_equal(got, want, strict=True)
    report = str(gl.explain(cf)(u.copy(), 120))
    assert "fori_loop" in report and "rolls read in place" in report, report
