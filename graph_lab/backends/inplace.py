"""Which ``index_update`` nodes may write into their base's memory instead of into a copy of it.

Functionalization records ``B[1:-1] = expr`` as ``%9 = index_update %1, %8``: a new array, ``B`` with the slice
replaced. Run as written, each such write copies the whole array, where eager NumPy writes the slice into ``B``
itself; a loop of row updates (``A[i, j:] -= ...``) then copies the matrix once per row. The copy is needed only
while something may still read the old value. So an update writes in place (``base[key] = value``, then the base
*is* the result) when

- its base owns its memory: the fresh result of an op that returns new memory (``ops/aliasing.py``), an update
  written in place before it, or an input *donated* to the graph: an array of the caller's whose final value the
  graph returns and the caller copies back into it (``compile()``'s write-backs, ``mutation.write_back``); a
  donated array is written only by the chain of updates that leads to its final value, so anything else the
  graph computes stays its own;
- nothing reads the old value, or a value that may share its memory (a view of it), after this node (graph
  outputs are read at the end);
- no index array of the key may share that memory (the value may, with a key of slices and integers: NumPy's
  assignment reads an overlapping right-hand side as if it had been copied first, as eager code sees it).

The values written are the same, by the same assignment, so the results are bit for bit those of the copy. One
walk over the nodes (the alias sets are those of ``codegen.plan_buffers``).
"""

from __future__ import annotations

from typing import Mapping

from ..ir.graph import Graph, Value
from ..ops import SOURCE_OPS, Op
from ..ops.aliasing import returns_fresh
from ..ops.indexing import Slot

_NEVER = 1 << 60


def in_place_updates(graph: Graph, donated: Mapping[str, int] | None = None) -> dict[int, Value]:
    """``id(node) -> base value`` for each ``index_update`` that may write into its base (see the module doc).
    ``donated``: graph input name -> the index of the output whose value is copied into that input's array when
    the graph has run."""
    last_use: dict[Value, int] = {}
    nodes = graph.nodes
    for i, node in enumerate(nodes):
        for v in node.inputs:
            last_use[v] = i
    for v in graph.outputs:
        last_use[v] = _NEVER
    writers = _donated_chains(graph, donated or {})  # id(update node) -> the donated input it may write into

    roots: dict[Value, frozenset] = {}  # the buffers (owning values) a value may share memory with
    live_end: dict[Value, int] = {}  # buffer -> the last position at which a value sharing it is read
    holder: dict[Value, Value] = {}  # buffer -> the value that now holds its contents (not a view of it)
    decided: dict[int, Value] = {}
    for i, node in enumerate(nodes):
        if node.op in SOURCE_OPS:
            v = node.outputs[0]
            donor = writers.get(("input", v))
            roots[v] = frozenset([v]) if donor else frozenset()
            holder[v] = v
            live_end[v] = last_use.get(v, -1)
            continue
        root = _writable_root(node, i, roots, holder, live_end, writers)
        if root is not None:
            decided[id(node)] = node.inputs[0]
            out = node.outputs[0]
            roots[out] = frozenset([root])
            holder[root] = out
            live_end[root] = max(live_end[root], last_use.get(out, -1))
            continue
        fresh = returns_fresh(node)
        for out in node.outputs:
            rs = frozenset([out]) if fresh else frozenset().union(*(roots[u] for u in node.inputs))
            roots[out] = rs
            if fresh:
                holder[out] = out
            for r in rs:
                live_end[r] = max(live_end.get(r, -1), last_use.get(out, -1))
    return decided


def _writable_root(node, i: int, roots, holder, live_end, writers) -> Value | None:
    """The buffer ``node`` (an update) may write into, or None."""
    if node.op != Op.INDEX_UPDATE or node.inputs[0].type.ndim == 0:
        return None
    base = node.inputs[0]
    rs = roots[base]
    if len(rs) != 1:
        return None
    (root,) = rs
    if holder.get(root) is not base or live_end[root] > i:
        return None  # a view of the buffer, or an older value of it read later
    if root.node.op in SOURCE_OPS and writers.get(id(node)) is not root:
        return None  # a donated input, written only by the chain to its final value
    has_slots = any(isinstance(k, Slot) for k in node.attrs["key"])
    for pos, v in enumerate(node.inputs[1:], 1):
        if root in roots[v] and (pos > 1 or has_slots):
            return None
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
        chain, v = [], graph.outputs[index]
        while v.node.op == Op.INDEX_UPDATE:
            chain.append(v.node)
            v = v.node.inputs[0]
        if v is start and chain:
            writers[("input", start)] = True
            for n in chain:
                writers[id(n)] = start
    return writers
