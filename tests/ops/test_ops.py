"""OpInfo-style op tests: one table (``opinfo.SAMPLES``) drives them.

For every sample, the function written for graph_lab is traced, the graph is run, and the result must equal
the eager NumPy reference bit for bit: same values (NaN where NumPy has NaN, -0.0 where NumPy has -0.0), same
dtype, same shape. The graph's own output types (the ops' abstract evaluation) must agree with what NumPy
returned, the graph must verify, and the same function called eagerly on arrays must agree too.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from graph_lab import F, LazyRunner, Op, TraceError, run, trace
from graph_lab.ops import SOURCE_OPS
from tests.support.opinfo import SAMPLES, Sample
from tests.support.opinfo_coverage import FOLDED_WHEN_STATIC


def leaves(result) -> list[np.ndarray]:
    """A function's result as a list of arrays (a tuple or list of outputs is flattened one level)."""
    if isinstance(result, (tuple, list)):
        return [np.asarray(r) for r in result]
    return [np.asarray(result)]


def assert_same(actual: np.ndarray, expected: np.ndarray, what: str) -> None:
    """Equal bit for bit: dtype, shape, values, NaN positions and the sign of zeros."""
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, NumPy gives {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, NumPy gives {expected.shape}"
    np.testing.assert_array_equal(actual, expected, err_msg=what, strict=True)
    if expected.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(actual), np.signbit(expected), err_msg=f"{what}: sign of zero")


def trace_sample(sample: Sample):
    """Trace ``sample.fn`` with one input per array, named as ``fn``'s parameters (x0, x1... for ``*xs``).
    Returns the graph and the input names in order."""
    names = [p.name for p in inspect.signature(sample.fn).parameters.values()
             if p.kind == p.POSITIONAL_OR_KEYWORD][:len(sample.inputs)]
    if len(names) < len(sample.inputs):
        names = [f"x{i}" for i in range(len(sample.inputs))]
    shapes = {name: (x.shape, x.dtype) for name, x in zip(names, sample.inputs)}
    return trace(sample.fn, shapes), names


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf inputs warn in NumPy, as they should
@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id for s in SAMPLES])
def test_op_sample(sample: Sample):
    def fresh_inputs():  # each run gets its own copies, so no run can see another's writes
        return [x.copy() for x in sample.inputs]

    with np.errstate(all="ignore"):
        expected = leaves(sample.ref(*fresh_inputs()))
        g, names = trace_sample(sample)
        graph_results = run(g, dict(zip(names, fresh_inputs())))
        eager = leaves(sample.fn(*fresh_inputs()))

    g.verify()
    if sample.op in FOLDED_WHEN_STATIC:  # NumPy ran it at capture: a constant (a node with symbolic sizes)
        assert any(node.op == "const" and node.output.type.ndim for node in g.nodes), str(g)
    else:
        assert sample.op in {node.op for node in g.nodes}, f"the graph has no {sample.op} node:\n{g}"
    assert len(g.outputs) == len(expected), f"{len(g.outputs)} graph outputs, NumPy gives {len(expected)}"
    for i, (value, result, want) in enumerate(zip(g.outputs, graph_results, expected)):
        # the abstract evaluation (the op's type rule) predicted what NumPy computes
        assert (value.type.dtype, value.type.shape) == (want.dtype, want.shape), \
            f"output {i}: the graph says {value.type}, NumPy gives {want.dtype}{list(want.shape)}"
        assert_same(result, want, f"output {i} of run(graph)")
    assert len(eager) == len(expected)
    for i, (result, want) in enumerate(zip(eager, expected)):
        assert_same(result, want, f"output {i} of the function called eagerly")


def test_every_op_has_a_sample():
    covered = {s.op for s in SAMPLES}
    missing = [op.value for op in Op if op not in SOURCE_OPS and op not in covered]
    assert not missing, f"ops without a sample in tests/support/opinfo.py: {missing}"


@pytest.mark.parametrize("call, name", [
    (lambda x: np.unique(x), "numpy.unique"),
    (lambda x: np.nonzero(x), "numpy.nonzero"),
    (lambda x: np.cbrt(x), "numpy.cbrt"),
    (lambda x: np.add.at(x, [0], 1.0), "numpy.add.at"),
    (lambda x: np.linalg.eig(x), "numpy.linalg.eig"),
    (lambda x: np.fft.hfft(x), "numpy.fft.hfft"),
], ids=["unique", "nonzero", "cbrt", "add.at", "linalg.eig", "fft.hfft"])
def test_numpy_function_without_an_op_is_named(call, name):
    with pytest.raises(TraceError, match=name.replace(".", r"\.")):
        trace(call, {"x": (3, 4)})


def test_F_covers_every_op():
    missing = [op.value for op in Op if op not in SOURCE_OPS and not callable(getattr(F, op.value, None))]
    assert not missing


def test_reduction_dtype_argument_is_not_read_as_keepdims():
    # NumPy's third positional argument of sum/mean/prod is dtype; reading it as keepdims=True would be silent.
    for fn in (lambda x: np.sum(x, 0, np.float32), lambda x: x.mean(1, np.float32)):
        with pytest.raises(TraceError, match="keepdims must be True or False"):
            trace(fn, {"x": (2, 3)})


def test_write_through_a_reshape_that_may_copy_is_refused():
    # After a transpose, NumPy's reshape(-1) is a copy, so writing into it leaves x alone; a trace does not track
    # strides, so it refuses the write instead of guessing (a reshape that only splits axes is always a view:
    # see the index_update-write-through-reshape sample).
    def fn(x):
        x = x.copy()
        flat = x.T.reshape(-1)
        flat[0] = 100.0
        return x

    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(fn(x), x)  # eager NumPy: untouched
    with pytest.raises(TraceError, match=r"in-place write into the result of a reshape"):
        trace(fn, {"x": (2, 3)})


def test_split_into_one_piece_while_tracing_and_lazily():
    # A multi-output op with a single output still returns a tuple from its implementation.
    x = np.arange(4.0)

    def fn(x):
        (piece,) = np.split(x, 1)
        return piece * 2 if float(piece.sum()) > 0 else piece

    g = trace(fn, {"x": (4,)}, mode="guard", example={"x": x})
    assert_same(run(g, {"x": x})[0], x * 2, "guarded trace")

    lr = LazyRunner()
    (piece,) = np.split(lr.tensor(x), 1)
    assert_same(lr.materialize(piece * 2), x * 2, "lazy")
