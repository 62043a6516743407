"""Running sums and products in C programs (backends/scan_statements.py): every axis, dtype and operand layout
against eager NumPy, bit for bit, and a check that the program computed the scan (not NumPy).

Each function is captured by compile()'s frontend and compiled with every C program the fused backend can make;
its results and the final contents of its arguments are compared with eager NumPy's on two inputs, one of them
with NaN, infinities and signed zeros."""

import numpy as np
import pytest

from graph_lab.backends.scan_statements import SCAN_OPS

from tests.support.backend_support import ALWAYS, needs_compiler
from tests.support.captured_runs import assert_like_eager, compiled_segment

pytestmark = needs_compiler


def _scans(cg) -> int:
    return sum(s.node.op in SCAN_OPS for st in cg.stencils for s in getattr(st, "statements", ()))


def _data(args, seed):
    rng = np.random.default_rng(seed)
    data = []
    for a in args:
        if not isinstance(a, np.ndarray):
            data.append(a)
            continue
        d = (rng.standard_normal(a.shape) * 10).astype(a.dtype)
        if seed and d.dtype.kind == "f":
            flat = d.reshape(-1)
            flat[rng.integers(0, flat.size, 6)] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e300 if
                                                   d.dtype == np.float64 else 3e38]
        data.append(d)
    return data


def check_against_eager(fn, *args) -> int:
    """``fn(*args)`` compiled with C programs against eager NumPy; returns how many scans its programs compute."""
    seg, cg = compiled_segment(fn, args, ALWAYS)
    for seed in (0, 1):
        assert_like_eager(fn, seg, cg, _data(args, seed))
    return _scans(cg)


CASES = [((60, 70), 1), ((60, 70), -1), ((60, 70), 0), ((7, 9, 30), 2), ((7, 9, 30), 1), ((7, 9, 30), 0),
         ((5000,), 0), ((5000,), None), ((13, 3, 101), -1)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape, axis", CASES)
@pytest.mark.parametrize("scan", [np.cumsum, np.cumprod])
def test_scan_then_update_and_arithmetic(scan, shape, axis, dtype):
    """The moving average's form: a scan, an update of the scanned array reading itself, and arithmetic."""
    def f(x):
        c = scan(x, axis=axis)
        c[2:] = c[2:] - c[:-2]
        return c[1:] * 0.5

    assert check_against_eager(f, np.ones(shape, dtype)) == 1


def test_scan_of_a_strided_view():
    def f(x):
        c = np.cumsum(x[1:, ::-2], axis=1)
        c[:, 3:] = c[:, 3:] - c[:, :-3]
        return c / 3

    assert check_against_eager(f, np.ones((40, 81))) == 1


def test_moving_average():
    def moving_average(x, w):
        c = np.cumsum(x, axis=-1)
        c[:, w:] = c[:, w:] - c[:, :-w]
        return c[:, w - 1:] / w

    assert check_against_eager(moving_average, np.ones((50, 200)), 8) == 1


def test_scans_left_to_numpy():
    """Integer scans (NumPy sums int32 in int64), a flattened 2-D scan, and a scan something else reads too."""
    def ints(x):
        c = np.cumsum(x, axis=1)
        c[:, 1:] = c[:, 1:] - c[:, :-1]
        return c

    def flat(x):
        c = np.cumsum(x)
        c[1:] = c[1:] - c[:-1]
        return c

    def read_twice(x):
        c = np.cumsum(x, axis=0)
        total = c.sum()
        c[1:] = c[1:] * 2.0 - c[:-1]
        return c, total

    assert check_against_eager(ints, np.ones((30, 40), np.int32)) == 0
    assert check_against_eager(flat, np.ones((30, 40))) == 0
    assert check_against_eager(read_twice, np.ones((30, 40))) == 0
