"""Automatic dynamic for lists of Python ints: the token ids of a decode, a list that grows by one at each step.

A list read from a segment's inputs is guarded item by item (``ids[3] == 42``) and by its length: a decode
that feeds ``ids`` (``embedding[ids]``, ``positions[:len(ids)]``) to a graph would recompile at every step.
When a recompile finds that such a list changed length (``mark_dynamic_lists``), its source becomes dynamic
(in the same set as the ints of ``dynamic_ints.py``), and later captures read it as one graph input: the array
``np.array(ids)``, an ``int64`` vector whose length is a size symbol. Three uses of the list take it:

- as the index of a stand-in (``tokens[ids]``): NumPy itself indexes with ``np.array(ids)`` when given the list;
- ``len(ids)``: the size symbol, so slices and shapes that use it stay symbolic;
- ``np.array(ids)`` and ``np.asarray(ids)``: a copy of that input (each call of theirs makes a new array);

and a slice of it with constant bounds (``ids[len(prompt):]``, the tokens a decode returns) is a new list made
again on each call from the list (a derived source), guarded only to be a list.

The input is made on each call by ``IntListSource``, which refuses anything whose ``np.array`` is not a vector
of int64 (a float or a nested list among the items, a bool list that NumPy would read as a mask, an empty
list): the segment's guards fail and it is captured again, reading the list item by item as before. Any other use
of the list (iterating over it, ``ids[0]``) reads its items as before too, guarded. A length of 0 or 1 stays
specialized, as an array's size does.
"""

from __future__ import annotations

import numpy as np

from ...ir.shape_env import Dim
from ...ir.types import TensorType
from ...ops import Op
from ..symbols import SymInt
from ..tensor import Storage, Tensor, call_op
from .frame import Var
from .guard_set import Guard
from .sources import Const, DerivedSource, Source

INT64 = np.dtype(np.int64)


def _index_array(items) -> np.ndarray:
    if type(items) is not list:
        raise TypeError(f"a dynamic list of ints is a list, got {type(items).__name__}")
    array = np.array(items)
    if array.dtype != INT64 or array.ndim != 1:
        raise TypeError(f"np.array of the list is {array.dtype}[{array.ndim}-d], not a vector of int64")
    return array


def as_index_array(items) -> np.ndarray | None:
    """``np.array(items)`` when it is a vector of int64 of length >= 2, else None."""
    try:
        array = _index_array(items)
    except (TypeError, ValueError, OverflowError):
        return None
    return array if len(array) >= 2 else None


class IntListSource(DerivedSource):
    """A list of ints that automatic dynamic made one graph input: ``np.array`` of it, refused (so that a guard
    on it fails) unless that is a vector of int64."""

    def __init__(self, source: Source):
        super().__init__(_index_array, (source,), "np.array({0})")


def _length_guard_source(g) -> Source | None:
    """The list whose length guard ``g`` is: ``len(xs) == 7`` (a "len" guard, or an "equals" one on ``len(xs)``)."""
    if g.kind == "len":
        return g.source
    if g.kind == "equals" and type(g.expected) is int and isinstance(g.source, DerivedSource) and \
            g.source.fn is len and len(g.source.args) == 1 and isinstance(g.source.args[0], Source):
        return g.source.args[0]
    return None


def mark_dynamic_lists(guards: list, inputs, dynamic: set) -> list[str]:
    """Add to ``dynamic`` the source of each list of ints whose length guard failed (it grew or shrank), when the
    list is now a vector of int64 for NumPy. Returns what became dynamic, in words."""
    notes = []
    for g in guards:
        source = _length_guard_source(g)
        if source is None or source in dynamic:
            continue
        try:
            items = source.fetch(inputs)
        except Exception:  # (the recompile's reasons say that it could not be read)
            continue
        if type(items) is not list or len(items) == g.expected or as_index_array(items) is None:
            continue
        dynamic.add(source)
        notes.append(f"the list of ints {source.describe()} changed length from {g.expected} to {len(items)}, so "
                     f"it becomes dynamic: one int64 input of the new graph (np.array of it), its length a size "
                     f"symbol, which holds for any length >= 2")
    return notes


def in_dynamic_list(source: Source, dynamic: set) -> bool:
    """Whether ``source`` is an item of a list that is dynamic (its ints are not marked one by one)."""
    return getattr(source, "base", None) in dynamic


def symbolic_list(ctx, var: Var) -> Tensor | None:
    """The graph input holding ``np.array`` of the list ``var`` (made the first time), when its source is
    dynamic and its items make a vector of int64; else None (the list is read as before)."""
    source = var.source
    if source is None or type(var.value) is not list or not ctx.dynamic_ints or source not in ctx.dynamic_ints:
        return None
    carrier = IntListSource(source)
    known = ctx.int_symbols.get(carrier)  # (the capture's size symbols by source, and these inputs by theirs)
    if known is not None:
        return known
    array = as_index_array(var.value)
    if array is None:
        return None
    env = ctx.symbol_env()
    name = f"s{len(ctx.size_dims)}"
    env.hints[name] = len(array)
    loc = ctx.loc()
    length = env.declare(Dim(name), loc)
    ctx.size_dims.append((carrier, 0))
    input_name = ctx._input_name(carrier)
    value = ctx.graph.add_input(input_name, TensorType(INT64, (length,)), loc)
    ctx.input_sources[input_name] = carrier
    ctx.guards.add(Guard("type", source, list, loc))
    ctx.guards.add(Guard("dims", carrier, ((None,), INT64), loc))
    t = ctx.int_symbols[carrier] = Tensor(ctx.recorder, value, Storage(f"np.array({source.describe()})"))
    return t


def list_length(ctx, var: Var) -> Var | None:
    """``len(xs)`` of a dynamic list of ints: its size symbol."""
    t = symbolic_list(ctx, var)
    return None if t is None else Var(SymInt(t._value.type.shape[0], ctx.shape_env))


def list_as_array(ctx, var: Var) -> Tensor | None:
    """``np.array(xs)`` / ``np.asarray(xs)`` of a dynamic list of ints: a new array, as NumPy makes one."""
    t = symbolic_list(ctx, var)
    return None if t is None else call_op(Op.COPY, t)


def _list_slice(items, start, stop, step):
    return items[start:stop:step]


def dynamic_list_slice(ctx, container: Var, key) -> Var | None:
    """``xs[a:b:c]`` of a dynamic list with int (or None) bounds: the new list, read again on each call by slicing
    the list then, with no guard on the list's length or items; else None (the list is read item by item)."""
    source = container.source
    if type(key) is not slice or type(container.value) is not list or not ctx.dynamic_ints or \
            source not in ctx.dynamic_ints or any(b is not None and type(b) is not int
                                                  for b in (key.start, key.stop, key.step)):
        return None
    ctx.guards.add(Guard("type", source, list, ctx.loc()))
    parts = (source, Const(key.start), Const(key.stop), Const(key.step))
    return Var(container.value[key], DerivedSource(_list_slice, parts, "{0}[{1}:{2}:{3}]"))
