"""C programs (``c_programs``) whose statements select with masks, compare, cast and compute on integers
(``c_statement_ops``): time-stepped grids as the corpus writes them, against eager NumPy bit for bit, on data
that overflows (NumPy's integers wrap around) and with the reads and writes of the same array NumPy sees."""

import numpy as np
import pytest

from graph_lab.backends.compiled import compile_captured
from graph_lab.frontends.dynamo.mutation import donated_inputs, write_back
from graph_lab.frontends.dynamo.runtime import CompiledFunction
from graph_lab.frontends.dynamo.sources import FrameInputs

from benchmarks.corpus.numpy_api import xorshift_uniform as xorshift
from tests.support.backend_support import ALWAYS, needs_compiler

pytestmark = needs_compiler


def run_programs(fn, make, seeds=(0, 1, 2)) -> list:
    """``fn`` captured on ``make(0)``, compiled with every C program the backend can make, run on ``make(seed)``
    with compile()'s write-backs against eager NumPy (every argument's final contents: what the statements
    write); returns the programs."""
    capture = CompiledFunction(fn, backend="codegen")
    capture(*make(0))
    (event,) = capture.last_events
    seg = event.segment
    cg = compile_captured(seg.graph, backend="fused", options=ALWAYS, donated=donated_inputs(seg))
    for seed in seeds:
        mine, eager = make(seed), make(seed)
        frame = FrameInputs(dict(zip(fn.__code__.co_varnames, mine)), [], fn.__globals__, ())
        outs = cg.run({name: s.fetch(frame) for name, s in zip(cg.input_names, seg.input_sources)})
        write_back(seg.writebacks, frame, outs)
        fn(*eager)
        for m, e in zip(mine, eager):
            if isinstance(e, np.ndarray):
                np.testing.assert_array_equal(m, e, strict=True)
    return [st for st in cg.stencils if hasattr(st, "statements")]


def life(grid, steps):
    for t in range(steps):
        n = (grid[:-2, :-2] + grid[:-2, 1:-1] + grid[:-2, 2:] + grid[1:-1, :-2] + grid[1:-1, 2:]
             + grid[2:, :-2] + grid[2:, 1:-1] + grid[2:, 2:])
        alive = grid[1:-1, 1:-1] == 1
        grid[1:-1, 1:-1] = ((n == 3) | (alive & (n == 2))).astype(grid.dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int64"])
def test_game_of_life_steps_are_one_program(dtype):
    def make(seed):
        return (np.random.default_rng(seed).random((13, 11)) < 0.4).astype(dtype), 4

    (p,) = run_programs(life, make)
    assert len(p.statements) == 4


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint64"])
def test_integer_stencils_wrap_around_as_numpy_does(dtype):
    """Sums of large values overflow; products, shifts and xors in the same statement."""
    def step(a, b, steps):
        for t in range(steps):
            a[1:-1] = a[:-2] + a[2:] * 3 - b[1:-1]
            b[1:] = (b[1:] ^ (a[1:] << 3)) | (a[:-1] >> 2)
        return a

    info = np.iinfo(dtype)

    def make(seed):
        rng = np.random.default_rng(seed)
        return (rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True),
                rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True), 3)

    (p,) = run_programs(step, make)
    assert len(p.statements) == 6


def laplace(phi, fixed, steps):
    for t in range(steps):
        new = 0.25 * (phi[2:, 1:-1] + phi[:-2, 1:-1] + phi[1:-1, 2:] + phi[1:-1, :-2])
        phi[1:-1, 1:-1] = np.where(fixed[1:-1, 1:-1], phi[1:-1, 1:-1], new)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_masked_jacobi_sweep_reads_its_bool_mask_in_the_program(dtype):
    def make(seed):
        rng = np.random.default_rng(seed)
        return rng.standard_normal((12, 14)).astype(dtype), rng.random((12, 14)) < 0.2, 5

    (p,) = run_programs(laplace, make)
    assert len(p.statements) == 5 and any(b.type.dtype == np.bool_ for b in p.buffers)


def test_mixed_dtypes_in_a_statement_promote_as_numpy_does():
    """float64 + int64, int16 compared with a float, a bool mask selecting between an int8 and a float32."""
    def step(x, counts, small, steps):
        for t in range(steps):
            x[1:] = x[1:] + counts[:-1] * 0.5
            counts[:-1] = counts[:-1] + (x[1:] > 0.25)
            x[:-1] = np.where(small[1:] > 2.5, small[1:], x[1:] * np.float32(2))
        return x

    def make(seed):
        rng = np.random.default_rng(seed)
        return rng.random(30), rng.integers(-5, 5, 30), rng.integers(-9, 9, 30).astype(np.int16), 3

    (p,) = run_programs(step, make)
    assert sum(s.base is not None for s in p.statements) == 9  # (and a temporary)


def test_bool_statements_select_and_combine_masks():
    def step(m, x, steps):
        for t in range(steps):
            m[1:] = m[:-1] ^ (x[1:] > 0.5)
            x[1:-1] = np.where(m[1:-1], x[2:], x[:-2]) + m[:-2]
            m[0] = m[-1] | m[1]

    def make(seed):
        rng = np.random.default_rng(seed)
        return rng.random(25) < 0.5, rng.random(25), 3

    programs = run_programs(step, make)
    assert sum(len(p.statements) for p in programs) >= 6, [p.describe() for p in programs]


def test_what_a_statement_cannot_compute_stays_numpys_and_is_right():
    """A float-to-int cast (undefined in C out of range), an integer floor division (NumPy warns on zero) and a
    Python int argument next to an int8 array: left to NumPy, the rest of the run still a program."""
    def step(g, x, k, steps):
        for t in range(steps):
            g[1:] = (x[1:] * 3).astype(np.int8)
            g[:-1] = g[:-1] // 3 + g[1:]
            g[1:] = g[1:] + k
            x[1:] = x[:-1] + g[1:]
        return g

    def make(seed):
        rng = np.random.default_rng(seed)
        return rng.integers(-100, 100, 20).astype(np.int8), rng.standard_normal(20) * 30, 7, 2

    programs = run_programs(step, make)
    computed = {n.op.value for p in programs for s in p.statements for n in s.nodes}
    assert "floor_divide" not in computed and not any(
        n.op.value == "cast" and n.inputs[0].type.dtype.kind == "f" for p in programs for s in p.statements
        for n in s.nodes)


def test_a_generator_state_chain_is_one_kernel_before_the_program_reading_it():
    """xorshift64 as the corpus writes it (``xorshift_uniform``): the state's chain (uint64 shifts and xors, advanced in place) is one
    kernel, although the program writing the rows reads its values between the rounds (the program's call runs
    after the kernel's)."""
    def make(seed):
        return np.random.default_rng(seed).integers(1, 2 ** 64 - 1, 300, dtype=np.uint64, endpoint=True), 5

    capture = CompiledFunction(xorshift, backend="codegen")
    capture(*make(0))
    seg = capture.last_events[0].segment
    cg = compile_captured(seg.graph, backend="fused", options=ALWAYS, donated=donated_inputs(seg))
    assert len(cg.kernels) == 1 and len(cg.kernels[0].nodes) == 30, cg.partition.text()
    (p,) = run_programs(xorshift, make)
    assert len(p.statements) == 5
