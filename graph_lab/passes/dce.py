"""``dce(g)``: dead-code elimination. Drops every node whose outputs no graph output needs.

Inputs stay (they are the graph's signature), and so does an op that is not pure (``OpDef.pure``: a random draw
or an effect happens even when nobody reads its result), with everything it reads. Edits ``g`` in place; ``g``
stays valid. Returns one line per removed node.
"""

from __future__ import annotations

from ..ir.graph import Graph
from ..ops import Op, opdef


def dce(graph: Graph) -> list[str]:
    dead = dead_nodes(graph)
    if not dead:
        return []
    numbering = graph.numbering()
    report = [f"removed {graph.node_text(n, numbering)}" for n in dead]
    for node in reversed(dead):  # users before producers, so each is unread when erased
        graph.erase_node(node)
    return report


def dead_nodes(graph: Graph) -> list:
    """The nodes ``dce`` removes, in graph order: those no output and no impure node needs (inputs stay)."""
    impure = []  # kept even when unread
    for n in graph.nodes:
        if not opdef(n.op).pure:
            impure.extend(n.outputs)
    live = graph.needed_by(list(graph.outputs) + impure)
    return [n for n in graph.nodes if id(n) not in live and n.op != Op.INPUT]
