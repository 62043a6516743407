"""Python-float arguments inside fused kernels (``backends/kernel_scalars.py``), and kernels computing their results
in the caller's arrays they read (``codegen.Step.same_element``): both against eager NumPy, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab as gl
from tests.support.backend_support import ALWAYS, assert_bits, needs_compiler
from graph_lab import GraphBuilder, compile_graph, trace
from graph_lab.backends.compiled import compile_captured
from graph_lab.ir.types import TensorType

RNG = np.random.default_rng(5)


def float_input(b: GraphBuilder, name: str):
    """A graph input holding a Python float (weak), as compile() passes a float argument."""
    return b.graph.add_input(name, TensorType.of(0.5), None)


def adam_like(dtype):
    b = GraphBuilder("adam_like")
    p, g = b.input("p", (64, 48), dtype), b.input("g", (64, 48), dtype)
    lr, beta, eps = float_input(b, "lr"), float_input(b, "beta"), float_input(b, "eps")
    m = b.add(b.mul(g, beta), b.mul(b.mul(g, g), 0.999))
    step = b.div(b.mul(lr, g), b.add(b.sqrt(m), eps))
    return b.output(b.sub(p, step), b.gt(m, lr), b.where(b.lt(g, eps), lr, p))


def adam_like_eager(p, g, lr, beta, eps):
    m = g * beta + (g * g) * 0.999
    return [p - (lr * g) / (np.sqrt(m) + eps), m > lr, np.where(g < eps, lr, p)]


@needs_compiler
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("lr", [1 / 3, 1e-3, float("nan"), float("inf"), -0.0, 3.4e38 * 2])
def test_python_float_arguments_are_read_by_the_kernel_bit_for_bit(dtype, lr):
    g = adam_like(dtype)
    compiled = compile_graph(g, "fused", options=ALWAYS)
    in_kernels = {id(n) for k in compiled.kernels for n in k.nodes}
    arrays = [n for n in compiled.graph.nodes if n.op not in ("input", "const") and n.output.type.ndim]
    assert all(id(n) in in_kernels for n in arrays), compiled.partition.text()  # the floats cut no chain
    p, grad = (RNG.standard_normal((64, 48)).astype(dtype) for _ in range(2))
    grad[0, :4] = [0.0, -0.0, np.nan, np.inf]
    for beta, eps in [(0.9, 1e-8), (0.1 + 0.2, 1.0 / 7.0)]:  # other values on the next call: read, not baked in
        with np.errstate(all="ignore"):
            got = compiled(p, grad, lr, beta, eps)
            expected = adam_like_eager(p, grad, lr, beta, eps)
        assert_bits(got, expected, f"{dtype}, lr={lr}, beta={beta}")


@needs_compiler
def test_a_nan_constant_is_read_from_memory_and_an_int_argument_stays_outside():
    b = GraphBuilder("consts")
    x = b.input("x", (40, 40))
    n = b.graph.add_input("n", TensorType.of(3), None)
    y = b.mul(b.add(x, float("nan")), 2.0)
    g = b.output(y, b.add(b.mul(x, n), 1.0))
    compiled = compile_graph(g, "fused", options=ALWAYS)
    text = compiled.partition.text()
    assert "a Python int that is not a constant" in text, text
    xs = RNG.standard_normal((40, 40))
    assert_bits(compiled(xs, 3), [(xs + np.nan) * 2.0, xs * 3 + 1.0], "NaN constant, int argument")


def momentum_graph(n: int):
    b = GraphBuilder("momentum")
    p, g, v = b.input("p", (n, n)), b.input("g", (n, n)), b.input("v", (n, n))
    lr, mu = float_input(b, "lr"), float_input(b, "mu")
    v_new = b.sub(b.mul(v, mu), b.mul(lr, g))
    return b.output(v_new, b.add(p, v_new))


@needs_compiler
@pytest.mark.parametrize("backend", ["fused", "codegen"])
@pytest.mark.parametrize("n", [4, 40])  # (4 x 4 is below the buffer threshold: donated arrays are written anyway)
def test_results_are_computed_in_the_donated_arrays_they_read(backend, n):
    g = momentum_graph(n)
    options = ALWAYS if backend == "fused" else None
    cg = compile_captured(g, backend=backend, options=options, donated={"v": 0, "p": 1})
    p, grad, v = (RNG.standard_normal((n, n)) for _ in range(3))
    expected_v = v * 0.9 - 0.01 * grad
    expected = [expected_v, p + expected_v]
    v_new, p_new = cg(p.copy(), grad, v.copy(), 0.01, 0.9)  # (not donated: the caller's own arrays are never written)
    assert_bits([v_new, p_new], expected, "copies")
    p_arg, v_arg = p.copy(), v.copy()
    v_out, p_out = cg.run({"p": p_arg, "g": grad, "v": v_arg, "lr": 0.01, "mu": 0.9})
    assert v_out is v_arg and p_out is p_arg, cg.source  # nothing left to copy back
    assert_bits([v_arg, p_arg], expected, "in the donated arrays")


@needs_compiler
def test_a_kernel_that_reads_a_view_of_the_donated_array_does_not_write_into_it():
    # x * 2 + x[0]: written into x, row 0 of the result would overwrite the row every other row reads (NumPy copies
    # an overlapping operand first); a kernel writes into an operand only when it reads no view of it
    g = trace(lambda x: x * 2.0 + x[0], {"x": ((48, 48), "float64")})
    cg = compile_captured(g, backend="fused", options=ALWAYS, donated={"x": 0})
    assert cg.kernels, cg.partition.text()
    x = RNG.standard_normal((48, 48))
    expected = x * 2.0 + x[0]
    arg = x.copy()
    got, = cg.run({"x": arg})
    assert got is not arg
    assert_bits([got], [expected], "x + x[0]")


@needs_compiler
def test_compile_runs_an_optimizer_step_in_place_as_eager_does():
    def sgd(params, grads, velocities, lr=0.01, momentum=0.9):
        for p, g, v in zip(params, grads, velocities):
            v *= momentum
            v -= lr * g
            p += v

    def inputs(seed):
        rng = np.random.default_rng(seed)
        shapes = [(60, 60), (60,), (3,)]
        return ([rng.standard_normal(s) for s in shapes], [rng.standard_normal(s) for s in shapes],
                [rng.standard_normal(s) for s in shapes])

    cf = gl.compile(sgd, backend="fused")
    cf.ways.pin("graphs", "the test checks the graphs' writes")
    for seed in range(3):
        eager, compiled = inputs(seed), inputs(seed)
        sgd(*eager)
        cf(*compiled, 0.02, 0.8) if seed == 2 else cf(*compiled)
        if seed == 2:
            eager = inputs(seed)
            sgd(*eager, 0.02, 0.8)
        for a, b in zip(eager[0] + eager[2], compiled[0] + compiled[2]):
            assert_bits([b], [a], f"seed {seed}")
