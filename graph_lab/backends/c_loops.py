"""A ``fori_loop`` whose body is one C program (``c_programs``): the whole loop in one C call.

``loop_bodies.CompiledLoop`` compiles a loop's body once and runs it from a Python loop. When the fused backend
computed the whole body as one program (every operation of the body is a statement of it), the program's C
function already loops over ``step`` from ``begin`` to ``end``: called once with the loop's bounds, it runs every
iteration in C. The carries are its buffers, written in place as the body writes them (the loop copied the ones
it writes, so the caller's arrays are never touched); that needs each carry's next value to be in its own array
(an output that is a later version of the same input, or the input unchanged) and every number it reads to be
a loop invariant (output k is input k). Anything else runs the body per iteration, as before.

The body is compiled knowing the number of iterations of the first call (``trips``): the cost model judges a
program over all of them, since one call runs them all.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable

from ..ops import SOURCE_OPS

_TRIPS: ContextVar[int] = ContextVar("loop_trips", default=1)


@contextmanager
def loop_trips(trips: int):
    """The graph being compiled is a loop body run ``trips`` times by one call."""
    token = _TRIPS.set(max(int(trips), 1))
    try:
        yield
    finally:
        _TRIPS.reset(token)


def trips() -> int:
    """How many times one call runs the program of the graph being compiled (1 outside a loop body)."""
    return _TRIPS.get()


def whole_loop(compiled) -> Callable | None:
    """``run(lower, upper, carry) -> carry`` running the loop in one C call, or None when the body is not one
    program with its carries in place."""
    programs = getattr(compiled, "stencils", [])
    if len(programs) != 1 or getattr(compiled, "kernels", None) or not hasattr(programs[0], "statements") \
            or getattr(programs[0], "function", None) is None:
        return None
    p, g = programs[0], compiled.graph
    taken = {id(n) for n in p.taken()}
    if any(n.op not in SOURCE_OPS and id(n) not in taken for n in g.nodes):
        return None
    inputs = [n.outputs[0] for n in g.input_nodes]
    position = {v: k for k, v in enumerate(inputs)}
    if len(g.outputs) != len(inputs) - 1:
        return None
    for k, out in enumerate(g.outputs):
        start = inputs[k + 1]
        if out is not start and not (out in p.buffer_of and p.buffer_of.get(start) == p.buffer_of[out]):
            return None  # a carry whose next value is not in its own array
    if any(position.get(v, 0) == 0 for v in p.bases):
        return None  # a buffer the body made, or the loop index
    if any(g.outputs[position[v] - 1] is not v for v, _ in p.scalars):
        return None  # a number that changes from one iteration to the next
    from .c_program_code import program_call  # (it imports the programs' module, which imports the cost model)
    call = program_call(p.function, p, g, bounds=None)
    carried = [position[v] - 1 for v in p.bases]

    def run(lower, upper, carry: list) -> list:
        call(int(lower), int(upper), *[carry[k] for k in carried])
        return carry

    return run
