"""C programs (backends/c_programs.py, c_program_code.py, c_loops.py): a run of slice updates as one C function,
and a loop whose body is one program as one C call, against eager NumPy bit for bit.

Random programs of statements ``X[key] = expr(views of X, Y, Z; numbers)`` over 1-D to 3-D arrays, with every
form of slice (negative steps, integer indices, a statement reading the array it writes), are run through
compile()'s capture and the fused backend with every kernel it can make, and through ``compile_graph``; time
loops through compile() with loop regions, carried arrays and changing trip counts. Each checks the final
contents of every array, and that the programs computed the statements (a test that the finder accepts them)."""

import random

import numpy as np
import pytest

import graph_lab as gl
from graph_lab.backends import fused
from graph_lab.backends.c_program_code import program_call, program_kernel
from graph_lab.backends.compiled import compile_captured, compile_graph
from graph_lab.backends.inplace import in_place_updates, writes_in_place
from graph_lab.errors import GraphExecutionError
from graph_lab.frontends.dynamo import loop_regions
from graph_lab.frontends.dynamo.mutation import donated_inputs, write_back
from graph_lab.frontends.dynamo.sources import FrameInputs

from tests.support.backend_support import ALWAYS, MODEL, needs_compiler
from tests.support.captured_runs import capture_segment, compiled_segment, run_both

pytestmark = needs_compiler


def _programs(cg) -> list:
    return [st for st in cg.stencils if hasattr(st, "statements")]


def run_as_program(fn, *args) -> list:
    """``fn(*args)`` captured and compiled with every C program the backend can make, run on copies of the
    arguments with compile()'s write-backs, against eager NumPy; returns the programs."""
    seg, cg = compiled_segment(fn, args, ALWAYS)
    for seed in (0, 1):
        rng = np.random.default_rng(seed)
        data = [rng.random(a.shape).astype(a.dtype) if isinstance(a, np.ndarray) else a for a in args]
        _, mine, _, eager = run_both(fn, seg, cg, data)
        for m, e in zip(mine, eager):
            if isinstance(e, np.ndarray):
                np.testing.assert_array_equal(m, e, strict=True)
    return _programs(cg)


# --- random statement programs


def _axis_slice(rng: random.Random, n: int, length: int) -> str | None:
    """A slice of an axis of ``n`` with ``length`` elements (any step, forwards or backwards), as text."""
    steps = [s for s in (1, 2, 3, -1, -2) if (length - 1) * abs(s) < n]
    if not steps:
        return None
    step = rng.choice(steps)
    span = (length - 1) * abs(step)
    first = rng.randrange(0, n - span)
    if step > 0:
        stop = first + span + 1
        return f"{first or ''}:{stop if stop < n else ''}{'' if step == 1 else f':{step}'}"
    start, stop = first + span, first - 1
    return f"{start}:{stop if stop >= 0 else ''}:{step}"


def _key(rng: random.Random, shape, lengths) -> str | None:
    parts = []
    for n, length in zip(shape, lengths):
        if length is None:
            parts.append(str(rng.randrange(-n, n)))  # an integer index drops the axis
            continue
        part = _axis_slice(rng, n, length)
        if part is None:
            return None
        parts.append(part)
    return ", ".join(parts)


def random_program(seed: int):
    """(source of ``f(A, B, C, c)``, the number of statements, the shape): statements over slices of A, B, C."""
    rng = random.Random(seed)
    ndim = rng.choice((1, 1, 2, 2, 3))
    shape = tuple(rng.randint(4, 9) for _ in range(ndim))
    lines, count = [], 0
    for _ in range(rng.randint(2, 6)):
        lengths = [rng.randint(1, n) if rng.random() < 0.85 or d < ndim - 1 else None for d, n in enumerate(shape)]
        target = rng.choice("ABC")
        write = _key(rng, shape, lengths)
        if write is None:
            continue
        kept = [n for n in lengths if n is not None]

        def operand():
            r = rng.random()
            if r < 0.15:
                return rng.choice(("c", "0.5", "3.0", "-2.0"))
            if r < 0.25:
                return f"{rng.choice('ABC')}[{', '.join(str(rng.randrange(n)) for n in shape)}]"  # one element
            if r < 0.35 and not kept:
                return rng.choice("ABC")[0] + "[" + ", ".join("0" for _ in shape) + "]"
            # a view of the same shape as the written slice (same lengths, any positions and steps)
            key = _key(rng, shape, lengths)
            return f"{rng.choice('ABC')}[{key}]" if key is not None else "c"

        expr = operand()
        for _ in range(rng.randint(0, 4)):
            expr = f"({expr} {rng.choice('+-*/')} {operand()})"
        if not any(ch in expr for ch in "ABC"):
            expr = f"({expr} + {target}[{write}])"
        op = rng.choice(("=", "=", "+=", "-=", "*="))
        lines.append(f"    {target}[{write}] {op} {expr}")
        count += 1
    source = "def f(A, B, C, c):\n" + "\n".join(lines or ["    A[0] = B[1]"]) + "\n"
    return source, max(count, 1), shape


def _make(source: str):
    scope = {"np": np}
    exec(compile(source, "<random stencil program>", "exec"), scope)
    return scope["f"]


@pytest.mark.parametrize("seed", range(60))
def test_random_statement_programs_against_numpy(seed):
    source, count, shape = random_program(seed)
    f = _make(source)
    args = [np.zeros(shape), np.zeros(shape), np.zeros(shape), 0.7]
    with np.errstate(all="ignore"):
        programs = run_as_program(f, *args)
    # every update written in place (a self-assignment may be gone) is computed by a C program
    seg = capture_segment(f, args)
    graph = compile_captured(seg.graph, backend="codegen", donated=donated_inputs(seg)).graph
    updates = in_place_updates(graph, donated_inputs(seg))
    in_place = sum(s.base is not None and not s.made for p in programs for s in p.statements)
    assert 1 <= in_place == writes_in_place(updates) <= count, source


def test_random_programs_use_every_form():
    """The generator above makes what it claims: negative steps, integer indices, overlapping writes."""
    text = "\n".join(random_program(seed)[0] for seed in range(60))
    assert ":-1]" in text or ":-2" in text and "-1" in text
    assert any("A[" in line.split("=")[0] and "A[" in line.split("=", 1)[1] for line in text.splitlines())
    scratch = 0
    for seed in range(60):
        source, _, shape = random_program(seed)
        with np.errstate(all="ignore"):
            programs = run_as_program(_make(source), np.zeros(shape), np.zeros(shape), np.zeros(shape), 0.7)
        scratch += sum(s.scratch for p in programs for s in p.statements)
    assert scratch >= 5


# --- overlapping reads and writes, order, layouts


def reads_neighbours(A):
    A[1:-1] = A[:-2] + A[2:]  # NumPy reads the whole right-hand side first


def pointwise(A):
    A[1:] = A[1:] * 0.5 - 1.0  # each element read where it is written: no scratch needed


def reversed_self(A):
    A[::-1] = A * 2.0 + A[::-1]


def test_a_statement_reading_the_array_it_writes():
    (p,) = run_as_program(reads_neighbours, np.zeros(30))
    assert p.statements[0].scratch
    (p,) = run_as_program(pointwise, np.zeros(30))
    assert not p.statements[0].scratch
    (p,) = run_as_program(reversed_self, np.zeros(30))
    assert p.statements[0].scratch


def a_sum_between(A, B):
    B[1:-1] = A[1:-1] * 2.0
    s = B.sum()  # NumPy reads B after the first write: no C function may move it
    A[1:-1] = B[:-2] + s
    A[0] = A[-1]


def test_a_read_between_statements_splits_the_run():
    programs = run_as_program(a_sum_between, np.zeros(20), np.zeros(20))
    assert [len(p.statements) for p in programs] == [1, 2]


def computed_before_a_write(A, B):
    x = A[1:-1] * 2.0  # reads A before the next line writes it
    A[1:-1] = B[1:-1] + 1.0
    B[1:-1] = x + 1.0  # a C function running this line after the one above would read the new A


def test_arithmetic_that_ran_before_a_write_is_not_moved_after_it():
    programs = run_as_program(computed_before_a_write, np.zeros(20), np.zeros(20))
    assert [len(p.statements) for p in programs] == [1]


def kernel_before_a_write(A, B):
    x = A[1:-1] * 2.0
    A[1:-1] = np.maximum(B[1:-1], 0.5)  # (no statement: a fused kernel and an update written in place)
    B[1:-1] = np.maximum(x, 0.1)  # a kernel computing x here would read the new A


def test_a_fused_kernel_is_not_moved_past_a_write_it_must_precede():
    run_as_program(kernel_before_a_write, np.zeros(20), np.zeros(20))  # (bit for bit eager's final arrays)


def three_arrays(A, B, C):
    for _ in range(3):
        B[1:-1, 1:-1] = 0.25 * (A[2:, 1:-1] + A[:-2, 1:-1] + A[1:-1, 2:] + A[1:-1, :-2])
        C[::-1, :] = B * 0.5 + C
        A[1:-1, 1:-1] = C[1:-1, -2:0:-1] - B[1:-1, 1:-1] / 3.0
        A[0, :] = A[1, :]


def test_several_arrays_over_several_steps_are_one_function():
    (p,) = run_as_program(three_arrays, np.zeros((7, 9)), np.zeros((7, 9)), np.zeros((7, 9)))
    assert len(p.statements) == 12 and len(p.buffers) == 3
    assert "one C function for statements 1..12" in p.describe()


def float32_statements(A, B):
    B[1:-1] = A[2:] * 0.1 + A[:-2] / 3.0  # Python numbers in float32 next to float32 arrays
    A[1:] -= B[:-1] * 0.7


def test_float32_and_python_numbers():
    (p,) = run_as_program(float32_statements, np.zeros(40, np.float32), np.zeros(40, np.float32))
    assert p.statements[0].dtype == np.float32


def test_a_caller_array_that_is_not_c_ordered_is_written_back():
    def f(A, B):
        B[1:-1] = A[:-2] + A[2:]
        A[1:-1] = B[1:-1] * 0.5

    seg = capture_segment(f, [np.zeros((12,)), np.zeros((12,))])
    cg = compile_captured(seg.graph, backend="fused", options=ALWAYS, donated=donated_inputs(seg))
    assert _programs(cg)
    big = np.random.default_rng(0).random((2, 24))
    A, B = big[1, ::2], big[0, 1::2]  # strided views of one array
    eager = big.copy()
    f(eager[1, ::2], eager[0, 1::2])
    frame = FrameInputs({"A": A, "B": B}, [], f.__globals__, ())
    outs = cg.run({name: s.fetch(frame) for name, s in zip(cg.input_names, seg.input_sources)})
    write_back(seg.writebacks, frame, outs)
    np.testing.assert_array_equal(big, eager, strict=True)


def _same_outputs(seg, got, expected: dict) -> None:
    """The graph's outputs (in the order of the segment's write-backs) against eager's final arrays by name."""
    assert len(seg.writebacks) == len(expected)
    for source, k in seg.writebacks:
        np.testing.assert_array_equal(got[k], expected[source.name], strict=True)


def test_compile_graph_of_arrays_the_graph_makes():
    def f(A, B):
        A = A * 0.5  # new arrays: a graph without write-backs updates them in place
        B = B * 0.25
        for _ in range(4):
            B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
            A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
        return A, B

    seg = capture_segment(f, [np.zeros(50), np.zeros(50)])
    cg = compile_graph(seg.graph, backend="fused", options=ALWAYS)
    (p,) = _programs(cg)
    assert sum(s.base is not None for s in p.statements) == 8  # (and the products as temporary arrays)
    A, B = np.random.default_rng(3).random(50), np.random.default_rng(4).random(50)
    got = cg(A.copy(), B.copy())  # (the function's results: it writes no argument)
    for g, e in zip(got, f(A, B)):
        np.testing.assert_array_equal(g, e, strict=True)


def test_updates_not_in_place_copy_and_leave_the_inputs_alone():
    def f(A, B):
        B[1:-1] = A[:-2] + A[2:]  # without write-backs compile_graph's graph may not write its inputs
        A[1:-1] = B[-2:0:-1] * 0.5
        return A, B

    seg = capture_segment(f, [np.zeros(30), np.zeros(30)])
    cg = compile_graph(seg.graph, backend="fused", options=ALWAYS)
    (p,) = _programs(cg)
    assert [s.made for s in p.statements] == [True, True]
    A, B = np.random.default_rng(5).random(30), np.random.default_rng(6).random(30)
    given = A.copy(), B.copy()
    _same_outputs(seg, cg(A, B), dict(zip("AB", f(A.copy(), B.copy()))))
    np.testing.assert_array_equal(A, given[0], strict=True)
    np.testing.assert_array_equal(B, given[1], strict=True)


def shared_temporary(U, V):
    for _ in range(3):
        uvv = U[1:-1] * V[1:-1] * V[1:-1]  # read by both updates: a temporary array the function makes
        U[1:-1] += 0.1 * (U[2:] - 2.0 * U[1:-1] + U[:-2]) - uvv
        V[1:-1] += uvv - 0.05 * V[1:-1]


def test_a_temporary_read_by_two_statements():
    (p,) = run_as_program(shared_temporary, np.zeros(40), np.zeros(40))
    assert sum(s.base is None for s in p.statements) >= 3 and len(p.statements) >= 9


# --- a value read again where it was written (capture's ``window_reads`` makes an op read the value, not the window)


def reads_the_window_written(A, B):
    for _ in range(2):
        B[1:-1] = 0.5 * (A[:-2] + A[2:])
        A[1:-1] = B[1:-1] * 0.25 + A[1:-1]  # reads the value just written into B[1:-1] (and, then, into A[1:-1])


def test_a_value_written_into_a_window_is_read_back_from_it():
    (p,) = run_as_program(reads_the_window_written, np.zeros(30), np.zeros(30))
    assert [s.base is not None for s in p.statements] == [True] * 4  # no temporary array
    first, second = p.statements[:2]
    assert first.value.node in first.nodes and (first.result, first.write) in second.leaves.values()


def window_written_again(A, B):
    v = A[:-2] + A[2:]
    B[1:-1] = v
    B[2:] = A[2:] * 3.0  # over most of the window v was written into
    A[1:-1] = v * 0.5


def read_before_written(A, B, C):
    v = A[:-2] + A[2:]
    C[1:-1] = v * 2.0
    B[1:-1] = v


def read_by_another_run(A, B, C):
    v = A[:-2] * A[2:]
    B[1:-1] = v
    total = B.sum()  # (reads B: the run ends here)
    C[1:-1] = v * total


@pytest.mark.parametrize("fn", [window_written_again, read_before_written, read_by_another_run])
def test_a_value_its_window_no_longer_holds_is_an_array_of_its_own(fn):
    arrays = [np.zeros(20) for _ in range(fn.__code__.co_argcount)]
    programs = run_as_program(fn, *arrays)
    temporaries = [s for p in programs for s in p.statements if s.base is None]
    assert len(temporaries) == 1 and temporaries[0].result.node.op in (gl.ops.Op.ADD, gl.ops.Op.MUL)


def view_read_outside(A, B, C):
    B[1:-1] = A[:-2] + A[2:]
    b = B[1:-1]  # a view of the B just written, read after the next statement: the run ends before it
    A[1:-1] = A[1:-1] * 0.5
    C[:] = b.sum()


def test_a_view_of_a_written_array_read_outside_the_run_ends_it():
    programs = run_as_program(view_read_outside, np.zeros(20), np.zeros(20), np.zeros(3))
    assert len(programs) == 2 and len(programs[0].statements) == 1  # B's update alone


def accumulates(A, B):
    np.add.at(B, slice(1, -1), A[:-2] + A[2:])  # adds into B[1:-1]: not a statement
    A[1:-1] = B[1:-1] * 0.5 + A[:-2]


def test_an_accumulating_update_is_left_to_numpy():
    (p,) = run_as_program(accumulates, np.zeros(20), np.zeros(20))
    assert [s.node.attrs.get("mode") for s in p.statements] == [None]


def test_the_call_refuses_arrays_of_other_shapes():
    seg = capture_segment(reads_neighbours, [np.zeros(30)])
    cg = compile_captured(seg.graph, backend="fused", options=ALWAYS, donated=donated_inputs(seg))
    (p,) = _programs(cg)
    call = program_call(p.function, p, cg.graph)
    with pytest.raises(GraphExecutionError, match="compiled for"):
        call(np.zeros(31))
    assert program_kernel(p).name == p.kernel.name  # (the name is a hash of the text)


def test_the_cost_model_judges_the_whole_run():
    def small_steps(A, B):
        for _ in range(10):
            B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
            A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])

    seg = capture_segment(small_steps, [np.zeros(200), np.zeros(200)])
    cg = compile_captured(seg.graph, backend="fused", options=MODEL, donated=donated_inputs(seg))
    (p,) = _programs(cg)  # 20 statements of 198 elements: each under MIN_ELEMENTS, together over it
    assert p.elements == 20 * 198 and p.decision.fuse
    assert "one C function for statements 1..20" in cg.how_it_runs()


# --- loops in one C call


@pytest.fixture
def regions(monkeypatch):
    """Loops kept as regions whatever their size, and the fused backend deciding from the fixed calibration."""
    monkeypatch.setattr(loop_regions, "MIN_UNROLLED_NODES", 0)
    monkeypatch.setattr(fused, "_DEFAULT_OPTIONS", MODEL)


def jacobi_steps(A, B, steps):
    for _ in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A.sum()


def upwind_steps(q, courant, steps):
    for _ in range(steps):
        q[1:] -= courant * (q[1:] - q[:-1])  # reads what it writes: through scratch memory in each step
        q[0] = q[-1]
    return q


def swapping(A, B, steps):
    for _ in range(steps):
        B[1:-1] = A[:-2] + A[2:] * 0.5
        A, B = B, A  # the carries change places: not one C call, still right
    return A, B


def _same(fn, make, cf):
    eager_args, compiled_args = make(), make()
    expected, got = fn(*eager_args), cf(*compiled_args)
    for e, g in zip(eager_args + [expected], compiled_args + [got]):
        if isinstance(e, tuple):
            for x, y in zip(e, g):
                np.testing.assert_array_equal(y, x, strict=True)
        elif isinstance(e, (np.ndarray, np.floating)):
            np.testing.assert_array_equal(g, e, strict=True)


def _loop_notes(cf, args) -> str:
    return " ".join(gl.explain(cf)(*args).backends)


@pytest.mark.parametrize("steps", [8, 13])
def test_a_time_loop_in_one_c_call_with_changing_trip_counts(regions, steps):
    rng = np.random.default_rng(steps)
    data = rng.random(300)
    cf = gl.compile(jacobi_steps, backend="fused")
    cf.ways.pin("graphs", "the test counts what the graphs do")
    for n in (steps, steps + 3, steps):
        _same(jacobi_steps, lambda: [data.copy(), data.copy(), n], cf)
    assert "steps in one C call" in _loop_notes(cf, [data.copy(), data.copy(), steps])


def test_a_loop_with_a_scalar_carry_and_a_scratch_statement(regions):
    data = np.random.default_rng(1).random(400)
    cf = gl.compile(upwind_steps, backend="fused")
    cf.ways.pin("graphs", "the test counts what the graphs do")
    for n in (9, 12):
        _same(upwind_steps, lambda: [data.copy(), 0.4, n], cf)
    assert "steps in one C call" in _loop_notes(cf, [data.copy(), 0.4, 9])


def test_carries_that_change_places_run_per_step_and_stay_right(regions):
    data = np.random.default_rng(2).random(300)
    cf = gl.compile(swapping, backend="fused")
    cf.ways.pin("graphs", "the test counts what the graphs do")
    for n in (8, 11):
        _same(swapping, lambda: [data.copy(), data.copy() * 0.5, n], cf)
    assert "in one C call" not in _loop_notes(cf, [data.copy(), data.copy(), 8])
