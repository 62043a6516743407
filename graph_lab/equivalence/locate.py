"""Which graph a difference comes from, when a capture ran several.

``compile()`` runs a call as segments: a graph, then one instruction of ordinary Python at the graph break, then
the next graph. After each segment the frame's local variables are rebuilt from the graph's outputs. To find
the first segment that went wrong, the call is run again with each segment's rebuilt locals recorded, and the
eager function is run under a tracer that records its locals when it reaches the same instructions; the first
segment after which a local variable differs is the one to blame.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..frontends.dynamo.runtime import CompiledFunction
from ..ir.graph import Graph
from .compare import compare


def graphs_of_last_call(captured: Any) -> list[Graph]:
    """The graphs (with at least one op) the capture ran in its last call, in order."""
    if isinstance(captured, Graph):
        return [captured]
    if isinstance(captured, CompiledFunction):
        return [e.segment.graph for e in captured.last_events if e.segment.graph.count()]
    return list(getattr(captured, "last_graphs", []) or [])


def blame(fn, captured: Any, arrays: dict, extra: tuple, graphs: list[Graph]) -> str | None:
    """A sentence naming the segment a difference comes from (compiled functions with several graphs)."""
    if not isinstance(captured, CompiledFunction) or len(captured.last_events) < 2:
        return None
    try:
        steps = _segment_locals(captured, [a.copy() for a in arrays.values()], extra)
        offsets = [seg.break_offset for seg, _ in steps if seg.end == "break"]
        eager = _eager_locals_at(fn, [a.copy() for a in arrays.values()], extra, offsets)
    except Exception:
        return None
    for k, ((seg, local_vars), eager_vars) in enumerate(zip(steps, eager)):
        for name, want in eager_vars.items():
            if name not in local_vars:
                continue
            found = compare(want, local_vars[name], path=name)
            if found is not None:
                return (f"segment {k + 1} of {len(steps)} (bytecode offset {seg.start}, {seg.graph.count()} ops, "
                        f"ending at the break at {seg.break_loc}): after it, local {found}")
    seg = steps[-1][0] if steps else None
    if seg is None:
        return None
    return (f"the last segment (bytecode offset {seg.start}, {seg.graph.count()} ops): every local variable "
            f"agreed with eager code at each graph break before it")


def _segment_locals(cf: CompiledFunction, args: list, extra: tuple) -> list[tuple[Any, dict]]:
    """Run ``cf`` once more, recording each segment run and the locals it rebuilt (in order)."""
    steps: list[tuple[Any, dict]] = []
    segments = [seg for entries in cf.cache.values() for seg in entries]

    def recording(seg):
        method = type(seg).execute

        def execute(inputs):
            result, local_vars, stack = method(seg, inputs)
            steps.append((seg, dict(local_vars or {})))
            return result, local_vars, stack
        return execute

    for seg in segments:
        seg.execute = recording(seg)
    try:
        cf(*args, *extra)
    finally:
        for seg in segments:
            del seg.execute
    return steps


def _eager_locals_at(fn, args: list, extra: tuple, offsets: list[int]) -> list[dict]:
    """Copies of ``fn``'s locals each time it reaches the next of ``offsets`` (before running it)."""
    code, found = fn.__code__, []

    def on_call(frame, event, arg):
        if frame.f_code is not code:
            return None
        frame.f_trace = on_opcode  # (3.13 sends opcode events only to a frame whose f_trace is set first)
        frame.f_trace_opcodes = True
        return on_opcode

    def on_opcode(frame, event, arg):
        if event == "opcode" and len(found) < len(offsets) and frame.f_lasti == offsets[len(found)]:
            found.append({k: np.array(v, copy=True) if isinstance(v, np.ndarray) else v
                          for k, v in frame.f_locals.items()})
        return on_opcode

    previous = sys.gettrace()
    here = sys._getframe()
    # 3.12 turns opcode events on when the trace function is set, and only if some frame asks for them then
    asked, here.f_trace_opcodes = here.f_trace_opcodes, True
    sys.settrace(on_call)
    here.f_trace_opcodes = asked
    try:
        with np.errstate(all="ignore"):
            fn(*args, *extra)
    finally:
        sys.settrace(previous)
    return found
