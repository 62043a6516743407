"""Moving nodes to a later call: does every node still read what the graph means?

A fused kernel computes its group's nodes where the group's last node was; a C program (``c_programs``)
computes its statements where its last update was. With updates written in place (``inplace.py``), a node moved
past an update of an array it reads would read the new contents, where the graph (and eager NumPy) read the old:
``x = A[1:-1] * 2.0; A[1:-1] = ...; B[1:-1] = x + 1.0`` must compute ``x`` before ``A`` is written.

``first_stale`` replays a graph with the moves made, tracking which value (*version*) each array's memory holds,
and finds the first move whose nodes, or a node it left behind, would read another version than the graph's.
"""

from __future__ import annotations

from typing import Callable

from ..ir.graph import Graph, Node, Value
from ..ops import SOURCE_OPS, Op
from ..ops.aliasing import may_be_view, returns_fresh

SHAPE_ONLY = frozenset({Op.ZEROS_LIKE, Op.ONES_LIKE, Op.FULL_LIKE})
"""Ops that read only the shape and dtype of their first operand, not its elements."""


class Versions:
    """Which value each buffer holds at a point of the (re-ordered) execution."""

    def __init__(self, in_place: dict[int, Value]):
        self.in_place = in_place
        self.root: dict[Value, Value] = {}
        self.alias: dict[Value, frozenset] = {}  # value -> the versions whose memory it may show
        self.latest: dict[Value, Value] = {}

    def define(self, node: Node) -> None:
        base = self.in_place.get(id(node))  # an update, a masked write or a ufunc written into an operand's buffer
        if base is not None and (node.op == Op.INDEX_UPDATE or self.alias.get(base) == frozenset([base])):
            root = self.root.get(base, base)  # (a ufunc written into a window is the window's update: not here)
            out = node.outputs[0]
            self.root[out], self.alias[out], self.latest[root] = root, frozenset([out]), out
            return
        fresh = node.op in SOURCE_OPS or returns_fresh(node)
        for out in node.outputs:
            if fresh:
                self.root[out], self.alias[out], self.latest[out] = out, frozenset([out]), out
            else:
                self.alias[out] = frozenset().union(*(self.alias.get(v, frozenset()) for v in node.inputs))

    def current(self, v: Value) -> bool:
        """Reading ``v`` now reads what the graph means by it: it was computed already, and every version it shows
        is its buffer's latest."""
        return v in self.alias and all(self.latest.get(self.root.get(x, x), x) is x for x in self.alias.get(v, ()))

    def reads_ok(self, node: Node) -> bool:
        if node.op not in SOURCE_OPS and may_be_view(node):
            return True  # a view reads nothing yet: its reader does
        if node.op in SHAPE_ONLY:  # (its first operand is read for its shape: computed, in any version)
            return node.inputs[0] in self.alias and all(self.current(v) for v in node.inputs[1:])
        return all(self.current(v) for v in node.inputs)


def first_stale(graph: Graph, in_place: dict[int, Value], moves: list[tuple[list[Node], Node]]):
    """``moves[k] = (nodes, call)``: ``nodes`` run in that order where ``call`` (the last of them in the graph)
    was. Returns ``(k, node)`` for the first node that would read another version than the graph's (``k``: the
    move it belongs to, or the move holding back a write it needs), or None when every read is the graph's."""
    at_call = {id(call): k for k, (_, call) in enumerate(moves)}
    moved = {id(n) for nodes, _ in moves for n in nodes}
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    versions = Versions(in_place)
    for here, node in enumerate(graph.nodes):
        k = at_call.get(id(node))
        if k is not None:
            for n in moves[k][0]:
                if not versions.reads_ok(n):
                    return k, n
                versions.define(n)
            continue
        if id(node) in moved:
            continue
        if not versions.reads_ok(node):
            pending = [j for j, (nodes, call) in enumerate(moves)
                       if min(position[id(n)] for n in nodes) < here < position[id(call)]]
            return (pending[0] if pending else 0), node
        versions.define(node)
    return None


def keep_in_order(graph: Graph, in_place_for: Callable[[frozenset], dict], programs: list, groups: list) -> list:
    """The programs that still read the graph's versions with the fused ``groups`` moved too; a group or program
    that would not is left to codegen (its nodes in the graph's order): a group's decision becomes "not fused".
    ``in_place_for(ids)``: the updates written in place when the nodes of those ids are computed by kernels."""
    from .cost import Decision  # (the cost model's record of a decision)
    programs = list(programs)
    while True:
        kept = [g for g in groups if g.decision is not None and g.decision.fuse]
        in_place = in_place_for(frozenset(id(n) for g in kept for n in g.nodes))
        moves = [(p.execution(), p.call_node) for p in programs] + [(g.nodes, g.nodes[-1]) for g in kept]
        stale = first_stale(graph, in_place, moves)
        if stale is None:
            return programs
        k = stale[0]
        if k < len(programs):
            programs.pop(k)
        else:
            kept[k - len(programs)].decision = Decision(
                False, 1, float("nan"), float("nan"), "not fused: computed where its last op is, it would read an "
                                                      "array after an update written in place before that op")
