"""Capturing one segment of a compiled function: the loop over its instructions, from the offset where a call
reaches the segment to a return or a graph break, and the ``Segment`` it ends in (the graph, its guards, and the
recipes that rebuild the frame's locals and stack from the graph's outputs).

``capture_once`` is the reference loop: one ``Frame.step`` per instruction. ``capture_loop_inlined.py`` holds the
same loop with the step written out, which compile() runs because it is measurably faster; a property test
(``tests/frontends/dynamo/test_dynamo_paths.py``) holds the two to the same segments.

A capture runs at most twice. The first attempt runs until the frame returns or a handler cannot go on
(``BreakGraph``, ``Unsupported``, an exception the program raises); the second starts again from the same state
and stops just before that instruction, which then runs as ordinary Python (``break_step.py``). Starting again,
rather than stopping where the first attempt failed, gives a graph with no trace of the instruction that failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter as now

from ...ir.shape_env import in_use, using
from ...passes.window_reads import window_reads
from ..recording_shortcuts import gc_paused
from .capture import CaptureContext
from .capture_shortcuts import CaptureContextWithShortcuts
from .frame import NULL, BreakGraph, Frame, Return, Unsupported, Var
from .module_guards import fold_structure_guards
from .live_locals import live_locals_at
from .mutation import donated_inputs
from .segment import RecipeMaker, Segment, backend_runner, guards_needed, top_of_stack
from .sources import ClosureSource, FrameInputs, LocalSource

CAPTURE_CONTEXT: type[CaptureContext] = CaptureContextWithShortcuts
"""The context a capture answers in: the reference ``CaptureContext`` with the speed-ups of ``capture_shortcuts.py``."""


@dataclass
class Attempt:
    """Where the first attempt stopped: after ``steps`` instructions, for ``reason`` (with a ``hint``)."""

    steps: int
    reason: str
    hint: str


class Restart(Exception):
    """The first attempt stopped: capture again, up to the instruction ``attempt`` names."""

    def __init__(self, attempt: Attempt):
        self.attempt = attempt


def capture_segment(cf, offset: int, inputs: FrameInputs) -> Segment:
    """Capture the segment of ``cf`` that starts at ``offset`` with the state ``inputs`` (with ``cf.capture_loop``,
    this module's ``capture_once`` or the inlined one of ``capture_loop_inlined.py``), and compile its graph for
    ``cf.backend``."""
    started = now()
    with gc_paused(), using(in_use()):  # (puts back the shape environment a capture made current)
        try:
            seg = cf.capture_loop(cf, offset, inputs, None)
        except Restart as r:
            seg = cf.capture_loop(cf, offset, inputs, r.attempt)
        seg.guards = fold_structure_guards(seg.guards, inputs, cf.fn.__globals__)
        seg.compile_seconds = now() - started
        seg.check = _guard_function_on_first_use(seg)
        seg.runner = backend_runner(seg.graph, cf.backend, seg.symbolic, donated_inputs(seg))
        seg.backend_seconds = now() - started - seg.compile_seconds
    return seg


def capture_once(cf, offset: int, inputs: FrameInputs, stop: "Attempt | None") -> Segment:
    """Capture from ``offset`` with the state ``inputs``: run the frame's instructions one by one until it
    returns, or up to the instruction ``stop`` says to break at, and log what each step did."""
    ctx, frame = start_capture(cf, offset, inputs)
    steps = 0
    log: list[tuple] = []  # (instruction, graph size before it, top of the stack after it), for Segment.steps
    while True:
        ins = frame.instructions[frame.ip]
        if stop is not None and steps == stop.steps:
            return end_at_break(cf, ctx, frame, offset, stop, ins, log)
        n_nodes = len(ctx.graph.nodes)
        try:
            with using(ctx.shape_env):  # shape rules consult the capture's symbolic sizes
                result = frame.step()
        except (BreakGraph, Unsupported) as e:
            if stop is not None:
                raise
            raise Restart(Attempt(steps, str(e), getattr(e, "hint", ""))) from None
        steps += 1
        log.append((ins, n_nodes, top_of_stack(frame.stack)))
        if isinstance(result, Return):
            return end_at_return(cf, ctx, frame, offset, result, log)


def start_capture(cf, offset: int, inputs: FrameInputs) -> tuple[CaptureContext, Frame]:
    """A capture context and a frame of ``cf``'s code at ``offset``, holding the state ``inputs`` as Vars that
    remember where each value came from (a local, a stack entry, a closure cell)."""
    static = cf.dynamic is False or (cf.dynamic is None and not cf.dynamic_dims)  # every size static
    ctx = CAPTURE_CONTEXT(cf.fn.__globals__, None if static else cf._dynamic_axes)
    ctx.dynamic_ints = cf.dynamic_ints
    ctx.recorder.max_nodes = cf.max_graph_nodes
    code = cf.code
    cells = dict(zip(code.co_freevars, cf.fn.__closure__ or ()))
    closure_sources = {name: ClosureSource(i, name) for i, name in enumerate(code.co_freevars)}
    frame = Frame(code, cf.fn.__globals__, cells, {}, ctx, closure_sources)
    frame.jump(offset)
    ctx.frame = frame  # guards on the entry state point at the line where capture starts
    live = live_locals_at(code, offset)
    for name, v in inputs.locals.items():
        # a local the code from here never reads is passed on as it is: no guard, no graph input (live_locals.py)
        frame.locals[name] = ctx.wrap(v, LocalSource(name)) if live is None or name in live else \
            Var(v, LocalSource(name))
    frame.stack = [ctx.wrap(v, ctx.stack_source(i, len(inputs.stack))) if v is not NULL else Var(NULL)
                   for i, v in enumerate(inputs.stack)]
    return ctx, frame


def end_at_break(cf, ctx, frame, offset, stop: Attempt, ins, log: list) -> Segment:
    """The segment of a capture that stops before ``ins``, the instruction that Python runs at the break."""
    nodes = list(ctx.graph.nodes)  # (before finish_segment adds outputs and removes dead code)
    seg = finish_segment(cf, ctx, frame, offset, "break", stop=stop, ins=ins)
    seg.step_log, seg.step_nodes = log + [(ins, "graph break: " + stop.reason)], nodes
    seg.guards = guards_needed(seg, log)
    return seg


def end_at_return(cf, ctx, frame, offset, result: Return, log: list) -> Segment:
    """The segment of a capture that reached the function's return."""
    nodes = list(ctx.graph.nodes)  # (before finish_segment adds outputs and removes dead code)
    seg = finish_segment(cf, ctx, frame, offset, "return", result=result.var)
    seg.step_log, seg.step_nodes = log, nodes
    return seg


def finish_segment(cf, ctx, frame, offset, end, stop=None, ins=None, result=None) -> Segment:
    """The ``Segment`` a capture ends in: the graph's outputs are what the recipes of the frame's locals and stack
    (at a break) and of the result (at a return) read, and what the writes into the caller's arrays copy back."""
    writebacks = ()
    maker = RecipeMaker(ctx)
    live = end == "break"  # after a return nothing of the frame is used again: no graph outputs for it
    local_recipes = {name: maker.var(v) for name, v in frame.locals.items()} if live else {}
    stack_recipes = [maker.var(v) for v in frame.stack] if live else []
    result_recipe = maker.var(result) if result is not None else None
    if ctx.writes:
        writebacks = ctx.writes.finish(maker, regions=cf.backend == "interpret")  # (see writeback.py)
    ctx.graph.outputs = list(maker.outputs)
    ctx.graph.name = cf.fn.__name__
    if ctx.shape_env is not None:
        ctx.size_guard()
    # (The guard set merged the lower bounds of lengths as they came: it was made with the counts it needs, see
    # GuardSet.merge_lower_bounds.)
    window_reads(ctx.graph)  # (exact: elementwise ops read the value written into a window, not the window)
    ctx.graph.remove_dead_code()
    # The graph's inputs are those of ``ctx.input_sources``, in its order: capture adds each input to the
    # graph and to it together, and removing dead code keeps every input. A size symbol is declared with a
    # ShapeEnv, made for the first: the graph is symbolic exactly when the capture has one.
    sources = ctx.input_sources
    seg = Segment(offset, ctx.graph, list(sources.values()), ctx.guards, local_recipes, stack_recipes, end,
                  result_recipe, input_names=list(sources), symbolic=ctx.shape_env is not None)
    if writebacks:
        seg.writebacks = tuple(writebacks)
    if end == "break":
        seg.break_offset = ins.offset
        seg.break_reason, seg.break_hint = stop.reason, stop.hint
        seg.break_loc = frame.loc()
        seg.break_instruction = f"{ins.opname} {ins.argrepr}".strip()
    return seg


def _guard_function_on_first_use(seg: Segment):
    """A stand-in for ``seg``'s guard function that generates it when first called, and from then on is replaced
    by it. A whole-function graph may never need it (its cache hits take the fast path, which checks the guards
    itself), and for a long program it is the largest piece of generated code."""
    def check(inputs: FrameInputs) -> int:
        seg.check = seg.guards.compile()
        return seg.check(inputs)
    return check
