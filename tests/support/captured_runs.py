"""A function captured by compile()'s frontend and compiled on its own, then run on fresh data with compile()'s
write-backs beside eager NumPy: what the C program tests share."""

from __future__ import annotations

import numpy as np

from graph_lab.backends.compiled import compile_captured
from graph_lab.frontends.dynamo.mutation import donated_inputs, write_back
from graph_lab.frontends.dynamo.runtime import CompiledFunction
from graph_lab.frontends.dynamo.sources import FrameInputs


def capture_segment(fn, args):
    """The one segment compile()'s frontend captures from ``fn(*args)`` (called on copies)."""
    capture = CompiledFunction(fn, backend="codegen")
    with np.errstate(all="ignore"):  # (random programs divide by zero)
        capture(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    (event,) = capture.last_events
    return event.segment


def compiled_segment(fn, args, options):
    """``(segment, compiled graph)``: ``fn(*args)`` captured and compiled by the fused backend with ``options``."""
    seg = capture_segment(fn, args)
    return seg, compile_captured(seg.graph, backend="fused", options=options, donated=donated_inputs(seg))


def run_both(fn, seg, cg, data: list):
    """``cg`` on copies of ``data`` with the segment's write-backs, and ``fn`` eagerly on other copies:
    (the graph's outputs, the arrays it ran on, eager's result, the arrays eager ran on)."""
    mine = [d.copy() if isinstance(d, np.ndarray) else d for d in data]
    eager = [d.copy() if isinstance(d, np.ndarray) else d for d in data]
    frame = FrameInputs(dict(zip(fn.__code__.co_varnames, mine)), [], fn.__globals__, ())
    outs = cg.run({name: s.fetch(frame) for name, s in zip(cg.input_names, seg.input_sources)})
    write_back(seg.writebacks, frame, outs)
    with np.errstate(all="ignore"):
        result = fn(*eager)
    return outs, mine, result, eager


def assert_like_eager(fn, seg, cg, data: list) -> None:
    """``run_both``, then every result and every argument array equal to eager's, bit for bit and dtype."""
    outs, mine, expected, eager = run_both(fn, seg, cg, data)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(outs) >= len(expected)  # (then the values written back into the arguments)
    for got, want in zip(outs, expected):
        np.testing.assert_array_equal(got, want, strict=True)
    for m, e in zip(mine, eager):
        if isinstance(e, np.ndarray):
            np.testing.assert_array_equal(m, e, strict=True)
