"""Pattern replacement on graphs: replace every match of a pattern graph by a replacement graph, as torch.fx's
``replace_pattern`` does. ``graph_lab.replace_pattern`` (``frontends/patterns.py``) traces the pattern and the
replacement from ordinary functions and calls ``replace_matches``.

A match has the pattern's ops, in the same operand order, with equal attributes; its constants have equal values
(same type, same bits: ``-0.0`` does not match ``0.0``); the pattern's inputs are wildcards, and one input used
twice must be one value twice. Values computed inside a match must not be used outside it. Matches do not
overlap. Operand order is part of the pattern: ``x * sigmoid(x)`` does not match ``sigmoid(x) * x``.
Matches are searched in the top-level graph only, not inside the regions of control-flow nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import GraphEditError, OpError
from ..ir.graph import Graph, Node, Value
from ..ops import Op, opdef


@dataclass
class Match:
    """One place where the pattern was found (and replaced)."""

    anchor: Node
    """The node that computed the pattern's output."""
    nodes: list[Node]
    """The graph's nodes matched by the pattern's operations, in graph order (erased by the replacement)."""
    inputs: dict[str, Value]
    """The value each pattern input stood for, by the pattern's argument name."""
    consts: list[Node] = field(default_factory=list)
    """Constant nodes the pattern's constants matched (erased too when nothing else reads them)."""
    replacement: list[Node] = field(default_factory=list)
    """The nodes inserted in place of the match."""


def replace_matches(graph: Graph, pat: Graph, rep: Graph) -> list[Match]:
    """Replace every non-overlapping match of the graph ``pat`` in ``graph`` by the graph ``rep``, in place;
    ``graph`` stays valid. Returns the matches replaced."""
    if len(pat.outputs) != 1 or pat.outputs[0].node.op in (Op.INPUT, Op.CONST):
        raise GraphEditError("a pattern must return one value computed by at least one operation")
    if len(rep.outputs) != 1 or rep.input_names != pat.input_names or rep.param_nodes:
        raise GraphEditError(f"the replacement must take the pattern's arguments {pat.input_names}, use no "
                             f"parameters and return one value")
    matches, claimed = [], set()
    for node in list(graph.nodes):
        match = _match(graph, pat, node, claimed)
        if match is not None:
            claimed.update(match.nodes)
            matches.append(match)
    for match in matches:  # every replacement is checked before the graph is touched
        _check_fits(graph, rep, match)
    moved: dict[Value, Value] = {}  # outputs of earlier matches, which later matches may read
    for match in matches:
        _apply(graph, rep, match, moved)
    graph.verify()
    return matches


def _match(graph: Graph, pat: Graph, anchor: Node, claimed: set) -> Match | None:
    """The match whose pattern output is computed by ``anchor``, or None."""
    nodes: dict[Node, Node] = {}  # pattern node -> graph node
    wildcards: dict[Node, Value] = {}  # pattern input node -> graph value
    consts: list[Node] = []

    def same(p: Value, v: Value) -> bool:
        pn, node = p.node, v.node
        if pn.op == Op.INPUT:
            return wildcards.setdefault(pn, v) is v
        if pn.op == Op.CONST:
            consts.append(node)  # (a failed comparison fails the whole match)
            return node.op == Op.CONST and _same_value(pn.attrs["value"], node.attrs["value"])
        if pn in nodes:
            return nodes[pn] is node and p.index == v.index
        if (node.op != pn.op or p.index != v.index or node in claimed or node in nodes.values()
                or len(node.inputs) != len(pn.inputs) or not _same_value(pn.attrs, node.attrs)):
            return False
        nodes[pn] = node
        return all(same(pi, vi) for pi, vi in zip(pn.inputs, node.inputs))

    if len(anchor.outputs) != 1 or not same(pat.outputs[0], anchor.output):
        return None
    matched = set(nodes.values())
    for node in matched:
        for v in node.outputs:
            if v is not anchor.output and (any(u not in matched for u in v.users) or v in graph.outputs):
                return None  # a value inside the match is needed outside it
    order = [n for n in graph.nodes if n in matched]
    names = {n: n.attrs["name"] for n in pat.input_nodes}
    return Match(anchor, order, {names[p]: v for p, v in wildcards.items()}, consts)


def _check_fits(graph: Graph, rep: Graph, match: Match) -> None:
    """The replacement, given the match's operand types, must type-check and compute the anchor's type."""
    types = {}
    try:
        for node in rep.nodes:
            if node.op == Op.INPUT:
                types[node.output] = match.inputs[node.attrs["name"]].type
            else:
                types.update(zip(node.outputs, opdef(node.op).infer(tuple(types[v] for v in node.inputs), node.attrs)))
    except OpError as e:
        raise GraphEditError(f"the replacement does not fit the match at {graph.node_text(match.anchor)}: {e} "
                             f"(trace it with shapes= like those of the graph)") from None
    if types[rep.outputs[0]] != match.anchor.output.type:
        raise GraphEditError(f"the replacement computes {types[rep.outputs[0]]} where the match at "
                             f"{graph.node_text(match.anchor)} computes {match.anchor.output.type}; a replacement "
                             f"must compute the same type")


def _apply(graph: Graph, rep: Graph, match: Match, moved: dict[Value, Value]) -> None:
    env: dict[Value, Value] = {}
    for node in rep.nodes:
        if node.op == Op.INPUT:
            bound = match.inputs[node.attrs["name"]]
            env[node.output] = moved.get(bound, bound)
            continue
        new = graph.insert_before(match.anchor, node.op, [env[v] for v in node.inputs], dict(node.attrs),
                                  match.anchor.loc)
        match.replacement.append(new)
        env.update(zip(node.outputs, new.outputs))
    old, new_value = match.anchor.output, env[rep.outputs[0]]
    graph.replace_all_uses_with(old, new_value)
    moved[old] = new_value
    for node in reversed(match.nodes):
        graph.erase_node(node)
    for node in dict.fromkeys(match.consts):
        if not node.output.users and node.output not in graph.outputs and node in graph.nodes:
            graph.erase_node(node)


def _same_value(a, b) -> bool:
    """Equal attributes or constants: same type and, for numbers and arrays, the same bits."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, (np.ndarray, np.generic)):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return a.hex() == b.hex()  # tells -0.0 from 0.0, and NaN equals NaN
    return a == b
