"""compile() and the other captures inside one another: ``grad`` inside compile(), compile() inside ``grad``.

``compile(grad(f))`` and a compiled function that calls ``grad(f)``: the wrapper ``grad`` made is not run as
one of graph_lab's functions (it would trace ``f`` with its own tracer, which reads every array ``f`` takes from
a global or an attribute as a constant). The capture makes the same wrapper again around a function that runs
``f``'s bytecode in this capture, as a call inlined: what ``f`` reads is guarded and its arrays are graph inputs,
and ``grad`` records the forward and backward ops into the graph (AOTAutograd's joint graph, behind Dynamo).

``grad(compiled_f)`` (and ``trace`` of a function calling a compiled one): called on another capture's
stand-ins, a compiled function runs its Python function itself, so that the capture around records its ops
(``fallback.called_in_another_capture``).
"""

from __future__ import annotations

import types

from ..tensor import Tensor
from .fallback import holds_stand_ins
from .frame import BreakGraph, Var
from .guard_set import Guard
from .sources import AttrSource, ItemSource


def differentiates(f):
    """(function, argnums, wrapper maker) of a wrapper made by ``graph_lab.grad`` / ``value_and_grad``, or None."""
    return f.__dict__.get("differentiates") if type(f) is types.FunctionType else None


def grad_call(ctx, frame, fn: Var, args: list[Var], kwargs: dict) -> Var:
    """A call of ``grad(target)`` in capture mode: the wrapper made again around ``target``'s captured bytecode."""
    target, argnums, remake = differentiates(fn.value)
    if kwargs or not any(isinstance(a.value, Tensor) or holds_stand_ins(a.value) for a in args):
        raise BreakGraph("graph_lab.grad called on values that are not inputs of the graph",
                         "it runs as ordinary Python between two graphs")
    source = AttrSource(fn.source, "differentiates") if fn.source is not None else None
    if source is not None:  # the wrapper's own code (grad's or value_and_grad's) and its argnums
        ctx.guards.add(Guard("id", AttrSource(fn.source, "__code__"), fn.value.__code__, ctx.loc()))
        ctx.guards.add(Guard("equals", ItemSource(source, 1), argnums, ctx.loc()))
    target_var = Var(target, ItemSource(source, 0) if source is not None else None)
    inlined, bound_self, self_source, func_source = ctx._python_callable(target_var)
    if inlined is None:
        raise BreakGraph(f"graph_lab.grad of {type(target).__name__} {getattr(target, '__qualname__', '')}, which "
                         f"is not a Python function compile() can capture", "it runs as ordinary Python")
    captured = ctx._captured_function(frame, inlined, bound_self, self_source, func_source)
    return ctx.created(ctx._run(remake(captured, argnums), ctx._raws(args), {}))
