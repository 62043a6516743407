"""Stencil statements (backends/c_programs.py): a slice update and the arithmetic on views that computes it, as one C
loop nest, bit for bit eager NumPy's results for every form of slice.

Each function is captured by compile(), its graph compiled with every kernel the backend can make
(``fuse="always"``), run on copies of the arguments with the write-backs compile() makes, and compared with eager
NumPy on other copies: the arguments' final contents, bit for bit."""

import numpy as np
import pytest

from graph_lab.backends.compiled import compile_captured
from graph_lab.frontends.dynamo.mutation import donated_inputs, write_back
from graph_lab.frontends.dynamo.runtime import CompiledFunction
from graph_lab.frontends.dynamo.sources import FrameInputs

from tests.support.backend_support import ALWAYS, needs_compiler

pytestmark = needs_compiler


def _run_with_stencils(fn, *args) -> int:
    """Check ``fn(*args)`` through stencil kernels against eager; returns how many stencil kernels ran."""
    capture = CompiledFunction(fn, backend="codegen")
    capture(*[a.copy() for a in args])
    (event,) = capture.last_events
    seg = event.segment
    cg = compile_captured(seg.graph, backend="fused", options=ALWAYS, donated=donated_inputs(seg))
    for seed in (0, 1):
        data = [np.random.default_rng(seed).random(a.shape).astype(a.dtype) for a in args]
        mine, eager = [d.copy() for d in data], [d.copy() for d in data]
        frame = FrameInputs(dict(zip(fn.__code__.co_varnames, mine)), [], fn.__globals__, ())
        outs = cg.run({name: s.fetch(frame) for name, s in zip(cg.input_names, seg.input_sources)})
        write_back(seg.writebacks, frame, outs)
        fn(*eager)
        for m, e in zip(mine, eager):
            np.testing.assert_array_equal(m, e, strict=True)
    return len(cg.stencils)


def jacobi_1d(A, B):
    for _ in range(2):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_2d(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])


def heat_3d(A, B):
    B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
                           + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
                           + A[1:-1, 1:-1, 1:-1] / 3.0)


def negative_steps(A, B):
    B[::-1] = A[::-1] * 2.0 - A          # a reversed write of a reversed view
    B[8:1:-3] = A[1:8:3] + A[:-10:-3]    # steps of 3, forwards and backwards


def strided_2d(A, B):
    B[:8:2, 1::3] = A[1::2, ::-3] - A[:-1:2, 1::3] * A[1:8:2, ::3]
    B[3, :] = A[-1, :] + A[0]            # an integer index drops an axis


@pytest.mark.parametrize("fn, shapes", [
    (jacobi_1d, [(40,), (40,)]),
    (jacobi_2d, [(12, 9), (12, 9)]),
    (heat_3d, [(6, 5, 7), (6, 5, 7)]),
    (negative_steps, [(10,), (10,)]),
    (strided_2d, [(9, 8), (9, 8)]),
], ids=lambda x: getattr(x, "__name__", ""))
def test_every_form_of_slice_against_numpy(fn, shapes):
    assert _run_with_stencils(fn, *[np.zeros(s) for s in shapes]) >= 1


def reads_what_it_writes(A):
    A[1:-1] = A[:-2] + A[2:]  # NumPy computes the right-hand side first: no loop nest may write A while reading it


def shift_in_place(A, B):
    A[1:] = A[:-1] * 0.5 + B[1:]


def test_a_write_into_an_array_it_reads_stays_right():
    # (a C program computes such a statement into scratch memory first: tests/backends/test_c_programs.py)
    assert _run_with_stencils(reads_what_it_writes, np.zeros(20)) == 1
    assert _run_with_stencils(shift_in_place, np.zeros(20), np.zeros(20)) == 1


def float32_stencil(A, B):
    B[1:-1] = A[2:] * 0.5 + A[:-2] / 3.0  # Python numbers are float32 next to float32 arrays (NEP 50)


def test_float32_and_python_numbers():
    assert _run_with_stencils(float32_stencil, np.zeros(30, np.float32), np.zeros(30, np.float32)) == 1


def test_a_written_base_that_is_not_c_ordered():
    def f(A, B):
        B[1:-1] = A[:-2] * 2.0 + A[2:]
    capture = CompiledFunction(f, backend="codegen")
    capture(np.zeros(12), np.zeros(12))
    seg = capture.last_events[0].segment
    cg = compile_captured(seg.graph, backend="fused", options=ALWAYS, donated=donated_inputs(seg))
    assert cg.stencils
    base = np.zeros((12, 2))
    A, B = np.arange(12.0), base[:, 0]  # a strided view of another array, as the caller may pass
    outs = cg(A, B)
    expected = np.zeros(12)
    f(np.arange(12.0), expected)
    np.testing.assert_array_equal(outs[0], expected, strict=True)


def returns_the_value_it_writes(A, B):
    B[1:] = A[:-1] * 3.0
    return (A[:-1] * 3.0).sum()  # (the same product, merged by CSE: it must stay an array of its own)


def test_a_value_also_returned_keeps_its_array():
    _run_with_stencils(returns_the_value_it_writes, np.zeros(16), np.zeros(16))
