"""``simplify(g)``: small local rewrites from a table, one rule per line, run to a fixed point by one driver.

Every rule is exact: the graph computes the same bits afterwards, for every input of the node's dtype. That is
why ``x + 0.0 -> x`` is not a rule for floats: ``-0.0 + 0.0`` is ``+0.0``, so the identity is ``x + (-0.0)``
(and ``x - 0.0``). A rule whose result would have another type than the node's (``i64 * 1.0`` is f64) is not
applied, which keeps dtype promotion exact too. Edits ``g`` in place; ``g`` stays valid.

Only the top-level graph is simplified: the regions of control-flow nodes (``cond``, ``while_loop``, ...) are left
as they are, and the report says so, one line per such node.

The rules are ``simplify_rules.py``; ``simplify_check.py`` says whether this driver would change a graph, without
changing it (the pipeline skips a pass that would not).
"""

from __future__ import annotations

from ..ir.editing import copy_where_made
from ..ir.graph import Graph, Node, Value
from ..ops import Op
from ..ops.aliasing import may_be_view
from .simplify_rules import RULES, Rule


def _aliasing_outputs(graph: Graph) -> set[int]:
    """Positions of outputs that are an input, a parameter, a constant, or the same value as an earlier output."""
    out = set()
    for i, v in enumerate(graph.outputs):
        if v.node.op in ("input", "param", "const") or v in graph.outputs[:i]:
            out.add(i)
    return out


def _view_outputs(graph: Graph) -> set[int]:
    """Positions of outputs that may be a view (of an input, or a read-only one: ``x.diagonal()``)."""
    return {i for i, v in enumerate(graph.outputs) if may_be_view(v.node)}


def _keep_outputs_fresh(graph: Graph, aliasing_before: set[int], views_before: set[int], report: list[str]) -> None:
    """Eager code returned a new array where a rewrite made an output the input itself (``return x * 1``) or a
    view (``x.diagonal() + 0``, read-only in NumPy): a caller's write to one would then show through the other,
    or fail. Such outputs get a copy."""
    new_views = _view_outputs(graph) - views_before - aliasing_before
    for i in sorted((_aliasing_outputs(graph) - aliasing_before) | new_views):
        value = graph.outputs[i]
        graph.outputs[i] = copy_where_made(graph, value)
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
    aliasing_before, views_before = _aliasing_outputs(graph), _view_outputs(graph)
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
            if not outputs[0].type.shape:
                continue  # 0-d: NumPy scalar or 0-d array by how it was made (``x * 1`` of a 0-d array is a
                #           scalar), which the IR does not record, so the operand may not stand for the result
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
        _keep_outputs_fresh(graph, aliasing_before, views_before, report)
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
