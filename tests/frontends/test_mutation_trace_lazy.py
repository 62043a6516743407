"""In-place writes under trace and LazyRunner (docs/capture.md).

trace: a write into an input or a parameter raises TraceError naming the array and the user's line (a traced
graph never writes into the arrays ``run`` is given); a write into an array the function made is recorded.
LazyRunner: a lazy tensor written in place, across graph breaks, gives eager's values; its source array is
never written."""

import numpy as np
import pytest

import graph_lab as gl
from graph_lab import F

rng = np.random.default_rng(0)


def line_of(fn, text: str) -> int:
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if text in line)


def write_item(x):
    y = x * 2.0
    x[0] = 5.0
    return y


def write_through_view(x):
    row = x[1]
    row += 1.0


def write_transposed(x):
    x.T[0] = 0.0


def write_add_at(x):
    np.add.at(x, np.array([0, 0]), 1.0)


def write_masked(x):
    x[x > 0] = 0.0


def write_augmented(x):
    x *= 2.0


@pytest.mark.parametrize("fn, text", [
    (write_item, "x[0] = 5.0"), (write_through_view, "row += 1.0"), (write_transposed, "x.T[0] = 0.0"),
    (write_add_at, "np.add.at"), (write_masked, "x[x > 0] = 0.0"), (write_augmented, "x *= 2.0"),
])
def test_trace_write_into_an_input_names_the_line(fn, text):
    with pytest.raises(gl.TraceError) as info:
        gl.trace(fn, {"x": (3, 3)})
    message = str(info.value)
    assert "in-place write into the input 'x'" in message
    assert f"test_mutation_trace_lazy.py:{line_of(fn, text)}" in message
    assert "x.copy()" in message  # what to do instead


def test_trace_write_into_a_parameter_is_refused():
    def f(x, p):
        p["w"][0] = 0.0
        return x @ p["w"]
    with pytest.raises(gl.TraceError, match=r"in-place write into the parameter"):
        gl.trace(f, {"x": (2, 3)}, {"w": np.ones((3, 3))})


def copy_then_write(x, i, v):
    y = x.copy()
    y[0] = 5.0
    y[1:] *= 2.0
    np.add.at(y, i, v)
    y[y > 3.0] = -1.0
    y.T[0] += 1.0
    return y


def test_trace_write_into_a_fresh_array_is_recorded_and_run_leaves_inputs_alone():
    g = gl.trace(copy_then_write, {"x": (4, 3), "i": ((3,), np.int64), "v": (3,)})
    for _ in range(3):
        x, i, v = rng.standard_normal((4, 3)), rng.integers(0, 4, 3), rng.standard_normal((3, 3))[:, 0]
        inputs = {"x": x.copy(), "i": i.copy(), "v": v.copy()}
        (got,) = gl.run(g, inputs)
        np.testing.assert_array_equal(got, copy_then_write(x, i, v), strict=True)
        for name, a in [("x", x), ("i", i), ("v", v)]:
            np.testing.assert_array_equal(inputs[name], a, strict=True)


def lazy_program(x, y, to_bool):
    """Writes before and after graph breaks (``to_bool``, ``float``), through views, masked and indexed."""
    x[0] += 1.0
    if to_bool(x.sum() > 0):
        x[1:] *= 2.0
    row = x[2]
    s = float(row.sum())
    row += s
    x[y > 0] = 7.0
    np.add.at(x, np.array([0, 0, 3]), 1.5)
    x[np.array([1, 1])] = np.array([[3.0], [4.0]])
    z = x * 2.0
    x.fill(0.5)
    x[3] = F.tanh(z[3])
    return x, z, x[2]


def test_lazy_tensor_written_in_place_across_breaks_is_eager():
    for _ in range(4):
        a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
        expected = lazy_program(a.copy(), b, bool)
        lr = gl.LazyRunner()
        source = a.copy()
        got = lr.materialize(list(lazy_program(lr.tensor(source), lr.tensor(b), bool)))
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e, strict=True)
        np.testing.assert_array_equal(source, a, strict=True)  # lr.tensor took a copy
        assert len(lr.graphs) >= 3  # the bool, the float and the final materialize each ran a graph


def test_lazy_view_read_after_its_base_was_written_is_refused():
    lr = gl.LazyRunner()
    x = lr.tensor(np.zeros((3, 3)))
    row = x[0]
    float(x.sum())
    x[0, 0] = 1.0
    with pytest.raises(gl.TraceError, match="Take the view again"):
        lr.materialize(row)
