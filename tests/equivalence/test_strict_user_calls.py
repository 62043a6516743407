"""What a caller of ``graph_lab.compile(fn)`` sees, compared with eager NumPy strictly: the type of each result
(a NumPy scalar, a 0-d array, a Python number), whether it is writeable, and which results are (views of) the
arguments. Each case below was found by the fuzzer's strict ways (``testing/strict.py``, ``ways.USER_WAYS``),
reduced, and is kept as a regression test; the last tests are the strict comparison itself and CI's sample.
"""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from graph_lab import F
from graph_lab.equivalence.compare import compare
from graph_lab.ops.linalg import einsum_is_view
from graph_lab.testing.differential import differential
from graph_lab.testing.generator import Options, generate
from graph_lab.testing.strict import aliasing_difference, aliasing_of, strict_difference
from graph_lab.testing.ways import USER_WAYS

BACKENDS = ["auto", "codegen", "interpret"]


def eager_and_compiled(fn, *args, backend="auto", calls=2):
    """``fn`` eagerly and compiled on fresh copies of ``args``, ``calls`` times: the last (eager, compiled)
    results and arguments."""
    compiled = graph_lab.compile(fn, backend=backend)
    for _ in range(calls):
        want_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        want, got = fn(*want_args), compiled(*got_args)
    return want, got, want_args, got_args


def assert_same_to_the_caller(fn, *args, backend="auto"):
    want, got, want_args, got_args = eager_and_compiled(fn, *args, backend=backend)
    assert strict_difference(want, got) is None, strict_difference(want, got)
    assert aliasing_difference(aliasing_of(want, want_args), aliasing_of(got, got_args)) is None
    assert compare(want_args, got_args, exact=True) is None
    return want, got, got_args


# --- a NumPy scalar stays a NumPy scalar

def folded_sum(x):
    return np.full_like(x, 2.0, dtype=np.float32).sum()  # folded to a constant, which was copied as a 0-d array


def folded_average(x):
    return np.average(np.full_like(x, 2.0, dtype=np.float32))


def zero_trip_while_loop(x):
    # x * 1.0 of a 0-d array is a NumPy scalar; simplify made it x itself (a 0-d array) and the loop ran 0 times
    return F.while_loop(lambda c: np.abs(c).max() > 1.0, lambda c: c * 0.5, x * 1.0)


def astype_of_scalar(x):
    return np.astype(np.square(x), np.int32)  # np.square of a 0-d array is a NumPy scalar; astype keeps it one


def method_copy_of_scalar(x):
    return (x.sum() * 2).copy()  # np.float64.copy() is an np.float64


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, x", [
    (folded_sum, np.ones((5, 1), np.float32)),
    (folded_average, np.ones((5, 1), np.float32)),
    (zero_trip_while_loop, np.array(0.5)),
    (zero_trip_while_loop, np.array(5.0)),
    (astype_of_scalar, np.array(1.5, np.float32)),
    (method_copy_of_scalar, np.arange(3.0)),
], ids=["folded-sum", "folded-average", "while-0-trips", "while-3-trips", "astype", "copy-method"])
def test_a_numpy_scalar_result_stays_a_numpy_scalar(fn, x, backend):
    want, got, _ = assert_same_to_the_caller(fn, x, backend=backend)
    assert isinstance(want, np.generic) and type(got) is type(want)


def test_copy_op_keeps_a_scalar_where_numpy_does():
    from graph_lab.ops.elementwise import copy
    s = np.float32(1.5)
    assert type(copy(s, contiguous=True)) is np.float32      # s.copy()
    assert type(copy(s)) is np.ndarray                       # np.copy(s) is a 0-d array in NumPy too
    assert type(copy(s, keep_scalar=True)) is np.float32     # the passes' copies of outputs
    assert copy(2.5, keep_scalar=True) == 2.5


# --- writeable exactly when eager's result is

def broadcast_after_a_break(x0, x2):
    h1 = np.inner(x2, x2)
    if (x0 > 0).any():  # a graph break: the broadcast is rebuilt after it
        return np.broadcast_to(h1, (2,))
    return -np.broadcast_to(h1, (2,))


def diagonal_plus_integer_zero(x):
    return x.diagonal() + 0  # "x + 0 -> x" left the read-only diagonal view as the result


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_read_only_broadcast_stays_read_only_after_a_break(backend):
    want, got, _ = assert_same_to_the_caller(broadcast_after_a_break, np.ones((3, 2)), np.arange(3.0), backend=backend)
    assert not got.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        got[0] = 1.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_simplified_result_is_a_new_writeable_array(backend):
    want, got, _ = assert_same_to_the_caller(diagonal_plus_integer_zero, np.arange(12, dtype=np.int32).reshape(4, 3),
                                          backend=backend)
    got[0] = 99  # eager's result is a new array: writing into it is allowed and changes nothing else
    assert got.flags.writeable


# --- a view of an argument stays a view

def reshape_after_write_through_transpose(x):
    h = x.T
    h[0] = 0.0
    return (x.reshape(6, -1),)


def einsum_transpose_written(x):
    h = np.einsum("ij->ji", x)
    h[0, 1] = 5.0  # NumPy's einsum returned a view: the write reaches x
    return x


def einsum_transpose_returned(x):
    return np.einsum("ij->ji", x)


def einsum_diagonal_returned(x):
    return np.einsum("ii->i", x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, shape", [
    (reshape_after_write_through_transpose, (5, 3, 4)),
    (einsum_transpose_written, (2, 3)),
    (einsum_transpose_returned, (2, 3)),
    (einsum_diagonal_returned, (3, 3)),
], ids=["reshape-after-write", "einsum-written", "einsum-returned", "einsum-diagonal"])
def test_a_view_of_an_argument_stays_a_view(fn, shape, backend):
    x = np.arange(float(np.prod(shape))).reshape(shape)
    want, got, got_args = assert_same_to_the_caller(fn, x, backend=backend)
    got_array = got[0] if isinstance(got, tuple) else got
    assert np.shares_memory(got_array, got_args[0])  # the caller's array, or a view of it, as eager's


def test_a_write_through_an_einsum_diagonal_is_refused_not_lost():
    def f(x):
        d = np.einsum("ii->i", x)  # a writeable view in NumPy, which no graph op is
        d[0] = 7.0
        return x

    x, y = np.zeros((3, 3)), np.zeros((3, 3))
    got = graph_lab.compile(f)(y)
    assert got is y and np.array_equal(f(x), y) and y[0, 0] == 7.0  # the write ran as Python: nothing lost
    with pytest.raises(graph_lab.GraphBreak, match="one-operand np.einsum"):
        graph_lab.compile(f, fullgraph=True)(np.zeros((3, 3)))


@pytest.mark.parametrize("subscripts, view", [("ij->ji", True), ("ij", True), ("ji", True), ("ii->i", True),
                                              ("...->...", True), ("ij->i", False), ("ii", False),
                                              ("ij,jk->ik", False), ("...i->...", False)])
def test_einsum_is_view_agrees_with_numpy(subscripts, view):
    operands = [np.ones((3, 3))] * (subscripts.split("->")[0].count(",") + 1)
    assert einsum_is_view(subscripts) is view
    assert np.shares_memory(np.einsum(subscripts, *operands), operands[0]) is view


# --- the strict comparison itself

@pytest.mark.parametrize("want, got, kind", [
    (np.float64(1.0), np.array(1.0), "type"),
    (1.0, np.float64(1.0), "type"),
    (np.int64(2), 2, "type"),
    ((np.ones(2),), [np.ones(2)], "type"),
    (np.float32(1.0), np.float32(1.0000001), "bits"),
    (np.zeros(2), np.zeros(2, np.float32), "dtype"),
])
def test_strict_difference_sees_what_a_caller_sees(want, got, kind):
    found = strict_difference(want, got)
    assert found is not None and found.kind == kind, found


def test_aliasing_of_says_which_results_are_the_arguments():
    x = np.arange(4.0)
    assert aliasing_of((x, x[1:], x + 1), [x]) == [("output[0]", "is argument 0"),
                                                     ("output[1]", "shares memory with argument 0"),
                                                     ("output[1]", "shares memory with output[0]")]
    found = aliasing_difference(aliasing_of(x[1:], [x]), aliasing_of(x[1:].copy(), [x]))
    assert found is not None and found.kind == "aliasing"
    read_only = np.broadcast_to(x, (2, 4))
    assert strict_difference(read_only, np.broadcast_to(x, (2, 4)).copy()).kind == "flags"


def test_ci_sample_of_the_strict_ways_finds_no_difference():
    """CI's sample: 60 random programs (a third write in place, some with aliasing arguments) through
    ``graph_lab.compile`` called as a user calls it; the large run is in docs/equivalence.md."""
    outcomes = []
    for seed in range(7000, 7060):
        options = Options(mutation=True) if seed % 3 == 0 else Options()
        verdict = differential(generate(seed, options), USER_WAYS)
        outcomes += verdict.outcomes
    failures = [o for o in outcomes if o.status in ("mismatch", "crash")]
    assert not failures, [f"{o.way}: {o.detail}" for o in failures[:3]]
    assert sum(o.status == "ok" for o in outcomes) >= 100
