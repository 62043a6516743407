"""Editing a graph in place, as ``Graph.insert_before``/``insert_after``/``replace_all_uses_with``/``erase_node``
do (torch.fx's names): each edit keeps the use-def bookkeeping (``Value.users``) up to date, and refuses, with a
``GraphEditError`` naming the node, an edit that would leave a value read before it is defined or a value read
after its node is gone.
"""

from __future__ import annotations

from typing import Any, Iterable

from ..errors import GraphEditError
from ..ops import Op, opdef
from .graph import Graph, Node, Value
from .shape_env import graph_facts
from .source import SourceLoc


def replace_all_uses_with(graph: Graph, old: Value, new: Value) -> int:
    """``graph.replace_all_uses_with(old, new)``: every use of ``old`` reads ``new``; how many uses moved."""
    if old is new:
        return 0
    numbering = graph.numbering()
    if old.type != new.type:
        raise GraphEditError(f"cannot replace {_name(old, numbering)}: {old.type} by {_name(new, numbering)}: "
                             f"{new.type}; a value may only be replaced by one of the same type (cast or "
                             f"reshape the new value first)")
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    if id(new.node) not in position:
        raise GraphEditError(f"cannot replace {_name(old, numbering)} by a value whose producer "
                             f"{new.node!r} is not a node of graph {graph.name}")
    users = [u for u in dict.fromkeys(old.users) if u is not new.node]
    for user in users:
        if position.get(id(user), -1) <= position[id(new.node)]:
            raise GraphEditError(f"cannot replace {_name(old, numbering)} by {_name(new, numbering)}: the user "
                                 f"{graph.node_text(user, numbering)} comes before {_name(new, numbering)} is "
                                 f"defined; insert the new value's node earlier")
    moved = 0
    for user in users:
        moved += sum(1 for v in user.inputs if v is old)
        user.inputs = tuple(new if v is old else v for v in user.inputs)
    moved += sum(1 for v in graph.outputs if v is old)
    graph.outputs = [new if v is old else v for v in graph.outputs]
    return moved


def erase_node(graph: Graph, node: Node) -> None:
    """``graph.erase_node(node)``: remove a node whose outputs nothing reads any more."""
    position = position_of(graph, node)
    numbering = graph.numbering()
    for v in node.outputs:
        if v.users:
            readers = "; ".join(graph.node_text(u, numbering) for u in dict.fromkeys(v.users))
            raise GraphEditError(f"cannot erase {graph.node_text(node, numbering)}: its value "
                                 f"{_name(v, numbering)} is still read by {readers}. Replace those uses first "
                                 f"(graph.replace_all_uses_with)")
        if any(out is v for out in graph.outputs):
            raise GraphEditError(f"cannot erase {graph.node_text(node, numbering)}: its value "
                                 f"{_name(v, numbering)} is an output of graph {graph.name}")
    del graph.nodes[position]
    node.inputs = ()
    if node.op == Op.PARAM:
        graph.param_values.pop(node.attrs["name"], None)


def position_of(graph: Graph, node: Node) -> int:
    for i, n in enumerate(graph.nodes):
        if n is node:
            return i
    raise GraphEditError(f"{node!r} is not a node of graph {graph.name}")


def insert_node(graph: Graph, position: int, op: Op | str, inputs: Iterable[Value], attrs: dict[str, Any] | None,
                loc: SourceLoc | None) -> Node:
    """A new node ``op(inputs, **attrs)`` at ``position``, each operand defined before it; its types come from
    the op's rule."""
    definition = opdef(op)
    inputs = tuple(inputs)
    defined = {v for n in graph.nodes[:position] for v in n.outputs}
    for i, v in enumerate(inputs):
        if v not in defined:
            raise GraphEditError(f"cannot insert {definition.op} at position {position} of graph {graph.name}: "
                                 f"operand {i} ({v!r}) is not defined before that point")
    attrs = {} if attrs is None else attrs
    with graph_facts(graph):
        out_types = definition.infer(tuple(v.type for v in inputs), attrs)
    node = Node(definition.op, inputs, attrs, out_types, loc)
    graph.nodes.insert(position, node)
    return node


def _name(v: Value, numbering: dict[Value, int]) -> str:
    n = numbering.get(v)
    return f"%{n}" if n is not None else "a value outside the graph"


def copy_where_made(graph: Graph, value: Value) -> Value:
    """A ``copy`` of ``value`` (a graph output the passes made share memory), placed right after the node that
    makes it rather than at the end: read there, it leaves a later update of the memory it shares free to write
    in place (``y = x[0:3] * 1; x += v`` simplified to a view of ``x``: the three elements are copied before the
    update, not the whole of ``x`` into a new array because the view is read at the end)."""
    return graph.insert_after(value.node, Op.COPY, [value], {"keep_scalar": True}, value.node.loc).output
