"""Capturing one segment of a compiled function: the loop over its instructions, from the offset where a call
reaches the segment to a return or a graph break, and the ``Segment`` it ends in (the graph, its guards, and the
recipes that rebuild the frame's locals and stack from the graph's outputs).

A capture runs at most twice. The first attempt runs until the frame returns or a handler cannot go on
(``BreakGraph``, ``Unsupported``, an exception the program raises); the second starts again from the same state
and stops just before that instruction, which then runs as ordinary Python (``break_step.py``). Starting again,
rather than stopping where the first attempt failed, gives a graph with no trace of the instruction that failed.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass
from time import perf_counter as now
import types

from ...ir.shape_env import in_use, using
from ...ops import Op
from ..tensor import Tensor
from ..trace import nothing_dead
from .capture import CaptureContext
from .frame import NULL, BreakGraph, CodeCache, Frame, Return, Unsupported, Var, step_error
from .mutation import donated_inputs
from .segment import EMPTY_STACK, PLAIN_TOP_TYPES, PLAIN_TOPS, RecipeMaker, Segment, backend_runner, uses_top_of
from .sources import ClosureSource, FrameInputs, LocalSource


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
    """Capture the segment of ``cf`` that starts at ``offset`` with the state ``inputs``, and compile its graph for
    ``cf.backend``: a first attempt runs until the frame returns or a handler cannot go on; it then starts again
    and stops just before the instruction that could not be captured (the graph break)."""
    started = now()
    # As trace does: a capture makes many objects that all live on (see gc_paused, written out here).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            seg = capture_once(cf, offset, inputs, None)
        except Restart as r:
            seg = capture_once(cf, offset, inputs, r.attempt)
        seg.compile_seconds = now() - started
        seg.check = _guard_function_on_first_use(seg)
        seg.runner = backend_runner(seg.graph, cf.backend, seg.symbolic, donated_inputs(seg))
        seg.backend_seconds = now() - started - seg.compile_seconds
    finally:
        if gc_was_enabled:
            gc.enable()
    return seg


def capture_once(cf, offset: int, inputs: FrameInputs, stop: "Attempt | None") -> Segment:
    """Capture from ``offset`` with the state ``inputs``: run the frame's instructions one by one until it
    returns, or up to the instruction ``stop`` says to break at. Each step runs the instruction's handler as
    ``Frame.step`` would (inlined: the loop runs thousands of steps) and logs what it did."""
    static = cf.dynamic is False or (cf.dynamic is None and not cf.dynamic_dims)  # every size static
    ctx = CaptureContext(cf.fn.__globals__, None if static else cf._dynamic_axes)
    ctx.dynamic_ints = cf.dynamic_ints
    ctx.recorder.max_nodes = cf.max_graph_nodes
    cells, closure_sources = {}, {}
    code = cf.code
    if code.co_freevars:
        for i, (name, cell) in enumerate(zip(code.co_freevars, cf.fn.__closure__ or ())):
            cells[name] = cell
            closure_sources[name] = ClosureSource(i, name)
    frame = Frame(code, cf.fn.__globals__, cells, {}, ctx, closure_sources)
    frame.ip = frame.index_of[offset]  # (frame.jump(offset))
    ctx.frame = frame  # guards on the entry state point at the line where capture starts
    tables = _capture_cache.get(code)  # (what depends on the code alone: see _capture_tables)
    if tables is None:
        tables = _capture_cache.put(code, _capture_tables(code))
    local_sources, tops = tables
    local_vars = frame.locals
    for name, v in inputs.locals.items():
        source = local_sources.get(name)
        local_vars[name] = ctx.wrap(v, source if source is not None else LocalSource(name))
    if inputs.stack:  # (empty where a call starts)
        frame.stack = [ctx.wrap(v, ctx.stack_source(i, len(inputs.stack))) if v is not NULL else Var(NULL)
                       for i, v in enumerate(inputs.stack)]

    # The capture loop.
    steps = 0
    log: list[tuple] = []
    append = log.append
    instructions, handlers = frame.instructions, frame.handlers
    stop_at = stop.steps if stop is not None else -1
    graph = ctx.graph
    # The shape env that rules consult outside this capture. A step leaves it as it found it (``using``
    # restores it), so comparing with it here is ``in_use() is ctx.shape_env`` without asking on every step.
    outside = in_use()
    while True:
        ip = frame.ip
        ins = instructions[ip]
        if steps == stop_at:
            nodes = list(graph.nodes)  # (before finish_segment adds outputs and removes dead code)
            seg = finish_segment(cf, ctx, frame, offset, "break", stop=stop, ins=ins)
            seg.step_log, seg.step_nodes = log + [(ins, "graph break: " + stop.reason)], nodes
            return seg
        n_nodes = len(graph.nodes)
        frame.ip = ip + 1
        try:
            if ctx.shape_env is outside:  # (usually both None: nothing to set for this step)
                result = handlers[ip](frame, ins)
            else:
                with using(ctx.shape_env):  # shape rules consult the capture's symbolic sizes
                    result = handlers[ip](frame, ins)
        except (BreakGraph, Unsupported) as e:
            if stop is not None:
                raise
            raise Restart(Attempt(steps, str(e), getattr(e, "hint", ""))) from None
        except Exception as e:  # as Frame.step: eager Python raises it too, so it runs for real, at a break
            brk = step_error(e)
            if stop is not None:
                raise brk from None
            raise Restart(Attempt(steps, brk.reason, brk.hint)) from None
        # (ctx.frame is this frame again: a call inlined by the step set it back when it returned)
        steps += 1
        # What the step did, to be put in words only if someone asks (Segment.steps): where its nodes start
        # in the graph, and what it left on top of the stack (``top_of_stack``, written out here: the same
        # cases, the commonest first), where the words may depend on it.
        if tops[ip]:
            stack = frame.stack
            if stack:
                top = stack[-1].value
                if top is NULL and len(stack) > 1:  # (3.13 pushes a call's NULL above the callable)
                    top = stack[-2].value
                kind = type(top)
                if kind is Tensor:
                    top = top._value.type  # (its ``type``)
                elif kind not in PLAIN_TOPS:
                    top = top if isinstance(top, PLAIN_TOP_TYPES) else \
                        top.type if isinstance(top, Tensor) else kind
            else:
                top = EMPTY_STACK
        else:
            top = None
        append((ins, n_nodes, top))
        if result is not None and type(result) is Return:
            nodes = list(graph.nodes)  # (before finish_segment adds outputs and removes dead code)
            seg = finish_segment(cf, ctx, frame, offset, "return", result=result.var)
            seg.step_log, seg.step_nodes = log, nodes
            return seg


def finish_segment(cf, ctx, frame, offset, end, stop=None, ins=None, result=None) -> Segment:
    value = result.value if result is not None else None
    writebacks = ()
    if end == "return" and type(value) is Tensor and value._view is None and value._maybe_alias is None and \
            value._version == value._storage.version and value._value.node.op != Op.INPUT and not ctx.writes:
        # The commonest end, a tensor the graph computed returned: what RecipeMaker gives it (its freshness
        # checked, as ``RecipeMaker.tensor`` checks it; not a view, not an input), without making one. After a
        # return nothing of the frame is used again.
        local_recipes, stack_recipes, result_recipe = {}, [], ("out", 0)
        ctx.graph.outputs = [value._value]
    else:
        maker = RecipeMaker(ctx)
        live = end == "break"  # after a return nothing of the frame is used again: no graph outputs for it
        local_recipes = {name: maker.var(v) for name, v in frame.locals.items()} if live else {}
        stack_recipes = [maker.var(v) for v in frame.stack] if live else []
        result_recipe = maker.var(result) if result is not None else None
        if ctx.writes:
            writebacks = ctx.writes.finish(maker)
        ctx.graph.outputs = list(maker.outputs)
    ctx.graph.name = cf.fn.__name__
    if ctx.shape_env is not None:
        ctx.size_guard()
    # (No ``ctx.guards.merge_lower_bounds(counts=(len, iterators.items_left))``: the set was made with these counts, so it
    # merged the lower bounds as they came; see GuardSet.merge_lower_bounds.)
    if not nothing_dead(ctx.graph):  # (usually nothing is: told in one pass, without remove_dead_code's walks)
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


_capture_cache = CodeCache()


def _capture_tables(code: types.CodeType) -> tuple[dict, list[bool]]:
    """What a capture of ``code`` reads from the code alone: a LocalSource for each local variable's name (sources
    are immutable values: one object serves every capture), and ``uses_top_of(code)``."""
    names = code.co_varnames + code.co_cellvars
    return {name: LocalSource(name) for name in names}, uses_top_of(code)


def _guard_function_on_first_use(seg: Segment):
    """A stand-in for ``seg``'s guard function that generates it when first called, and from then on is replaced
    by it. A whole-function graph may never need it (its cache hits take the fast path, which checks the guards
    itself), and for a long program it is the largest piece of generated code."""
    def check(inputs: FrameInputs) -> int:
        seg.check = seg.guards.compile()
        return seg.check(inputs)
    return check
