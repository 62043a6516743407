"""Every error path of trace / run: the error's type, and a message that names the value or node, the user's
source line, and what to do instead.

The expected source line is found independently of graph_lab: each line that should be blamed carries a
``# @tag`` comment, and :func:`loc` reads this file's text to find it.
"""

import inspect
import os
from pathlib import Path

import numpy as np
import pytest

from graph_lab import (F, GraphExecutionError, GraphInputError, LazyRunner, TraceError, check_guards, run,
                       trace)

THIS_FILE = Path(__file__)
_SOURCE_LINES = THIS_FILE.read_text(encoding="utf-8").splitlines()


def loc(tag: str) -> str:
    """``test_errors.py:N`` for the one line of this file that ends with ``# @tag``."""
    hits = [i + 1 for i, line in enumerate(_SOURCE_LINES) if line.rstrip().endswith(f"# @{tag}")]
    assert len(hits) == 1, f"tag @{tag} marks {len(hits)} lines"
    return f"{os.path.basename(THIS_FILE)}:{hits[0]}"


def assert_mentions(message: str, *parts: str) -> None:
    for part in parts:
        assert part in message, f"{part!r} not in message:\n{message}"


def test_loc_helper_finds_the_tagged_line():
    expected_line = inspect.currentframe().f_lineno + 1
    found = loc("helper-check")  # @helper-check
    assert found == f"test_errors.py:{expected_line}"


# --- data-dependent values in mode="error"


def branch_on_sum(x):
    if x.sum() > 0:  # @branch
        return x * 2.0
    return x * -1.0


def test_data_dependent_bool():
    with pytest.raises(TraceError) as e:
        trace(branch_on_sum, {"x": (3, 4)})
    assert e.type is TraceError
    msg = str(e.value)
    # the value: the comparison node, with its type; where: the `if` line; what to do instead
    assert_mentions(msg, "= gt(", "bool[]", "Python bool", loc("branch"), "if x.sum() > 0:",
                    "F.where(cond, a, b)", "mode='guard'")


def int_of_sum(x):
    n = int(x.sum())  # @int
    return x * n


def float_of_mean(x):
    scale = float(x.mean())  # @float
    return x / scale


def item_of_max(x):
    m = x.max().item()  # @item
    return x - m


def asarray_of_tensor(x):
    return np.asarray(x) + 1.0  # @asarray


@pytest.mark.parametrize("fn, kind, node, tag", [
    (int_of_sum, "int", "= sum(", "int"),
    (float_of_mean, "float", "= mean(", "float"),
    (item_of_max, "item", "= max(", "item"),
    (asarray_of_tensor, "array", "= input() \"x\"", "asarray"),
])
def test_data_dependent_scalar_and_array(fn, kind, node, tag):
    with pytest.raises(TraceError) as e:
        trace(fn, {"x": (2, 3)})
    assert e.type is TraceError
    assert_mentions(str(e.value), node, f"Python {kind}", loc(tag), "mode='guard'")


# --- calls and indexing a graph cannot hold


def unique_it(x):
    return np.unique(x)  # @unique


def test_unsupported_numpy_function():
    with pytest.raises(TraceError) as e:
        trace(unique_it, {"x": (2, 3)})
    assert_mentions(str(e.value), "numpy.unique", "not in the op table or the registry of pure NumPy functions",
                    loc("unique"), "Rewrite it with supported ops")


def cbrt_it(x):
    return np.cbrt(x)  # @cbrt


def test_unsupported_numpy_ufunc():
    with pytest.raises(TraceError) as e:
        trace(cbrt_it, {"x": (3,)})
    assert_mentions(str(e.value), "numpy.cbrt", loc("cbrt"), "Rewrite it with supported ops")


def keep_positive(x):
    return x[x > 0]  # @mask


def test_boolean_mask_indexing_suggests_where():
    with pytest.raises(TraceError) as e:
        trace(keep_positive, {"x": (5,)})
    assert_mentions(str(e.value), "boolean-mask indexing x[mask]", "data-dependent shape", loc("mask"),
                    "F.where(mask, x, fill)")


# --- bad arguments to trace: the blamed line is the trace(...) call


def identity(x):
    return x


def test_shape_spec_not_a_tuple():
    with pytest.raises(TraceError) as e:
        trace(identity, {"x": 8})  # @spec-int
    assert_mentions(str(e.value), "shapes['x']", "got 8", "like (4, 8)", loc("spec-int"))
    with pytest.raises(TraceError) as e:
        trace(identity, {"x": "4,8"})  # @spec-str
    assert_mentions(str(e.value), "shapes['x']", "got '4,8'", loc("spec-str"))


def test_shape_spec_negative_size():
    with pytest.raises(TraceError) as e:
        trace(identity, {"x": (4, -1)})  # @spec-neg
    assert_mentions(str(e.value), "shapes['x']", "non-negative", "(4, -1)", loc("spec-neg"))


def test_shape_spec_bad_dtype():
    with pytest.raises(TraceError) as e:
        trace(identity, {"x": ((4, 8), "flaot32")})  # @spec-dtype
    assert_mentions(str(e.value), "shapes['x']", "'flaot32' is not a NumPy dtype", "'float32'", loc("spec-dtype"))


def test_shape_spec_names_not_in_signature():
    with pytest.raises(TraceError) as e:
        trace(identity, {"y": (3,)})  # @spec-name
    assert_mentions(str(e.value), "['y']", "identity", "its arguments are ['x']", loc("spec-name"))


def test_shape_spec_empty_dict():
    with pytest.raises(TraceError) as e:
        trace(identity, {})  # @spec-empty
    assert_mentions(str(e.value), "non-empty dict", "got {}", "{'x': (4, 8)}", loc("spec-empty"))


def test_specialize_without_example():
    with pytest.raises(TraceError) as e:
        trace(branch_on_sum, {"x": (3, 4)}, mode="specialize")  # @no-example
    assert_mentions(str(e.value), "mode='specialize'", "example={name: array}", "['x']", loc("no-example"))


def test_guard_with_wrongly_shaped_example():
    with pytest.raises(TraceError) as e:
        trace(branch_on_sum, {"x": (3, 4)}, mode="guard", example={"x": np.ones((4, 3))})  # @bad-example
    assert_mentions(str(e.value), "example['x']", "f64[3,4]", "got f64[4,3]", loc("bad-example"))


def test_guard_with_wrong_example_dtype_or_missing_name():
    with pytest.raises(TraceError) as e:
        trace(branch_on_sum, {"x": (3, 4)}, mode="guard", example={"x": np.ones((3, 4), np.float32)})  # @ex-dt
    assert_mentions(str(e.value), "example['x']", "f64[3,4]", "got f32[3,4]", loc("ex-dt"))
    with pytest.raises(TraceError) as e:
        trace(branch_on_sum, {"x": (3, 4)}, mode="guard", example={"y": np.ones((3, 4))})  # @ex-missing
    assert_mentions(str(e.value), "example['x']", "missing", loc("ex-missing"))


def test_unknown_mode():
    with pytest.raises(TraceError) as e:
        trace(identity, {"x": (3,)}, mode="strict")  # @mode
    assert_mentions(str(e.value), "'strict'", "('error', 'specialize', 'guard')", loc("mode"))


# --- in-place writes a graph cannot replay


def write_into_input(x):
    x[0] = 1.0  # @write-input
    return x


def test_inplace_write_into_input():
    with pytest.raises(TraceError) as e:
        trace(write_into_input, {"x": (3,)})
    assert_mentions(str(e.value), "input 'x'", "would be lost", loc("write-input"), "x = x.copy()")


def update_param(x, p):
    p["W"] += 1.0  # @write-param
    return x @ p["W"]


def test_inplace_write_into_param():
    with pytest.raises(TraceError) as e:
        trace(update_param, {"x": (2, 3)}, {"W": np.ones((3, 3))})
    assert_mentions(str(e.value), "parameter p['W']", "would be lost", loc("write-param"), ".copy()")


def read_stale_view(x):
    x = x.copy()
    row = x[0]  # @view-made
    x[0, 0] = 5.0
    return row * 2.0  # @view-read


def test_reading_a_stale_view():
    # Eagerly, NumPy shows the write through the view; a graph would not, so the read is refused.
    eager = read_stale_view(np.zeros((2, 3)))
    assert eager[0] == 10.0
    with pytest.raises(TraceError) as e:
        trace(read_stale_view, {"x": (2, 3)})
    assert_mentions(str(e.value), "f64[3] from index at " + loc("view-made"), "written in place",
                    loc("view-read"), "Take the view again after the write")


# --- shape errors at trace time name the op and the line


def matmul_mismatch(a, b):
    return a @ b  # @matmul


def test_matmul_inner_dimensions():
    with pytest.raises(TraceError) as e:
        trace(matmul_mismatch, {"a": (3, 4), "b": (5, 2)})
    assert_mentions(str(e.value), "matmul(f64[3,4], f64[5,2])", "inner dimensions", "4 != 5", loc("matmul"))


def reshape_mismatch(x):
    return x.reshape(5, 2)  # @reshape


def test_reshape_size():
    with pytest.raises(TraceError) as e:
        trace(reshape_mismatch, {"x": (3, 4)})
    assert_mentions(str(e.value), "reshape", "(3, 4) (12 elements)", "(5, 2) (10 elements)", "-1",
                    loc("reshape"))


def broadcast_mismatch(x, y):
    return x + y  # @broadcast


def test_broadcasting():
    with pytest.raises(TraceError) as e:
        trace(broadcast_mismatch, {"x": (3, 4), "y": (5,)})
    assert_mentions(str(e.value), "add(f64[3,4], f64[5])", "could not be broadcast", "equal or 1",
                    loc("broadcast"))


# --- run


def split_heads(x):
    return x.reshape(4, 2, 4)  # @run-reshape


def test_run_failing_node_names_node_and_line():
    g = trace(split_heads, {"x": (4, 8)})
    with pytest.raises(ValueError) as e:
        run(g, {"x": np.ones((5, 8))})
    assert e.type is GraphExecutionError
    msg = str(e.value)
    assert msg.startswith("while executing %1 = reshape(%0) shape=(4, 2, 4)"), msg
    assert_mentions(msg, loc("run-reshape"), "x is f64[5,8], traced as f64[4,8]", "check_guards")
    assert e.value.node.op == "reshape"
    assert isinstance(e.value.__cause__, ValueError)  # NumPy's own error is kept as the cause


def gather_rows(x, idx):
    return x[idx]  # @gather


def test_run_failing_node_with_right_types():
    # Types all match; the index values are out of bounds: only the node and NumPy's reason are reported.
    g = trace(gather_rows, {"x": (3, 2), "idx": ((2,), "int64")})
    with pytest.raises(ValueError) as e:
        run(g, {"x": np.ones((3, 2)), "idx": np.array([0, 7])})
    msg = str(e.value)
    assert e.type is GraphExecutionError
    assert msg.startswith("while executing %2 = index(%0, %1)"), msg
    assert_mentions(msg, loc("gather"), "IndexError", "index 7 is out of bounds")
    assert "traced as" not in msg


def two_inputs(x, y):
    return x * y


def test_run_missing_input():
    g = trace(two_inputs, {"x": (2, 3), "y": ((3,), "float32")})
    with pytest.raises(GraphInputError) as e:
        run(g, {"x": np.ones((2, 3))})
    assert isinstance(e.value, ValueError)
    assert_mentions(str(e.value), "missing 'y'", "The graph takes (x: f64[2,3], y: f32[3])")


def test_run_unexpected_input():
    g = trace(two_inputs, {"x": (2, 3), "y": (3,)})
    with pytest.raises(GraphInputError) as e:
        run(g, {"x": np.ones((2, 3)), "y": np.ones(3), "z": np.ones(3)})
    assert_mentions(str(e.value), "unexpected 'z'", "The graph takes (x: f64[2,3], y: f64[3])")


def test_run_non_array_inputs():
    g = trace(two_inputs, {"x": (2, 3), "y": (3,)})
    with pytest.raises(GraphInputError) as e:
        run(g, {"x": np.ones((2, 3)), "y": [1.0, 2.0, 3.0]})
    assert_mentions(str(e.value), "input 'y'", "got list", "The graph takes (x: f64[2,3], y: f64[3])")
    with pytest.raises(GraphInputError) as e:
        run(g, [np.ones((2, 3)), np.ones(3)])
    assert_mentions(str(e.value), "dict of name -> array", "got list", "The graph takes (x: f64[2,3], y: f64[3])")


def test_run_input_errors_list_params_too():
    g = trace(lambda x, p: x @ p["W"], {"x": (2, 3)}, {"W": np.ones((3, 4))})
    with pytest.raises(GraphInputError) as e:
        run(g, {"x": np.ones((2, 3)), "W": np.ones((3, 4))})
    assert_mentions(str(e.value), "unexpected 'W'", "(x: f64[2,3])", "parameters [\"p['W']\"]")


# --- a stand-in tensor belongs to the capture that made it


def test_mixing_tensors_of_two_traces():
    leaked = []

    def first(x):
        leaked.append(x)
        return x * 2.0

    def second(y):
        return y + leaked[0]  # @mix

    trace(first, {"x": (3,)})  # @leak
    with pytest.raises(TraceError) as e:
        trace(second, {"y": (3,)})
    assert_mentions(str(e.value), "trace tensor f64[3] from input at " + loc("leak"), "another trace",
                    loc("mix"), "Pass the value in as an input")


def test_mixing_lazy_and_trace_tensors():
    lr = LazyRunner()
    t = lr.tensor(np.ones(3))

    def uses_lazy(x):
        return x + t  # @mix-lazy

    with pytest.raises(TraceError) as e:
        trace(uses_lazy, {"x": (3,)})
    assert_mentions(str(e.value), "lazy tensor f64[3]", "a lazy capture", loc("mix-lazy"))


def test_where_is_the_suggested_fix_and_it_traces():
    """The suggested rewrite of the data-dependent branch really traces and matches eager."""
    def fixed(x):
        s = x.sum()
        return F.where(s > 0, x * 2.0, x * -1.0)

    g = trace(fixed, {"x": (3, 4)})
    assert check_guards(g, {"x": np.ones((3, 4))})
    for x in (np.ones((3, 4)), -np.ones((3, 4))):
        np.testing.assert_array_equal(run(g, {"x": x})[0], branch_on_sum(x))
