"""Automatic dynamic for Python ints: a decode position, a length, a count passed in or kept on an object.

An int read from a segment's inputs is a constant of the graph, guarded ``start_pos == 7``. When such a guard (or
one on a number computed from it, ``start_pos + 1 == 8``) fails on a later call because the int changed, the
recompile marks where the int is read from as dynamic, as automatic dynamic does for an array's size
(``runtime.CompiledFunction._mark_dynamic``); TorchDynamo does the same for ints. From then on a capture reads it
as a size symbol (a ``SymInt``): slice bounds (``cache[: start_pos + L]``), allocations (``np.zeros((L,
start_pos))``), ``np.tri(n)`` and arithmetic with it stay symbolic, and what they need to hold (``start_pos + L <=
64``, NumPy's clamping of a slice bound decided) is a shape guard, checked on every call.

An int of 0 or 1 stays specialized, as a size does (``ir/shape_env.py`` says why). A use that needs a Python int
now (``range(n)``, an index into a list) specializes the symbol, guarded, as it does for a size.
"""

from __future__ import annotations

import numpy as np

from ...ir.shape_env import Dim
from ...ir.types import TensorType
from ...ops import REGISTRY, Op
from ..symbols import SymInt
from ..tensor import call_op
from .frame import Var
from .int_lists import in_dynamic_list, mark_dynamic_lists, symbolic_list
from .sources import DerivedSource, IntAsLengthSource, Source


def mark_dynamic_ints(guards: list, inputs, dynamic_ints: set) -> list[str]:
    """Add to ``dynamic_ints`` the source of each int whose change breaks one of ``guards`` (a guard on a number
    computed from ints marks the ints it was computed from). Returns what became dynamic, in words."""
    notes = mark_dynamic_lists(guards, inputs, dynamic_ints)
    for g in guards:
        if g.kind != "equals" or type(g.expected) is not int:
            continue
        try:
            new = g.source.fetch(inputs)
        except Exception:  # (the recompile's reasons say that it could not be read)
            continue
        if type(new) is not int or new == g.expected:
            continue
        leaves = [s for s in _int_leaves(g.source, inputs)
                  if s not in dynamic_ints and not in_dynamic_list(s, dynamic_ints)]
        if not leaves:
            continue
        dynamic_ints.update(leaves)
        what = g.source.describe()
        became = "it becomes" if leaves == [g.source] else \
            ", ".join(s.describe() for s in leaves) + (" becomes" if len(leaves) == 1 else " become")
        notes.append(f"the int {what} changed from {g.expected} to {new}, so {became} dynamic: a size symbol in "
                     f"the new graph, which holds for any value >= 2")
    return notes


def _int_leaves(source: Source, inputs) -> list[Source]:
    """The sources of the ints that ``source`` reads: itself, or those a derived number was computed from."""
    if isinstance(source, DerivedSource):
        leaves = []
        for a in source.args:
            if isinstance(a, Source):
                leaves += [s for s in _int_leaves(a, inputs) if s not in leaves]
        return leaves
    try:
        return [source] if type(source.fetch(inputs)) is int else []
    except Exception:
        return []


def symbolic_int(ctx, value: int, source: Source) -> Var:
    """The int ``value`` read from ``source`` (marked dynamic), as a size symbol of the capture ``ctx``: a new
    symbol ``s<i>`` the first time, bound on each call through an input of the graph (``IntAsLengthSource``)."""
    known = ctx.int_symbols.get(source)
    if known is not None:
        return Var(known)
    env = ctx.symbol_env()
    name = f"s{len(ctx.size_dims)}"
    env.hints[name] = value
    loc = ctx.loc()
    expr = env.declare(Dim(name), loc)
    carrier = IntAsLengthSource(source)
    ctx.size_dims.append((carrier, 0))
    input_name = ctx._input_name(source)
    ctx.graph.add_input(input_name, TensorType(np.dtype(np.bool_), (expr, 0)), loc)
    ctx.input_sources[input_name] = carrier
    symbol = ctx.int_symbols[source] = SymInt(expr, env)
    return Var(symbol)


def index_key(ctx, key: Var):
    """The key of ``x[key]`` on a stand-in: a dynamic list of ints as its graph input (``int_lists.py``), else
    the key's value, as ``index_with_sizes`` makes it."""
    listed = symbolic_list(ctx, key)
    return listed if listed is not None else index_with_sizes(ctx, ctx.use(key))


def index_with_sizes(ctx, key):
    """``key`` for indexing a stand-in, with each list of ints that holds a size symbol (``embedding[[token]]``,
    a token id read as a symbol) made an index array of the graph: a graph constant cannot hold a number known
    only when the graph runs. The array is the one NumPy makes of the list (int64 items, one per entry)."""
    if type(key) is tuple:
        return tuple(index_with_sizes(ctx, k) for k in key)
    if type(key) is not list or not any(isinstance(k, SymInt) for k in key):
        return key
    if not all(type(k) is int or isinstance(k, SymInt) for k in key):
        return key  # (nested lists, floats: as NumPy would, the op's rule refuses them)
    items = [ctx.recorder.size_tensor(k.expr) if isinstance(k, SymInt) else k for k in key]
    return call_op(Op.STACK, items, 0)


def tri_of_sizes(ctx, args: list, kwargs: dict):
    """``np.tri(N, M=None, k=0, dtype=float)`` with a size symbol among its sizes (the causal mask of a growing
    sequence), recorded as ``np.tril(np.ones((N, M), dtype), k)``: the same ones and zeros NumPy's ``tri`` gives.
    None for any other call, which runs as NumPy (a constant of the graph)."""
    names = ("N", "M", "k", "dtype")
    if len(args) > len(names) or any(k not in names for k in kwargs):
        return None
    bound = dict(zip(names, args), **kwargs)
    n, m = bound["N"], bound.get("M")
    if not any(isinstance(d, SymInt) for d in (n, m)):
        return None
    operands, attrs = REGISTRY[Op.FULL].bind((n, n if m is None else m), 1, bound.get("dtype", float))
    ones = ctx.recorder.emit(Op.FULL, operands, attrs)
    return call_op(Op.TRIL, ones, bound.get("k", 0))


def python_key(key):
    """A key into a Python list, tuple or dict: a size symbol is specialized (guarded), since a symbol has no
    hash and a list item is one value, not an expression."""
    return int(key) if isinstance(key, SymInt) else key
