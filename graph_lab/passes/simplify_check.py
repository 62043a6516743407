"""``would_change``: whether ``simplify`` would change a graph or report anything, asked without changing it: simplify's
check in the pipeline's speed-up (``change_check.py``), which need not copy a graph for a pass that finds nothing."""

from __future__ import annotations

from ..ir.graph import Graph
from ..ops import Op
from .simplify_rules import RULES, Rule


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
