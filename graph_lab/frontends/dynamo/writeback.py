"""Writing back only the written region: ``x[2:5] = v`` into the caller's array as ``x[2:5] = v``, not a copy of x.

Functionalization (``mutation.py``) makes a write into an argument an ``index_update`` of the graph, and by default
the argument's whole final value is an output, copied into the caller's array when the graph ends. When the
graph writes a part of the array only (a slice, a row, an index array, a mask), that copy moves the whole array
to change a few elements. Here the write-back is the writes themselves: the graph's outputs are the new
contents of each region (and the index arrays or positions it computes), and after the graph has run each write
is made in the caller's array, in the program's order, with NumPy's own assignment::

    x[key] = value                    an index_update           (a symbolic bound is evaluated for this call)
    np.add.at(x, key, value)          an accumulating one       (``mode``: np.add.at and its siblings)
    np.copyto(x, value, where=mask)   a masked write            (``x[mask] = v``, captured as ``where``)

These are the statements eager code ran, on the values it would have given them, so the caller's array ends bit
for bit as eager code leaves it, in place (its views see the change). The chain of updates is then unread and
``remove_dead_code`` drops it: the graph no longer builds the whole new array.

Used only when that is exactly right: the final value is a chain of such updates starting at the argument itself,
nothing else in the graph reads a value of the chain (a read needs the whole array: then the whole final value is
written back, and the backend may compute it in the caller's array, see ``mutation.donated_inputs``), and no write
after the first takes a value that may be a view of the argument (the first write has already changed it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir.graph import Value
from ...ir.sizes import bind_attrs, has_symbols, symbol_sources
from ...ir.symbolic import free_symbols
from ...ops import Op
from ...ops.aliasing import may_be_view
from ...ops.indexing import ACCUMULATE, fill_key


@dataclass(frozen=True)
class RegionWrite:
    """One write of the program into the argument, made again in the caller's array."""

    kind: str
    """``set`` (``x[key] = value``), ``accumulate`` (``ACCUMULATE[mode].at``) or ``masked`` (copyto where)."""
    operands: tuple
    """The node's operands after the base: ``("out", k)`` for a graph output, ``("const", value)`` otherwise."""
    key: tuple = ()
    """The index template (``Slice``, ints, ``Slot``s numbered as the node's operands); may hold size symbols."""
    mode: str | None = None


@dataclass(frozen=True)
class Regions:
    """The write-back of one argument as the writes into its regions, in order (``write_back``'s index)."""

    writes: tuple
    symbols: tuple = ()
    """``(symbol, source, axis)`` of each size symbol a key holds: read from that array's shape on each call."""

    def write(self, array: np.ndarray, outs: list, *shaped: np.ndarray) -> None:
        """Make the writes in ``array`` (the caller's), with the graph's outputs ``outs``; ``shaped``: the arrays
        of ``symbols``' sources, in that order, whose sizes the keys hold."""
        sizes = {name: a.shape[axis] for (name, _, axis), a in zip(self.symbols, shaped)}
        for w in self.writes:
            values = [outs[x] if kind == "out" else x for kind, x in w.operands]
            if w.kind == "masked":
                np.copyto(array, values[1], casting="unsafe", where=values[0])
                continue
            key = bind_attrs({"key": w.key}, sizes)["key"] if sizes else w.key
            key = fill_key(key, [array] + values)
            if w.kind == "set":
                array[key] = values[0]
            else:
                ACCUMULATE[w.mode].at(array, key, values[0])


def plan(final: Value, source, maker) -> Regions | None:
    """The region write-back of the argument read from ``source`` whose final value is ``final``, or None when
    the whole final value must be written back. Adds the graph outputs it needs through ``maker``."""
    if any(_read_later(n, maker) for n in final.users):
        return None  # the graph reads the final value: the whole array is needed anyway
    chain = []
    value = final
    while value.node.op in (Op.INDEX_UPDATE, Op.WHERE):
        node = value.node
        base = node.inputs[0] if node.op == Op.INDEX_UPDATE else node.inputs[2]
        if node.op == Op.WHERE and not _same_shape(base, value):
            return None  # (a where that broadcasts its base is no masked write)
        chain.append(node)
        value = base
        if value.node.op == Op.INPUT:
            break
        if len(value.users) != 1:
            return None  # a value of the chain another node reads (or reads twice): the whole array is needed
    if not chain or value.node.op != Op.INPUT or maker.ctx.input_sources.get(value.node.attrs["name"]) != source:
        return None
    argument = value
    chain.reverse()
    for later in chain[1:]:
        operands = later.inputs[1:] if later.op == Op.INDEX_UPDATE else later.inputs[:2]
        if any(_may_view(v, argument) for v in operands):
            return None  # it would read the argument after the first write changed it
    symbols = _symbols_of(chain, maker)
    if symbols is None:
        return None
    return Regions(tuple(_write_of(node, maker) for node in chain), symbols)


def _read_later(node, maker) -> bool:
    """Whether ``node``'s results are read by the graph: an output, or an operand of a node that is (a view
    taken again after a write through it, ``tensor._view_again``, is often never read)."""
    pending, seen = [node], set()
    while pending:
        n = pending.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        for v in n.outputs:
            if v in maker._out_index:
                return True
            pending.extend(v.users)
    return False


def _write_of(node, maker) -> RegionWrite:
    if node.op == Op.WHERE:
        return RegionWrite("masked", tuple(_operand(v, maker) for v in node.inputs[:2]))
    operands = tuple(_operand(v, maker) for v in node.inputs[1:])
    mode = node.attrs.get("mode")
    # (the key's Slots count the base as operand 0, which ``Regions.write`` puts back in front)
    return RegionWrite("set" if mode is None else "accumulate", operands, node.attrs["key"], mode)


def _operand(v: Value, maker) -> tuple:
    if v.node.op == Op.CONST:
        return ("const", v.node.attrs["value"])
    return ("out", maker.output(v))


def _same_shape(a: Value, b: Value) -> bool:
    return tuple(a.type.shape) == tuple(b.type.shape)


def _may_view(v: Value, argument: Value) -> bool:
    """Whether ``v`` may share the argument's memory: it is the argument, or a view of one that may be."""
    seen = set()
    todo = [v]
    while todo:
        v = todo.pop()
        if v is argument:
            return True
        if id(v) in seen or not may_be_view(v.node):
            continue
        seen.add(id(v))
        todo += v.node.inputs
    return False


def _symbols_of(chain, maker) -> tuple | None:
    """``(symbol, source, axis)`` for the size symbols of the keys, or None when one is not an input's size."""
    names = set()
    for node in chain:
        if node.op == Op.INDEX_UPDATE and has_symbols(node.attrs["key"]):
            for part in node.attrs["key"]:
                names |= free_symbols(tuple(part) if isinstance(part, tuple) else part)
    if not names:
        return ()
    where = symbol_sources(maker.ctx.graph)
    if not names <= set(where):
        return None
    sources = maker.ctx.input_sources
    return tuple((name, sources[where[name][0]], where[name][1]) for name in sorted(names))


def is_region(index) -> bool:
    """Whether a write-back's index is a ``Regions`` (else the output holding the whole final value)."""
    return type(index) is Regions

