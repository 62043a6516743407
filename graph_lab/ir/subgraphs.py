"""New graphs made from a graph's nodes: ``extract`` (what some values need), ``copy_nodes`` (given nodes) and
``copy_graph`` (all of it). The nodes are new, so editing the result never touches the original; attributes are
shared (regions included: no pass edits a region in place, one that changes a region builds a new one).
"""

from __future__ import annotations

from ..ops import Op
from .graph import Graph, Node, Value


def extract(graph: Graph, outputs: list[Value], name: str | None = None,
            cut: dict[Value, str] | None = None) -> Graph:
    """``graph.extract(outputs, name, cut)``: the nodes ``outputs`` need, stopping at the ``cut`` values."""
    cut = cut or {}
    needed: set[int] = set()
    stack = [v for v in outputs]
    while stack:
        v = stack.pop()
        if v in cut or id(v.node) in needed:
            continue
        needed.add(id(v.node))
        stack.extend(v.node.inputs)
    return copy_nodes(graph, [n for n in graph.nodes if id(n) in needed], outputs, name, cut)


def copy_nodes(graph: Graph, nodes: list[Node], outputs: list[Value], name: str | None = None,
               cut: dict[Value, str] | None = None) -> Graph:
    """``graph.copy_nodes(nodes, outputs, name, cut)``: ``nodes`` copied in order, ``cut`` values as named
    inputs, parameters with their stored values."""
    new = Graph(name or graph.name)
    mapping: dict[Value, Value] = {}
    for v, input_name in (cut or {}).items():
        mapping[v] = new.add_input(input_name, v.type, v.node.loc)
    for node in nodes:
        if node.op == Op.PARAM:
            mapping[node.output] = new.add_param(node.attrs["name"], graph.param_values[node.attrs["name"]],
                                                 node.loc)
            continue
        copy = Node(node.op, tuple([mapping[v] for v in node.inputs]), node.attrs,
                    tuple([v.type for v in node.outputs]), node.loc)
        new.nodes.append(copy)
        for old, fresh in zip(node.outputs, copy.outputs):
            mapping[old] = fresh
    new.outputs = [mapping[v] for v in outputs]
    return new


def copy_graph(graph: Graph) -> Graph:
    """An independent copy: new nodes and values, the same attributes, inputs, parameters and guards."""
    new = Graph(graph.name)
    mapping = {}
    nodes = new.nodes
    for node in graph.nodes:
        outputs = node.outputs
        copy = Node(node.op, tuple([mapping[v] for v in node.inputs]), dict(node.attrs),
                    (outputs[0].type,) if len(outputs) == 1 else tuple([v.type for v in outputs]), node.loc)
        nodes.append(copy)
        if len(outputs) == 1:
            mapping[outputs[0]] = copy.outputs[0]
        else:
            mapping.update(zip(outputs, copy.outputs))
    new.outputs = [mapping[v] for v in graph.outputs]
    new.out_tree = graph.out_tree
    new.param_values = dict(graph.param_values)
    new.guards = list(graph.guards)
    return new
