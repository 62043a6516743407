"""``x += v`` into a caller's small array (< 32 KiB) is computed in that array, as eager code computes it; an
update that cannot write into its base (a folded ``zeros_like``) copies it and writes by subscript; an output
copy a pass adds is made where its value is, so it does not keep an update from writing in place.

The chain of writes to an argument's final value may hold ufunc lines (``np.add(v0, v3, out=v0)``) beside
updates and masked writes (``inplace.chain_operands``): the write-back then has nothing to copy. Each case is
checked against eager NumPy over several calls: the results, the arguments' final contents, the identity of the
arrays and the views the caller holds, and arguments that alias or are not C-ordered.
"""

import numpy as np
import pytest

import graph_lab as gl
from tests.backends.test_masked_and_window_writes import particles as wrap

BACKENDS = ["codegen", "auto"]


def add_then_scale(x, v):
    x += v
    x *= 2.0


def old_value_read_later(x, v):
    before = x * 1.0
    x += v
    return before + x


def update_then_ufunc(x, v):
    x[0] = v[1]
    x -= v
    return x.sum()


def write_back_then_read(x, v):
    x += v
    y = np.exp(x)
    x *= 0.5
    return y


def wave(u_prev, u, c):
    for _ in range(3):
        u_next = np.zeros_like(u)  # (folded into one constant by the exact passes)
        u_next[1:-1] = 2.0 * u[1:-1] - u_prev[1:-1] + c * c * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u_prev[:] = u
        u[:] = u_next


def view_kept_by_simplify(x, v):
    y = x[0:3] * 1  # (simplify: a view of x, copied as the output it is)
    x += v
    return y


def view_read_after_the_write(x, v):
    old = x[0:2]
    x[1:3] = v[:2]
    return old + x[2:4]


CASES = {
    add_then_scale: lambda rng: (rng.random(8), rng.random(8)),
    wrap: lambda rng: (rng.random((20, 3)) * 10.0, rng.standard_normal((20, 3)), 10.0, 0.5),
    old_value_read_later: lambda rng: (rng.random((4, 5)), rng.random(5)),
    update_then_ufunc: lambda rng: (rng.random(6), rng.random(6)),
    write_back_then_read: lambda rng: (rng.random(10), rng.random(10)),
    wave: lambda rng: (rng.random(12), rng.random(12), 0.5),
    view_kept_by_simplify: lambda rng: (rng.random(9), rng.random(9)),
    view_read_after_the_write: lambda rng: (rng.random(6), rng.random(6)),
}


def _run_against_eager(fn, make, backend, layout=lambda a: a, calls=3):
    cf = gl.compile(fn, backend=backend)
    cf.ways.pin("graphs", "the test checks the graphs")
    for seed in range(calls):
        base = make(np.random.default_rng(seed))
        args = [layout(a.copy()) if isinstance(a, np.ndarray) else a for a in base]
        eager_args = [layout(a.copy()) if isinstance(a, np.ndarray) else a for a in base]
        ids = [id(a) for a in args]
        views = [a[1:] for a in args if isinstance(a, np.ndarray)]
        expected, got = fn(*eager_args), cf(*args)
        assert [id(a) for a in args] == ids
        for a, e in zip(args, eager_args):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, e, strict=True)
        for view, e in zip(views, [a for a in eager_args if isinstance(a, np.ndarray)]):
            np.testing.assert_array_equal(view, e[1:], strict=True)
        if expected is not None:
            np.testing.assert_array_equal(got, expected, strict=True)
    return cf


def _sources(cf) -> str:
    return "\n".join(e.segment.runner.__self__.source for e in cf.last_events)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", list(CASES))
def test_small_argument_updates_match_eager(fn, backend):
    _run_against_eager(fn, CASES[fn], backend)


@pytest.mark.parametrize("fn", list(CASES))
def test_non_c_ordered_arguments_match_eager(fn):
    # (a transposed copy: the graph's plain variant runs, and where_into falls back to a new array)
    def fortran(a):
        return np.asfortranarray(a) if a.ndim > 1 else a[::-1].copy()[::-1]
    _run_against_eager(fn, CASES[fn], "codegen", layout=fortran)


def test_augmented_writes_into_a_small_argument_need_no_copy_back():
    cf = _run_against_eager(add_then_scale, CASES[add_then_scale], "codegen")
    source = _sources(cf)
    assert "np.add(v0, v1, out=v0)" in source and "out=v0)" in source.split("np.add")[1]
    assert "2 writes in place" in cf.last_events[0].segment.runner.__self__.how_it_runs()
    x, v = np.ones(8), np.arange(8.0)
    before = x.__array_interface__["data"][0]
    cf(x, v)
    assert x.__array_interface__["data"][0] == before
    np.testing.assert_array_equal(x, (1.0 + np.arange(8.0)) * 2.0)


def test_masked_wrap_starts_in_the_callers_array():
    cf = _run_against_eager(wrap, CASES[wrap], "codegen")
    source = _sources(cf)
    assert "np.add(v0, v3, out=v0)" in source
    assert source.count("where_into(") == 8


def test_an_old_value_read_later_is_not_overwritten():
    cf = _run_against_eager(old_value_read_later, CASES[old_value_read_later], "codegen")
    assert "out=v0" not in _sources(cf)  # (``before`` is read after the write: x * 1.0 is not folded away)


def test_aliasing_arguments_give_eagers_result():
    def f(x, y):
        x += y
        y *= 2.0
        return x + y
    cf = gl.compile(f, backend="codegen")
    cf.ways.pin("graphs", "the test checks the graphs")
    for seed in range(3):
        rng = np.random.default_rng(seed)
        a = rng.random(6)
        e = a.copy()
        got, expected = cf(a, a), f(e, e)
        np.testing.assert_array_equal(a, e, strict=True)
        np.testing.assert_array_equal(got, expected, strict=True)
        b, c = rng.random(6), rng.random(6)
        eb, ec = b.copy(), c.copy()
        got, expected = cf(b, c), f(eb, ec)
        np.testing.assert_array_equal(b, eb, strict=True)
        np.testing.assert_array_equal(c, ec, strict=True)
        np.testing.assert_array_equal(got, expected, strict=True)
        w = rng.random(7)
        ew = w.copy()
        got, expected = cf(w[1:], w[:-1]), f(ew[1:], ew[:-1])  # overlapping windows
        np.testing.assert_array_equal(w, ew, strict=True)
        np.testing.assert_array_equal(got, expected, strict=True)


def test_an_update_of_a_folded_zeros_like_copies_it_and_writes_by_subscript():
    cf = _run_against_eager(wave, CASES[wave], "codegen")
    source = _sources(cf)
    assert source.count(":= np.array(v2, copy=True))[1:-1] = ") == 3 and "impl_index_update" not in source


def test_an_output_copy_is_made_before_the_update_of_its_base():
    cf = _run_against_eager(view_kept_by_simplify, CASES[view_kept_by_simplify], "codegen")
    lines = [line.split("#")[0].strip() for line in _sources(cf).splitlines()]
    copy = next(i for i, line in enumerate(lines) if "impl_copy(v2" in line)
    add = next(i for i, line in enumerate(lines) if line.startswith("v") and "np.add(v0, v1, out=v0)" in line)
    assert copy < add
