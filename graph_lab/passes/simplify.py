"""``simplify(g)``: small local rewrites from a table, one rule per line, run to a fixed point by one driver.

Every rule is exact: the graph computes the same bits afterwards, for every input of the node's dtype. That is
why ``x + 0.0 -> x`` is not a rule for floats: ``-0.0 + 0.0`` is ``+0.0``, so the identity is ``x + (-0.0)``
(and ``x - 0.0``). A rule whose result would have another type than the node's (``i64 * 1.0`` is f64) is not
applied, which keeps dtype promotion exact too. Edits ``g`` in place; ``g`` stays valid.

Only the top-level graph is simplified: the regions of control-flow nodes (``cond``, ``while_loop``, ...) are left
as they are, and the report says so, one line per such node.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ops import Op


class Rule(NamedTuple):
    op: Op
    """The op of the nodes the rule looks at."""
    name: str
    """What it does, as reported: ``x * 1 -> x``."""
    rewrite: Callable[[Node, Graph], Value | None]
    """The value to use instead of the node's output, or None when the rule does not apply."""


_CONST = Op.CONST  # (an enum member read once: reading it costs as much as the test, asked for most nodes)


def is_const(v: Value, number: float, *, negative_zero: bool | None = None) -> bool:
    """``v`` is a constant whose every element equals ``number`` (and, if asked, has that sign of zero)."""
    if v.node.op != _CONST:
        return False
    value = np.asarray(v.node.attrs["value"])
    if value.dtype.kind not in "iufb" or value.size == 0 or not np.all(value == number):
        return False
    return negative_zero is None or bool(np.all(np.signbit(value) == negative_zero))


def is_integer(v: Value) -> bool:
    return v.type.weak is None and np.issubdtype(v.type.dtype, np.integer)


def first(n: Node) -> Value:
    return n.inputs[0]


def second(n: Node) -> Value:
    return n.inputs[1]


def produced_by(v: Value, op: Op) -> bool:
    return v.node.op == op


def merge_transposes(n: Node, g: Graph) -> Value:
    inner = first(n).node
    perm = tuple(inner.attrs["perm"][q] for q in n.attrs["perm"])  # out axis i = inner axis q[i] = x axis p[q[i]]
    return g.insert_before(n, Op.TRANSPOSE, [first(inner)], {"perm": perm}, n.loc).output


def merge_reshapes(n: Node, g: Graph) -> Value:
    return g.insert_before(n, Op.RESHAPE, [first(first(n).node)], dict(n.attrs), n.loc).output


def is_identity_perm(perm: tuple[int, ...]) -> bool:
    return perm == tuple(range(len(perm)))


# One rule per line: (op, name, rewrite). The comment says why the rule is exact.
RULES: list[Rule] = [
    Rule(Op.MUL, "x * 1 -> x", lambda n, g: first(n) if is_const(second(n), 1) else None),  # x * 1 rounds nothing
    Rule(Op.MUL, "1 * x -> x", lambda n, g: second(n) if is_const(first(n), 1) else None),  # likewise
    Rule(Op.DIV, "x / 1 -> x", lambda n, g: first(n) if is_const(second(n), 1) else None),  # ints: f64 result, refused
    Rule(Op.ADD, "x + (-0.0) -> x",  # -0.0 + -0.0 = -0.0 and 0.0 + -0.0 = 0.0 (but -0.0 + 0.0 = 0.0)
         lambda n, g: first(n) if is_const(second(n), 0, negative_zero=True) else None),
    Rule(Op.ADD, "(-0.0) + x -> x", lambda n, g: second(n) if is_const(first(n), 0, negative_zero=True) else None),
    Rule(Op.ADD, "x + 0 -> x (integer x)",  # integers have one zero
         lambda n, g: first(n) if is_const(second(n), 0) and is_integer(first(n)) else None),
    Rule(Op.ADD, "0 + x -> x (integer x)",
         lambda n, g: second(n) if is_const(first(n), 0) and is_integer(second(n)) else None),
    Rule(Op.SUB, "x - 0.0 -> x",  # -0.0 - 0.0 = -0.0 (but -0.0 - -0.0 = 0.0)
         lambda n, g: first(n) if is_const(second(n), 0, negative_zero=False) else None),
    Rule(Op.NEG, "-(-x) -> x",  # exact for floats; integers wrap around and back
         lambda n, g: first(first(n).node) if produced_by(first(n), Op.NEG) else None),
    Rule(Op.TRANSPOSE, "transpose(transpose(x)) -> transpose(x)",  # the permutations composed; no arithmetic
         lambda n, g: merge_transposes(n, g) if produced_by(first(n), Op.TRANSPOSE) else None),
    Rule(Op.TRANSPOSE, "transpose(x, identity) -> x",
         lambda n, g: first(n) if is_identity_perm(n.attrs["perm"]) else None),
    Rule(Op.RESHAPE, "reshape(reshape(x)) -> reshape(x)",  # only the last shape counts
         lambda n, g: merge_reshapes(n, g) if produced_by(first(n), Op.RESHAPE) else None),
    Rule(Op.RESHAPE, "reshape(x, x.shape) -> x",
         lambda n, g: first(n) if n.attrs["shape"] == first(n).type.shape else None),
]


def _aliasing_outputs(graph: Graph) -> set[int]:
    """Positions of outputs that are an input, a parameter, a constant, or the same value as an earlier output."""
    out = set()
    for i, v in enumerate(graph.outputs):
        if v.node.op in ("input", "param", "const") or v in graph.outputs[:i]:
            out.add(i)
    return out


def _keep_outputs_fresh(graph: Graph, aliasing_before: set[int], report: list[str]) -> None:
    """Eager code returned a new array where a rewrite made an output the input itself (``return x * 1``):
    a caller's write to one would then show through the other. Such outputs get a copy."""
    for i in sorted(_aliasing_outputs(graph) - aliasing_before):
        value = graph.outputs[i]
        graph.outputs[i] = graph.add_node(Op.COPY, [value], {}, value.node.loc).output
        report.append(f"output {i} copied: a rewrite made it the same array as an input or another output")


def _numbering_of(graph: Graph, nodes: list[Node]) -> dict[Value, int]:
    """``graph.numbering()`` as it was when ``graph.nodes`` was ``nodes``."""
    view = Graph(graph.name)
    view.nodes = nodes
    out: dict[Value, int] = {}
    view._number(out, {id(graph)})
    return out


def simplify(graph: Graph, rules: list[Rule] = RULES) -> list[str]:
    """Apply exact local rewrite rules (``x * 1 -> x``, ``--x -> x``, ...) to ``graph`` in place until none applies.

    Parameters:
        graph: the graph to simplify; it stays valid. Regions are left as they are.
        rules: the rule table, by default ``RULES`` (each rule bit-exact); ``fast_math`` passes its own.

    Returns:
        One line per rewrite: the rule and the node it replaced.
    """
    report: list[str] = []
    aliasing_before = _aliasing_outputs(graph)
    rules_of: dict[Op, list[Rule]] = {}  # each op's rules, in their order in ``rules``
    for rule in rules:
        rules_of.setdefault(rule.op, []).append(rule)
    changed = True
    while changed:
        changed = False
        # Names in the report: %N as printed before the rewrite. Numbered only when a rule applies (most graphs
        # have nothing to simplify), from the nodes as they were then: a rule may insert a node before it is
        # known to apply, and such a node has no number yet.
        before = list(graph.nodes)
        numbering = None
        for node in before:
            rules = rules_of.get(node.op)
            if rules is None:
                continue  # (most nodes: no rule looks at their op)
            outputs = node.outputs
            if len(outputs) != 1 or not (outputs[0].users or outputs[0] in graph.outputs):
                continue  # erased by an earlier rewrite, or dead
            for rule in rules:
                new = rule.rewrite(node, graph)
                if new is None or new.type != outputs[0].type:
                    continue
                if numbering is None:
                    numbering = _numbering_of(graph, before)
                text = graph.node_text(node, numbering)  # (values inserted by the rewrite are not its operands)
                graph.replace_all_uses_with(node.output, new)
                graph.erase_node(node)
                report.append(f"{rule.name}: {text}")
                before, numbering = list(graph.nodes), None
                changed = True
                break
    if report:
        _keep_outputs_fresh(graph, aliasing_before, report)
    removed = graph.remove_dead_code()
    if removed:
        report.append(f"removed {removed} nodes that nothing reads any more")
    regions = [node for node in graph.nodes if node.regions] if graph.has_regions() else []
    numbering = graph.numbering() if regions else None
    for node in regions:
        report.append(f"not simplified: the regions of {graph.node_text(node, numbering)} (simplify works on the "
                      f"top-level graph only)")
    if report:  # an untouched graph is as valid as it was
        graph.verify()
    return report


class _WouldEdit(Exception):
    pass


class _LookingOnly:
    """Stands in for the graph while ``would_change`` asks the rules: a rule that would edit the graph (merging two
    transposes inserts the merged one) may apply, and says so by touching it."""

    def __getattr__(self, name):
        raise _WouldEdit(name)


_last_rules_by_op: tuple = ((), {})


def _rules_by_op(rules: list[Rule]) -> dict[Op, list[Rule]]:
    """``rules`` grouped by the op they apply to, in order. The grouping of the last list asked for is kept (every
    pipeline asks with ``RULES``), under the identities of its rules, so that an edited list is grouped again
    (the kept grouping holds the rules themselves: their identities are not reused while it is kept)."""
    global _last_rules_by_op
    key = tuple(map(id, rules))
    if _last_rules_by_op[0] == key:
        return _last_rules_by_op[1]
    rules_of: dict[Op, list[Rule]] = {}
    for rule in rules:
        rules_of.setdefault(rule.op, []).append(rule)
    _last_rules_by_op = (key, rules_of)
    return rules_of


def would_change(graph: Graph, rules: list[Rule] = RULES) -> bool:
    """Whether ``simplify(graph, rules)`` would change ``graph`` or report anything; ``graph`` is not changed.

    True when a rule applies to a node simplify would look at (or would edit the graph to find out), when a node
    is dead or a stored parameter has no node (``remove_dead_code`` drops them), or when a node has regions (the
    report says they were not simplified). Otherwise simplify finds nothing: the pipeline then need not copy the
    graph for it (see ``manager.run_pipeline``)."""
    if graph.has_regions():
        return True
    rules_of = _rules_by_op(rules)
    looking = _LookingOnly()
    for node in graph.nodes:
        node_rules = rules_of.get(node.op)
        if node_rules is None:
            continue
        outputs = node.outputs
        if len(outputs) != 1 or not (outputs[0].users or outputs[0] in graph.outputs):
            continue  # dead: found below
        for rule in node_rules:
            try:
                new = rule.rewrite(node, looking)
            except _WouldEdit:
                return True
            if new is not None and new.type == outputs[0].type:
                return True
    live = graph.needed_by(graph.outputs)
    source, param = Op.INPUT, Op.PARAM
    params = set()
    for node in graph.nodes:
        if id(node) not in live and node.op != source:
            return True
        if node.op == param:
            params.add(node.attrs["name"])
    return params != graph.param_values.keys()
