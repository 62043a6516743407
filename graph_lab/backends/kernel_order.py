"""Running a matmul (or another op no kernel computes) after the elementwise nodes it does not depend on, so that
those nodes make one kernel.

A kernel runs where its group's last node is, so a group cannot grow past a node outside it that reads one of its
values (``partition._read_early``). The order a capture records is the order of the user's code, which
interleaves the two: the n-body step ``(dx * inv_r3) @ mass, (dy * inv_r3) @ mass, (dz * inv_r3) @ mass`` is
``mul, matmul, mul, matmul, mul, matmul``, and made three kernels, the first also writing ``inv_r3``, ``dy`` and
``dz`` to memory for the other two. With each matmul moved down to just before its first reader, the three products
are computed by the kernel that computes ``inv_r3``, which then never leaves the registers.

Only pure ops whose results are new arrays move, and only past other such nodes (never past an ``index_update``,
a control-flow node or an op that is not pure), so no move changes what any node reads; a node never moves past its
first reader, so the order stays topological. NumPy computes each op alone, so its results do not depend on the
order: the moved graph gives the same bits. The new order is kept only when it makes fewer groups than the
recorded one (``regroup``).
"""

from __future__ import annotations

from typing import Callable

from ..ir.graph import Graph, Node
from ..ops import SOURCE_OPS, Op, opdef
from ..ops.aliasing import returns_fresh
from . import c_kernels

MAX_DISTANCE = 64
"""How many nodes one node moves past at most (a group holds at most ``partition.MAX_GROUP_NODES``, 64)."""


def _passable(node: Node) -> bool:
    """A node that another may move past: an input or constant, or pure, writing nothing, computing new arrays."""
    return node.op in SOURCE_OPS or (opdef(node.op).pure and node.op != Op.INDEX_UPDATE and not node.regions
                                     and returns_fresh(node))


def _movable(node: Node) -> bool:
    """A node worth moving: one no kernel computes, that reads a value an elementwise node computes."""
    return (_passable(node) and node.op not in c_kernels.C_OPS and node.op not in SOURCE_OPS
            and any(v.node.op in c_kernels.C_OPS for v in node.inputs))


def later_readers(graph: Graph) -> list[Node] | None:
    """The graph's nodes with each movable node just before its first reader (or the first node it may not pass,
    at most ``MAX_DISTANCE`` on), or None when no node would move past an elementwise one."""
    nodes = graph.nodes
    position = {id(n): i for i, n in enumerate(nodes)}
    keys: dict[int, float] = {}
    moved = False
    for i, node in enumerate(nodes):
        if not _movable(node):
            continue
        readers = [position[id(u)] for v in node.outputs for u in v.users]
        stop = min(readers + [len(nodes), i + 1 + MAX_DISTANCE])
        j = i + 1
        while j < stop and _passable(nodes[j]):
            j += 1
        if any(n.op in c_kernels.C_OPS for n in nodes[i + 1:j]):
            keys[id(node)], moved = j - 0.5, True  # (just before node j: ties keep the graph's order)
    if not moved:
        return None
    return sorted(nodes, key=lambda n: (keys.get(id(n), position[id(n)]), position[id(n)]))


def regroup(graph: Graph, partition: Callable):
    """``partition(graph)``, on the graph with its nodes in the order of ``later_readers`` when that makes fewer
    groups (the graph is then left in that order), else on the graph as it is."""
    recorded = partition(graph)
    order = later_readers(graph)
    if order is None:
        return recorded
    kept, graph.nodes = graph.nodes, order
    moved = partition(graph)
    if len(moved.groups) < len(recorded.groups):
        return moved
    graph.nodes = kept
    return recorded
