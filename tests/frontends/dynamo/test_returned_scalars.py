"""``return int(t)`` of a 0-d tensor in the compiled function's own frame: one graph, no break, the number made
after the graph and its writes (``dynamo/returned_scalars.py``); every other conversion still breaks. Each result
against eager."""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab


def life(grid, steps):
    for _ in range(steps):
        n = (grid[:-2, :-2] + grid[:-2, 1:-1] + grid[:-2, 2:] + grid[1:-1, :-2] + grid[1:-1, 2:]
             + grid[2:, :-2] + grid[2:, 1:-1] + grid[2:, 2:])
        grid[1:-1, 1:-1] = ((n == 3) | ((grid[1:-1, 1:-1] == 1) & (n == 2))).astype(np.int8)
    return int(grid.sum())


def start(seed):
    return (np.random.default_rng(seed).random((12, 12)) < 0.3).astype(np.int8)


@pytest.mark.parametrize("backend", ["codegen", "auto", "interpret"])
def test_a_kernel_returning_int_of_its_sum_is_one_graph(backend):
    cf = graph_lab.compile(life, backend=backend)
    for seed in range(3):
        mine, eager = start(seed), start(seed)
        got, want = cf(mine, 4), life(eager, 4)
        assert type(got) is int and got == want
        assert np.array_equal(mine, eager)  # the writes are in the caller's array before the number is made
    assert cf.captures == 1 and not cf.recompile_log
    report = graph_lab.explain(life)(start(0), 4)
    assert report.graph_count == 1 and report.graph_break_count == 0
    assert "convert" in cf.fast_path_source or "return K" in cf.fast_path_source


def as_float(x):
    return float((x * 2).mean())


def as_bool(x):
    return bool((x > 0).any())


def as_complex(x):
    return complex(x.sum() * 1j)


@pytest.mark.parametrize("fn", [as_float, as_bool, as_complex])
def test_each_conversion_returned_at_once(fn):
    cf = graph_lab.compile(fn)
    for x in (np.arange(-2.0, 2.0), np.full(4, -1.5), np.array([np.nan, 1.0, 2.0, -0.0])):
        got, want = cf(x), fn(x)
        assert type(got) is type(want) and (got == want or got != got and want != want)
    assert cf.captures == 1


def count(x):
    return int(x.sum())


def uses_the_number(x):
    if count(x) > 2:  # an inlined function's return: the caller branches on the number, so it breaks
        return x * 2
    return x


def formats_it(x):
    n = int(x.sum())
    return f"{n} cells"


def returns_in_finally(x, log):
    try:
        return int(x.sum())
    finally:
        log.append("done")


@pytest.mark.parametrize("fn, args", [(uses_the_number, (np.arange(4.0),)), (uses_the_number, (np.zeros(4),)),
                                      (formats_it, (np.arange(5),)), (returns_in_finally, (np.arange(3), []))])
def test_every_other_conversion_still_breaks_and_gives_eagers_result(fn, args):
    cf = graph_lab.compile(fn)
    got, want = cf(*args), fn(*[a.copy() if isinstance(a, np.ndarray) else list(a) for a in args])
    if isinstance(want, np.ndarray):
        assert np.array_equal(got, want)
    else:
        assert got == want
    assert any(seg.end == "break" for segs in cf.cache.values() for seg in segs)


def test_int_of_a_one_element_array_with_dimensions_still_breaks():
    """NumPy refuses (2.4; warned before) to convert an array of one element with ndim > 0: whatever it does is
    eager's, at the user's line, at the break."""
    def f(x):
        return int(x[:1])

    x = np.arange(3)
    try:
        want = f(x)
    except TypeError as e:
        with pytest.raises(TypeError, match=str(e)):
            graph_lab.compile(f)(x)
    else:
        assert graph_lab.compile(f)(x) == want


def test_a_global_that_shadows_int_later_is_called_as_python_calls_it():
    namespace = {"np": np}
    exec("def total(x):\n    return int(x.sum())\n", namespace)
    total = namespace["total"]
    cf = graph_lab.compile(total)
    assert cf(np.arange(4)) == 6
    namespace["int"] = lambda v: "shadowed"  # the function's globals now name another int
    assert cf(np.arange(4)) == total(np.arange(4)) == "shadowed"
