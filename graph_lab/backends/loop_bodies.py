"""``fori_loop`` nodes in generated code: the body compiled once, by the graph's own backend, and run with the
arrays it carries written in place.

A region is otherwise compiled on its own as plain generated NumPy (``python_source.compiled_region``): no pass,
no buffer reuse, no C kernel, and every ``index_update`` a copy of its base. That is what a loop body must not
be, since it runs once per iteration: a stencil's time step writes into its grid, and unrolled it would do so in
place, in one C kernel. So the body of a ``fori_loop`` is compiled as a graph of its own by the backend compiling
the graph around it (``compiled_by``), with each carried array *donated* (``compile_captured``'s ``donated``):
the loop copies the carries it is given once, then owns them, and after each iteration the old value of a carry
is dead, so the body may compute the new one in its memory, as compile() lets a graph compute an argument's
written-back value in the argument.

A carry is donated only when that is safe whatever the body does: its new value is a new array (no view, no
input handed back), and no output of the body may be a view of an input. Otherwise the loop still runs the
compiled body, with nothing written in place.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from ..ir.graph import Graph
from ..ir.sizes import is_symbolic_graph
from ..ops import Op
from ..ops.aliasing import returns_fresh
from . import python_emitters, python_source
from .c_loops import loop_trips, whole_loop

_BACKEND: ContextVar[str] = ContextVar("loop_body_backend", default="codegen")


@contextmanager
def compiled_by(backend: str):
    """The backend compiling a graph: the ``fori_loop`` bodies its code generation meets are compiled by it too."""
    token = _BACKEND.set(backend)
    try:
        yield
    finally:
        _BACKEND.reset(token)


class CompiledLoop:
    """``fori_loop(lower, upper, *carry)`` with its body compiled once (on the first call)."""

    def __init__(self, body: Graph, backend: str):
        self.body, self.backend = body, backend
        self.names = body.input_names
        self.donated = donated_carries(body)
        """carry input name -> the output that is its next value, for the carries written in place."""
        self._copied = [k for k, name in enumerate(self.names[1:]) if name in self.donated]
        self._run = self._params = self._whole = None
        self.trips = None
        """The number of iterations of the last call (None before the first)."""

    def describe(self) -> str:
        """What explain() says of this loop once it has run."""
        if self._whole is not None:
            return f"a loop of {self.trips} steps in one C call (its body is one C program)"
        return f"a fori_loop of {self.trips} steps running its compiled body once per step"

    def __call__(self, lower, upper, *carry):
        if self._run is None:
            from .compiled import compile_captured  # (compiled.py imports this module)
            with loop_trips(upper - lower):  # (a program is judged over all the steps one C call runs)
                compiled = compile_captured(self.body, self.backend, donated=self.donated)
            self._whole = whole_loop(compiled)
            if self._whole is None and upper - lower > 1:  # called once per step: judged per step
                compiled = compile_captured(self.body, self.backend, donated=self.donated)
            if compiled.input_names != self.names:  # (passes keep a graph's inputs, in order)
                raise AssertionError(f"the compiled loop body takes {compiled.input_names}, not {self.names}")
            self._run, self._params = compiled._run, compiled._params  # (inputs by position, in the body's order)
        carry = list(carry)
        for k in self._copied:  # the loop owns what it writes into: never the arrays it was given
            if type(carry[k]) is np.ndarray:
                carry[k] = carry[k].copy()
        self.trips = max(upper - lower, 0)
        if self._whole is not None:
            return tuple(self._whole(lower, upper, carry))
        run, params = self._run, self._params
        i = lower  # (typed like lower, as ops/control.py's _fori_loop)
        while i < upper:
            carry = run((i, *carry), params)
            i = i + 1
        return tuple(carry)


def loop_notes(consts) -> list[str]:
    """What the loops a generated function passes in (``consts``) did, for ``how_it_runs``."""
    loops = {id(c): c for c in consts if isinstance(c, CompiledLoop) and c.trips is not None}
    return [c.describe() for c in loops.values()]


def donated_carries(body: Graph) -> dict[str, int]:
    """The carries a body may overwrite (see the module docstring): carry k, when the body's output k is a new
    array no other output is, and no output of the body may share memory with an input."""
    inputs = body.input_nodes[1:]  # (input 0 is the index i)
    outputs = body.outputs
    passed = {id(v.node) for v in outputs if v.node.op == Op.INPUT}
    if any(v.node.op != Op.INPUT and not returns_fresh(v.node) for v in outputs):
        return {}
    donated = {}
    for k, (node, out) in enumerate(zip(inputs, outputs)):
        if out.node.op != Op.INPUT and sum(v is out for v in outputs) == 1 and id(node) not in passed:
            donated[node.attrs["name"]] = k
    return donated


def _emit_fori_loop(node, ctx) -> str:
    body = node.attrs["body"]
    if is_symbolic_graph(body) or _BACKEND.get() == "interpret":
        return _emit_region_op(node, ctx)
    return f"{ctx.passed_in(CompiledLoop(body, _BACKEND.get()))}({', '.join(ctx.args(node))})"


_emit_region_op = python_emitters.FAMILY_EMITTERS["control"]
python_emitters.OP_EMITTERS[Op.FORI_LOOP] = _emit_fori_loop
