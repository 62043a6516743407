"""Which nodes may write into the memory of one of their operands instead of into a new array.

Functionalization records every write as a new value: ``B[1:-1] = expr`` as ``%9 = index_update %1, %8``,
``x[mask] -= L`` as ``%9 = where %m, %8, %1`` and ``x += v`` as ``%9 = add %1, %v``. Run as written, each such
write makes a whole new array, where eager NumPy writes into ``x`` itself; a loop of row updates (``A[i, j:] -=
...``) then copies the matrix once per row, and a time loop of ``pos += vel * dt; pos[pos >= L] -= L`` allocates two
arrays per step. The new array is needed only while something may still read the old value. So a node *updates*
its operand ``x`` (the result is ``x``'s array, written in place) when it is one of

- an ``index_update`` of ``x`` (``x[key] = value``);
- a ``where(mask, value, x)`` of ``x``'s shape and dtype with a bool mask (``np.copyto(x, value, where=mask)``: the
  elements the mask selects get ``value``'s, as ``x[mask] = value[mask]`` would give them);
- a NumPy ufunc line with ``x`` among its operands, of the result's shape and dtype (``np.add(x, v, out=x)``, as
  ``x += v`` runs: NumPy's ufuncs read an operand that overlaps ``out`` as if it had been copied first), on the
  chain of updates to a donated input's final value (a fresh array that small is cheaper to allocate than to
  pass ``out=``: ``codegen.plan_buffers`` decides for those from 32 KiB);

and

- ``x``'s memory is owned: the fresh result of an op that returns new memory (``ops/aliasing.py``), an update
  written in place before it, or an input *donated* to the graph: an array of the caller's whose final value the
  graph returns and the caller copies back into it (``compile()``'s write-backs, ``mutation.write_back``); a
  donated array is written only by the chain of updates that leads to its final value, so anything else the
  graph computes stays its own;
- nothing reads the old value, or a value that may share its memory (a view of it), after this node (graph
  outputs are read at the end);
- no index array of the key, and neither the mask nor the value of a ``where``, may share that memory (the value
  of an ``index_update`` may, with a key of slices and integers: NumPy's assignment reads an overlapping
  right-hand side as if it had been copied first, as eager code sees it).

The values written are the same, by the same NumPy call, so the results are bit for bit those of the new array.
One walk over the nodes (the alias sets are those of ``codegen.plan_buffers``). A backend that computes some
nodes in code of its own says which (``elsewhere``): they write into no operand. The fused backend's kernels also
run later, where their last node was: it checks that they still read what the graph means
(``reordering.keep_in_order``).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ops import SOURCE_OPS, Op
from ..ops.aliasing import returns_fresh
from ..ops.indexing import Slot, index_update_in_place
from . import python_source
from .python_source import numpy_ufunc
from .view_writes import casts_alike, find_view_writes, writes_through

_NEVER = 1 << 60
_BOOL = np.dtype(bool)


def in_place_updates(graph: Graph, donated: Mapping[str, int] | None = None,
                     elsewhere: frozenset[int] = frozenset(), ufunc_lines: bool = True) -> dict[int, Value]:
    """``id(node) -> operand value`` for each node that may write into that operand's memory (see the module
    doc). ``donated``: graph input name -> the index of the output whose value is copied into that input's array
    when the graph has run. ``elsewhere``: the ids of the nodes a backend computes in code of its own (a fused
    kernel's), each into a new array: none of them writes into an operand or into the window it updates.
    ``ufunc_lines=False``: ufunc lines on a donated input's chain make new arrays (the C programs are looked for
    so: a statement reading a round of ``state ^= state << 13`` may then run after the later rounds)."""
    last_use: dict[Value, int] = {}
    nodes = graph.nodes
    for i, node in enumerate(nodes):
        for v in node.inputs:
            last_use[v] = i
    for v in graph.outputs:
        last_use[v] = _NEVER
    writers = _donated_chains(graph, donated or {})  # id(update node) -> the donated input it may write into
    chains = writers if ufunc_lines else {}

    views = find_view_writes(graph)
    position = {id(n): i for i, n in enumerate(nodes)} if views else {}

    roots: dict[Value, frozenset] = {}  # the buffers (owning values) a value may share memory with
    live_end: dict[Value, int] = {}  # buffer -> the last position at which a value sharing it is read
    holder: dict[Value, Value] = {}  # buffer -> the value that now holds its contents (not a view of it)
    members: dict[Value, list] = {}  # buffer -> the values that may share it
    decided = InPlace()

    def shares(out: Value, rs: frozenset) -> None:
        roots[out] = rs
        for r in rs:
            live_end[r] = max(live_end.get(r, -1), last_use.get(out, -1))
            members.setdefault(r, []).append(out)

    for i, node in enumerate(nodes):
        if node.op in SOURCE_OPS:
            v = node.outputs[0]
            donor = writers.get(("input", v))
            holder[v] = v
            shares(v, frozenset([v]) if donor else frozenset())
            continue
        through = views.get(id(node)) if id(node) not in elsewhere else None
        root = through and writes_through(node, *through, i, position, roots, holder, members, last_use, writers)
        if root is not None:  # computed in the window it updates (``view_writes.py``)
            decided[id(node)] = through[0]
            decided.written_through.add(id(through[1]))
            shares(node.outputs[0], frozenset([root]))
            continue
        found = None if id(node) in elsewhere else _writable(node, i, roots, holder, live_end, writers, chains)
        if found is not None:
            base, root = found
            decided[id(node)] = base
            holder[root] = node.outputs[0]
            shares(node.outputs[0], frozenset([root]))
            continue
        fresh = returns_fresh(node)
        for out in node.outputs:
            if fresh:
                holder[out] = out
            shares(out, frozenset([out]) if fresh else frozenset().union(*(roots[u] for u in node.inputs)))
    return decided


def writes_in_place(in_place: dict) -> int:
    """How many of the program's writes are made in place (a write into a window is two nodes, one write)."""
    return len(in_place) - len(getattr(in_place, "written_through", ()))


class InPlace(dict):
    """``id(node) -> the operand whose memory it writes into``; ``written_through``: the ids of the updates
    whose value was computed in their window already (``view_writes.py``), which have nothing left to copy."""

    def __init__(self):
        super().__init__()
        self.written_through: set[int] = set()


def update_operands(node: Node) -> list[Value]:
    """The operands ``node`` could update in place by its form alone (see the module doc), in order."""
    if not node.outputs or node.outputs[0].type.ndim == 0:
        return []
    out = node.outputs[0].type
    if node.op == Op.INDEX_UPDATE:
        return [node.inputs[0]]
    if node.op == Op.WHERE:
        mask, value, base = node.inputs
        same = base.type.weak is None and base.type.shape == out.shape and base.type.dtype == out.dtype
        ok = same and mask.type.dtype == _BOOL and mask.type.weak is None and casts_alike(value, out.dtype)
        return [base] if ok else []
    return []


def chain_operands(node: Node) -> list[Value]:
    """``update_operands``, and for a ufunc line its array operands of the result's shape and dtype: the operands
    it may update when it is on the chain to a donated input's final value (``x += v`` is ``np.add(x, v,
    out=x)``)."""
    found = update_operands(node)
    if found or not node.outputs:
        return found
    ufunc = numpy_ufunc(node)
    out = node.outputs[0].type
    if ufunc is None or ufunc.nout != 1 or len(node.inputs) != ufunc.nin or out.ndim == 0:
        return []
    return [v for v in node.inputs if v.type.weak is None and v.type.shape == out.shape and v.type.dtype == out.dtype]


def _writable(node: Node, i: int, roots, holder, live_end, writers, chains) -> tuple[Value, Value] | None:
    """``(operand, buffer)``: the first operand ``node`` may update and the buffer it writes into, or None."""
    for base in update_operands(node) or (chain_operands(node) if id(node) in chains else ()):
        root = _writable_root(node, base, i, roots, holder, live_end, writers)
        if root is not None:
            return base, root
    return None


def _writable_root(node: Node, base: Value, i: int, roots, holder, live_end, writers) -> Value | None:
    rs = roots[base]
    if len(rs) != 1:
        return None
    (root,) = rs
    if holder.get(root) is not base or live_end[root] > i:
        return None  # a view of the buffer, or an older value of it read later
    if root.node.op in SOURCE_OPS and writers.get(id(node)) is not root:
        return None  # a donated input, written only by the chain to its final value
    if node.op == Op.INDEX_UPDATE:
        has_slots = any(isinstance(k, Slot) for k in node.attrs["key"])
        for pos, v in enumerate(node.inputs[1:], 1):
            if root in roots[v] and (pos > 1 or has_slots):
                return None
    elif node.op == Op.WHERE:
        if any(root in roots[v] for v in node.inputs[:2]):
            return None  # (copyto's where= path is not promised to read an overlapping source first)
    return root


def _donated_chains(graph: Graph, donated: Mapping[str, int]) -> dict:
    """For each donated input: ``id(update) -> input value`` along the chain of updates from its final value
    back to it, and ``("input", value) -> True``."""
    inputs = {n.attrs["name"]: n.outputs[0] for n in graph.nodes if n.op == Op.INPUT}
    writers: dict = {}
    for name, index in donated.items():
        start = inputs.get(name)
        if start is None or not 0 <= index < len(graph.outputs):
            continue
        reach = _reachable_by_updates(graph, start)
        chain, v = [], graph.outputs[index]
        while v is not start and v in reach:
            chain.append(v.node)
            v = next(u for u in chain_operands(v.node) if u in reach)
        if v is start and chain:
            writers[("input", start)] = True
            for n in chain:
                writers[id(n)] = start
    return writers


def _reachable_by_updates(graph: Graph, start: Value) -> set[Value]:
    """The values that a chain of update forms leads to from ``start`` (``start`` included)."""
    reach = {start}
    for node in graph.nodes:
        if node.op not in SOURCE_OPS and any(u in reach for u in chain_operands(node)):
            reach.add(node.outputs[0])
    return reach


def in_place_statement(node, ctx, in_place: dict | None = None) -> tuple[str, str]:
    """``v1[1:-1,] = v8``: the update written into its base's memory, as eager code writes it; the result is
    the base, so later lines read it by the base's name. (A key that cannot be written as a subscript:
    ``v9 = update_in_place(v1, v8, key=consts[1])``.)"""
    if node.op == Op.WHERE or id(node) in getattr(in_place, "written_through", ()):
        return masked_statement(node, ctx, in_place)
    base, out = node.inputs[0], node.output
    target = python_source._emit_subscript(node, ctx)  # (the index op's subscript, for the update's key)
    if target.startswith(f"{ctx.var(base)}["):
        code = f"{target} = {ctx.var(node.inputs[1])}"
        ctx.numbering[out] = ctx.numbering[base]
    else:
        ctx.impls["update_in_place"] = index_update_in_place
        code = f"{ctx.var(out)} = update_in_place({', '.join(ctx.args(node) + ctx.kwargs(node.attrs))})"
    return code, f"{out.type}   written into the memory of {ctx.var(base)}"


def copied_update_statement(node: Node, ctx) -> tuple[str, str] | None:
    """``(v9 := np.array(v2, copy=True))[1:-1] = v8``: an update that may not write into its base (a constant,
    such as a ``zeros_like`` folded by ``fold``; an argument; an old value read later) copies the base, as
    ``index_update``'s implementation does, then writes by subscript, as eager code writes into a fresh array.
    (The implementation turns the key into slices on every call: 1-4 us a write, measured.) None when the key
    has no subscript form (index arrays read by ``np.add.at``, spans checked at run time)."""
    base, out = node.inputs[0], node.output
    if node.attrs.get("mode") is not None or base.type.ndim == 0:
        return None
    target = python_source._emit_subscript(node, ctx)
    if not target.startswith(f"{ctx.var(base)}["):
        return None
    copy = f"({ctx.var(out)} := np.array({ctx.var(base)}, copy=True))"
    return f"{copy}{target[len(ctx.var(base)):]} = {ctx.var(node.inputs[1])}", \
        f"{out.type}   a copy of {ctx.var(base)}, written"


def masked_statement(node: Node, ctx, in_place) -> tuple[str, str]:
    """``v4 = where_into(v6, v8, v4)``: ``where(mask, value, x)`` written into ``x``'s memory, as eager code's
    ``x[mask] = value[mask]`` writes it; the result is ``x``, so later lines read it by ``x``'s name. Into a
    window (``view_writes.py``): ``np.copyto(v1, v8, where=v6)``, and the window's update then writes nothing."""
    through = getattr(in_place, "written_through", ())
    if id(node) in through:
        ctx.numbering[node.output] = ctx.numbering[node.inputs[0]]
        return "", ""
    mask, value, base = node.inputs
    if any(id(n) in through for n in node.output.users):
        ctx.numbering[node.output] = ctx.numbering[base]
        return f"np.copyto({ctx.var(base)}, {ctx.var(value)}, where={ctx.var(mask)})", \
            f"{node.output.type}   written into the window {ctx.var(base)}"
    ctx.impls["where_into"] = where_into
    code = f"{ctx.var(base)} = where_into({ctx.var(mask)}, {ctx.var(value)}, {ctx.var(base)})"
    ctx.numbering[node.output] = ctx.numbering[base]
    return code, f"{node.output.type}   written into the memory of {ctx.var(base)}"


def where_into(mask: np.ndarray, value, base: np.ndarray) -> np.ndarray:
    """``np.where(mask, value, base)`` in ``base``'s memory (returned), when that memory is laid out as the new
    array would be: C order (``np.where`` makes a C-ordered result unless every operand is Fortran-ordered). Else
    the new array: a later sum over it adds in the order of its layout, so the layout is part of the result."""
    if base.flags.c_contiguous:
        np.copyto(base, value, where=mask)
        return base
    return np.where(mask, value, base)
