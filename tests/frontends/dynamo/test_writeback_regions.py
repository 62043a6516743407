"""compile() writes only the written region of an argument into the caller's array.

Each kernel writes into part of an argument. Compiled, the caller's array must end bit for bit as eager code
leaves it, stay the same object, and every view the caller holds of it must see the change. With
``backend="interpret"`` the write-back is the region writes themselves (``frontends/dynamo/writeback.py``:
``Regions``), and no whole new array is built in the graph; with ``codegen`` (and ``auto``) the graph computes the
region in the caller's array itself (a donated argument) and nothing is copied back. Where the graph reads the
written array afterwards, the whole final value is written back (interpret) as before.
"""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from graph_lab.frontends.dynamo import cache_hit_fast_path, mutation
from graph_lab.frontends.dynamo.writeback import Regions

BACKENDS = ["auto", "codegen", "interpret"]


@pytest.fixture
def whole_copies(monkeypatch):
    """Counts the write-backs that copy a whole final value into the caller's array (``np.copyto``)."""
    copies = []
    original = mutation.copy_back

    def counting(array, final):
        if final is not array:
            copies.append(array.shape)
        original(array, final)
    monkeypatch.setattr(mutation, "copy_back", counting)
    monkeypatch.setattr(cache_hit_fast_path, "copy_back", counting)
    return copies


def segments(cf):
    return [seg for entry in cf.cache.values() for seg in (entry if isinstance(entry, list) else [entry])]


def write_backs(cf) -> list[str]:
    return [type(index).__name__ for seg in segments(cf) for _, index in seg.writebacks]


def run_both(fn, make_args, calls=3, **options):
    """``fn`` eagerly and compiled, on equal fresh arguments for each call ``k`` (``make_args(k)``): every result,
    every argument's final contents, identity, and a view the caller holds of the first argument compared."""
    cf = graph_lab.compile(fn, **options)
    for k in range(calls):
        want_args, got_args = make_args(k), make_args(k)
        want_view, got_view = want_args[0][1:], got_args[0][1:]
        target = got_args[0]
        want, got = fn(*want_args), cf(*got_args)
        assert type(got) is type(want)
        if isinstance(want, np.ndarray):
            assert want.tobytes() == got.tobytes()
        else:
            assert want == got or (want is None and got is None)
        for a, b in zip(want_args, got_args):
            if isinstance(a, np.ndarray):
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (fn.__name__, k, a, b)
        assert got_args[0] is target and got_view.tobytes() == want_view.tobytes()
        assert np.shares_memory(got_view, target)
    return cf


def slice_write(x, v):
    x[2:5] = v


def row_write(A, v):
    A[1] = v * 2.0


def augmented_slice(x, v):
    x[2:5] += v  # reads the argument before the first write: still a region


def self_overlapping(x, v):
    x[1:] = x[:-1] + v  # the value is computed from the old contents; then a second region
    x[0] = 7.0


def value_taken_before_the_write(x, v):
    a = x[0:3] * 1  # simplify makes this a view of x: it must not be read after the first write
    x[0:3] = v
    x[3:6] = a


def index_array_last_wins(x, v):
    x[np.array([1, 3, 1])] = np.array([v, 2.0 * v, 3.0 * v])


def accumulate_at(x, v):
    np.add.at(x, np.array([1, 1, 4]), v)


def masked_write(x, v):
    x[x > 3.0] = v


def column_of_a_matrix(A, v):
    A[:, 2] = v - A[:, 0]


ARGS = {
    slice_write: lambda k: (np.arange(8.0) + k, np.full(3, -1.5 * k)),
    row_write: lambda k: (np.arange(12.0).reshape(3, 4) * (k + 1), np.linspace(0, 1, 4) + k),
    augmented_slice: lambda k: (np.arange(8.0) - k, np.full(3, 0.25)),
    self_overlapping: lambda k: (np.arange(8.0) * (k + 1), 0.5),
    value_taken_before_the_write: lambda k: (np.arange(8.0) + k, -3.0),
    index_array_last_wins: lambda k: (np.arange(6.0), 1.5 + k),
    accumulate_at: lambda k: (np.arange(6.0), 0.5 * k + 1),
    masked_write: lambda k: (np.arange(8.0) + k, -1.0),
    column_of_a_matrix: lambda k: (np.arange(20.0).reshape(4, 5) + k, np.ones(4)),
}


@pytest.mark.parametrize("fn", list(ARGS), ids=[f.__name__ for f in ARGS])
def test_a_part_written_is_written_back_as_that_part(fn, whole_copies):
    cf = run_both(fn, ARGS[fn], backend="interpret")
    assert set(write_backs(cf)) == {"Regions"}, write_backs(cf)  # (a Python number that changes: a graph each)
    for seg in segments(cf):  # the whole new array is not built: the update chain was dead and removed
        assert not any(node.op in ("index_update", "where") for node in seg.graph.nodes), seg.graph
    assert whole_copies == []


IN_PLACE = [f for f in ARGS if f not in (value_taken_before_the_write, masked_write)]
"""The kernels codegen computes in the caller's array. (Not yet the two others: codegen does not update in place
when a value read from the old contents is a view, or for a ``where``; they copy the whole final value.)"""


@pytest.mark.parametrize("backend", ["auto", "codegen"])
@pytest.mark.parametrize("fn", IN_PLACE, ids=[f.__name__ for f in IN_PLACE])
def test_a_part_written_is_computed_in_the_callers_array(fn, backend, whole_copies):
    cf = run_both(fn, ARGS[fn], backend=backend)
    assert set(write_backs(cf)) == {"int"} and whole_copies == []  # the final value is the caller's array


def kv_write(cache, k, pos):
    cache[:, pos:pos + k.shape[1]] = k


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_growing_position_writes_its_slice(backend):
    cache_eager, cache = np.zeros((2, 12)), np.zeros((2, 12))
    view = cache[:, :6]  # the caller's view sees each write
    cf = graph_lab.compile(kv_write, backend=backend)
    for pos in range(0, 10, 2):
        k = np.full((2, 2), pos + 1.0)
        kv_write(cache_eager, k, pos)
        cf(cache, k, pos)
        assert cache.tobytes() == cache_eager.tobytes()
    assert view.tobytes() == cache_eager[:, :6].tobytes()
    assert cf.captures <= 2  # pos becomes an operand after one change
    assert set(write_backs(cf)) == ({"Regions"} if backend == "interpret" else {"int"})


def symbolic_bounds(x, v):
    n = x.shape[0]
    x[1:n - 1] = v[1:n - 1] * 2.0
    x[n - 1] = 0.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_symbolic_slice_bounds_are_evaluated_for_each_call(backend):
    cf = graph_lab.compile(symbolic_bounds, backend=backend, dynamic=True)
    for n in (6, 9, 12, 7):
        x, y, v = np.arange(float(n)), np.arange(float(n)), np.linspace(-1, 1, n)
        symbolic_bounds(x, v)
        view = y[2:]
        cf(y, v)
        assert y.tobytes() == x.tobytes() and view.tobytes() == x[2:].tobytes()
    assert cf.captures == 1
    if backend == "interpret":
        (_, regions), = segments(cf)[0].writebacks
        assert type(regions) is Regions and [name for name, _, _ in regions.symbols] == ["s0"]


def read_after_write(x, v):
    x[2:5] = v
    return x.sum()  # the graph reads the written array: its whole final value is needed


def two_rows_the_second_reads_the_first(A):
    A[1] = A[0] * 2.0
    A[2] = A[1] + 1.0  # reads the array the first write made


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_written_array_the_graph_reads_again_is_written_back_whole(backend):
    cf = run_both(read_after_write, lambda k: (np.arange(8.0) * k, np.ones(3)), backend=backend)
    assert write_backs(cf) == ["int"]
    cf = run_both(two_rows_the_second_reads_the_first, lambda k: (np.arange(12.0).reshape(4, 3) + k,),
                  backend=backend)
    assert write_backs(cf) == ["int"]


def two_arguments(x, y):
    x[0:2] = y[2:4] * 2.0
    return y.sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_aliasing_arguments_behave_as_in_eager_code(backend):
    cf = graph_lab.compile(two_arguments, backend=backend)
    for make in (lambda: (lambda a: (a, a))(np.arange(6.0)),                  # f(x, x)
                 lambda: (lambda a: (a[1:], a[:-1]))(np.arange(7.0)),         # overlapping views
                 lambda: (np.arange(6.0), np.arange(6.0) + 10)):              # disjoint arrays
        want_args, got_args = make(), make()
        want_base = want_args[0].base if want_args[0].base is not None else want_args[0]
        got_base = got_args[0].base if got_args[0].base is not None else got_args[0]
        assert two_arguments(*want_args) == cf(*got_args)
        assert want_base.tobytes() == got_base.tobytes()
        assert all(a.tobytes() == b.tobytes() for a, b in zip(want_args, got_args))


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_argument_that_is_a_view_writes_into_the_callers_base(backend):
    cf = graph_lab.compile(slice_write, backend=backend)
    for k in range(3):
        base_eager, base = np.arange(30.0).reshape(6, 5), np.arange(30.0).reshape(6, 5)
        slice_write(base_eager[:, 1], np.full(3, k + 0.5))  # a strided view of the caller's matrix
        cf(base[:, 1], np.full(3, k + 0.5))
        assert base.tobytes() == base_eager.tobytes()
    assert write_backs(cf) == (["Regions"] if backend == "interpret" else ["int"])


def test_regions_write_is_numpy_assignment():
    """The write-back's own statements on a plain array: the same as writing eagerly."""
    from graph_lab.frontends.dynamo.writeback import RegionWrite
    from graph_lab.ops.indexing import Slice, Slot
    x = np.arange(6.0)
    mask = np.arange(6.0) > 3.5  # (computed by the graph before any write)
    Regions((RegionWrite("set", (("out", 0),), (Slice(1, 3, None),)),
             RegionWrite("accumulate", (("const", 1.0), ("out", 1)), (Slot(2),), "add"),
             RegionWrite("masked", (("out", 2), ("const", -1.0))))).write(
        x, [np.array([9.0, 8.0]), np.array([0, 0, 5]), mask])
    expected = np.arange(6.0)
    expected[1:3] = [9.0, 8.0]
    np.add.at(expected, [0, 0, 5], 1.0)
    expected[mask] = -1.0
    assert x.tobytes() == expected.tobytes()
