"""Generated code that calls NumPy's C functions directly (``backends/direct_calls.py``): each form gives exactly
what the op's implementation gives (the reference interpreter, and eager NumPy), and is used only where it may be.
"""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab


def bits(a) -> tuple:
    a = np.asarray(a)
    return a.dtype, a.shape, np.ascontiguousarray(a).tobytes()


def compiled_and_reference(fn, shapes: dict, inputs: dict):
    g = graph_lab.trace(fn, shapes)
    cg = graph_lab.compile_graph(g, backend="codegen", passes="none")
    return g, cg, cg(**inputs), graph_lab.run(g, inputs)


SAMPLES = {
    "float64": lambda rng, shape: rng.standard_normal(shape),
    "float32": lambda rng, shape: rng.standard_normal(shape).astype(np.float32),
    "int64": lambda rng, shape: rng.integers(-50, 50, shape),
    "edges": lambda rng, shape: rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, 5e-324, -1.5], shape),
}


@pytest.mark.parametrize("dtype", list(SAMPLES))
@pytest.mark.parametrize("shape, axis", [((3, 5), -1), ((3, 5), 0), ((2, 3, 4), (0, 2)), ((1, 64), -1),
                                         ((4, 1, 7), 1)])
@pytest.mark.parametrize("keepdims", [True, False])
def test_reductions_give_the_implementations_bits(dtype, shape, axis, keepdims):
    rng = np.random.default_rng(0)
    x = SAMPLES[dtype](rng, shape)
    reductions = [np.sum, np.mean, np.max, np.min, np.prod]

    def f(x):
        return [r(x, axis=axis, keepdims=keepdims) for r in reductions]

    with np.errstate(all="ignore"):  # (inf - inf in the edge values' sums: NumPy warns, on either side)
        g, cg, got, want = compiled_and_reference(f, {"x": (shape, x.dtype)}, {"x": x})
        eager = [r(x, axis=axis, keepdims=keepdims) for r in reductions]
    for a, b, c in zip(got, want, eager):
        assert bits(a) == bits(b) == bits(c)
    assert "np.add.reduce(" in cg.source and "np.maximum.reduce(" in cg.source
    assert ("np.true_divide(" in cg.source) == (x.dtype == np.float64)  # the mean's own steps: float64 only


def test_full_reductions_to_a_scalar_give_numpys_scalars():
    """A 0-d result is a NumPy scalar, as from NumPy's functions (the mean keeps np.mean: its wrapper makes it)."""
    x = np.arange(6.0).reshape(2, 3)
    g, cg, got, want = compiled_and_reference(lambda x: (x.sum(axis=(0, 1)), x.mean(axis=(0, 1))),
                                              {"x": (2, 3)}, {"x": x})
    assert [bits(a) for a in got] == [bits(b) for b in want] == [bits(x.sum()), bits(x.mean())]
    assert "np.mean(" in cg.source


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack_is_numpys_concatenate_of_new_axes(axis):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3)).astype(np.float32)

    def f(a, b):
        return np.stack([a * 2, b + 1], axis=axis)

    g, cg, got, want = compiled_and_reference(f, {"a": (2, 3), "b": ((2, 3), np.float32)}, {"a": a, "b": b})
    assert bits(got[0]) == bits(want[0]) == bits(np.stack([a * 2, b + 1], axis=axis))
    assert "np.concatenate((" in cg.source


def test_reshape_and_transpose_are_the_arrays_methods():
    x = np.arange(24.0).reshape(2, 3, 4)

    def f(x):
        return (x * 2).reshape(6, 4).transpose(1, 0)

    g, cg, got, want = compiled_and_reference(f, {"x": (2, 3, 4)}, {"x": x})
    assert bits(got[0]) == bits(want[0]) == bits((x * 2).reshape(6, 4).T)
    assert ".reshape((6, 4))" in cg.source and ".transpose((1, 0))" in cg.source


def test_a_python_number_keeps_the_implementation():
    """``np.reshape(2.0, (1,))`` works, ``(2.0).reshape`` does not: a weak (Python) scalar keeps the usual line."""
    g = graph_lab.parse("""graph g {
  %0: float = input "s"
  %1: f64[1] = reshape %0 shape=(1,)
  %2: f64[1] = transpose %1 perm=(0,)
  return %2
}""")
    cg = graph_lab.compile_graph(g, backend="codegen", passes="none")
    assert bits(cg(s=2.0)[0]) == bits(graph_lab.run(g, {"s": 2.0})[0]) == bits(np.reshape(2.0, (1,)))
    assert "impl_reshape(v0" in cg.source and "v1.transpose((0,))" in cg.source


def test_the_decode_models_softmax_and_norms_in_a_compiled_function():
    """compile() of a function with these ops (a decode step's norms, softmax and rotation), bit for bit eager."""
    def step(x, w):
        h = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w
        e = np.exp(h - np.max(h, axis=-1, keepdims=True))
        p = e / np.sum(e, axis=-1, keepdims=True)
        even, odd = p[..., 0::2], p[..., 1::2]
        return np.stack([even - odd, even + odd], axis=-1).reshape(p.shape).transpose(1, 0)

    rng = np.random.default_rng(2)
    cf = graph_lab.compile(step, backend="codegen")
    for _ in range(3):
        x, w = rng.standard_normal((3, 8)), rng.standard_normal(8)
        assert bits(cf(x, w)) == bits(step(x, w))



@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8", "bool"])
def test_casts_and_zero_filled_arrays_give_the_implementations_bits(dtype):
    """``x.astype(dtype)`` for an array; ``np.zeros`` for a ``full`` of 0 (``np.zeros``, ``np.empty`` and
    ``np.full(.., 0)`` in compile(): the same bytes), and the implementation kept for ``-0.0`` (a set sign bit)
    and any other fill."""
    x = SAMPLES["edges"](np.random.default_rng(3), (4, 6))
    b = graph_lab.GraphBuilder("fills")
    xv = b.input("x", (4, 6))
    fills = [((3, 4), 0, dtype), ((2, 5), 0.0, dtype), ((2, 2), False, dtype), ((3,), -0.0, None),
             ((2,), 7, dtype), ((2, 3), 0.0, None)]
    g = b.output(b.call("cast", xv, dtype), *[b.call("full", shape, fill, dtype=d) for shape, fill, d in fills])
    cg = graph_lab.compile_graph(g, backend="codegen", passes="none")
    with np.errstate(all="ignore"):  # (casting NaN and inf to ints: NumPy warns, on either side)
        got, want = cg(x), graph_lab.run(g, {"x": x})
        eager = [x.astype(dtype)] + [np.full(shape, fill, d) for shape, fill, d in fills]
    for a, b_, c in zip(got, want, eager):
        assert bits(a) == bits(b_) == bits(c)
    assert ".astype(" in cg.source and "impl_cast" not in cg.source
    assert cg.source.count("np.zeros(") == 4 and cg.source.count("impl_full(") == 2, cg.source
