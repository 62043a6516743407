"""``cond_to_select(g)``: control flow to data flow (the course note's section 1.2). Edits ``g`` in place.

A ``cond`` becomes both of its branches, computed unconditionally, and one ``where(pred, then, else)`` per output::

    %4 = cond %3, %0 {then: tanh(x)} {else: -x}    ->    %5 = tanh %0;  %6 = neg %0;  %7 = where %3, %5, %6

The hazards, and the rule this pass follows for each:

* Cost: both branches now run on every call. The report counts the operations that run unconditionally now.
* The untaken branch runs on inputs the original never sent it. Its inf and NaN never reach the result: the
  select is ``where``, which copies the chosen value exactly. (The note's ``mask * a + (1 - mask) * b`` would
  not be safe: ``0 * inf`` and ``0 * nan`` are NaN.)
* A domain op of the untaken branch (``log``, ``log1p``, ``sqrt``, ``reciprocal``, the divisor of ``div``,
  ``floordiv`` and ``mod``, the base of ``pow``, ``exp``, ``expm1``, a float-to-integer ``cast``) is made safe: its
  operand becomes ``where(pred, x, 1)`` (``0`` for ``exp``, ``expm1`` and casts), so where the branch is not
  taken it computes on a value inside its domain and raises no floating-point error. Where it is taken, ``where``
  passes ``x`` itself: the result is the same, bit for bit. (Other ops can still overflow on the untaken side,
  say ``x * x`` on a huge ``x``; the value is discarded, though NumPy may warn.)
* A branch that can *raise* is refused: indexing with index arrays (out of bounds), integer ``pow`` (negative
  exponents), and loops (the untaken side might not terminate). Refused conds stay as they are.
* Outputs of Python-number type stay a ``cond`` (``where`` would give an array type).

Conds nested in branches are converted first; conds inside loop bodies are converted in a copy of the body (a
region is never edited in place: it may be shared with graphs copied from this one).
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ir.subgraphs import copy_graph
from ..ops import Op, opdef

# op -> (operand positions made safe, the safe value)
GUARDED = {Op.LOG: ((0,), 1), Op.LOG1P: ((0,), 1), Op.SQRT: ((0,), 1), Op.RECIPROCAL: ((0,), 1),
           Op.DIV: ((1,), 1), Op.FLOORDIV: ((1,), 1), Op.MOD: ((1,), 1), Op.POW: ((0,), 1),
           Op.EXP: ((0,), 0), Op.EXPM1: ((0,), 0), Op.CAST: ((0,), 0)}


def cond_to_select(graph: Graph, guard: bool = True) -> list[str]:
    """Turn every ``cond`` this pass can make safe into both branches and a ``where`` (control flow to data
    flow), in place. A cond whose branches could raise or loop is kept, saying why.

    Parameters:
        graph: the graph to edit; it stays valid.
        guard: guard the domain ops of the branch not taken (``log`` of a negative, say) so they compute on
            safe values. ``False`` leaves them unguarded (the result is the same; NumPy then warns about their
            inf and NaN): to show the hazard.

    Returns:
        One line per cond: converted, or kept and why.
    """
    report: list[str] = []
    numbering = graph.numbering()
    for node in list(graph.nodes):
        if not node.regions:
            continue
        text = graph.node_text(node, numbering)
        inner = _convert_regions(node, guard)
        report += [f"  in {text}: {line}" for line in inner]
        if node.op != Op.COND:
            continue
        reason = _refusal(node)
        if reason is not None:
            report.append(f"kept {text}: {reason}")
            continue
        count = _inline(graph, node, guard)
        report.append(f"{text} -> both branches ({count} ops, now run on every call) and "
                      f"{len(node.outputs)} where")
    graph.remove_dead_code()
    graph.verify()
    return report


def _convert_regions(node: Node, guard: bool) -> list[str]:
    """Convert the conds inside ``node``'s regions, each in a copy put in place of the region."""
    lines, attrs = [], dict(node.attrs)
    for key in opdef(node.op).regions:
        region = copy_graph(node.attrs[key])  # new nodes; its own regions shared
        found = cond_to_select(region, guard)
        if found:
            attrs[key] = region
            lines += [f"region {key}: {line}" for line in found]
    node.attrs = attrs
    return lines


def _refusal(node: Node) -> str | None:
    for key in ("then", "else"):
        for n in node.attrs[key].nodes:
            if n.regions:
                return f"its {key} branch holds a {n.op} (a loop may not end on the inputs of the untaken side)"
            if n.op == Op.INDEX and len(n.inputs) > 1 or n.op == Op.INDEX_UPDATE and len(n.inputs) > 2:
                return f"its {key} branch indexes with index arrays, which raise when out of bounds"
            if n.op == Op.POW and n.outputs[0].type.dtype.kind in "iu" and n.inputs[1].node.op != Op.CONST:
                return f"its {key} branch raises integers to a computed power, which raises for negative powers"
            for i in GUARDED.get(n.op, ((), None))[0]:
                if n.inputs[i].type.weak is not None and n.inputs[i].node.op != Op.CONST:
                    return f"its {key} branch has a {n.op} of a Python number this pass cannot guard"
    if any(v.type.weak is not None for v in node.outputs):
        return "an output is a Python number (where gives an array)"
    return None


def _inline(graph: Graph, node: Node, guard: bool) -> int:
    """Copy both branches in front of ``node``, select each output with ``where``, erase ``node``."""
    pred, operands = node.inputs[0], node.inputs[1:]
    results, count = {}, 0
    for key in ("then", "else"):
        region = node.attrs[key]
        env: dict[Value, Value] = {n.output: v for n, v in zip(region.input_nodes, operands)}
        for n in region.nodes:
            if n.op == Op.INPUT:
                continue
            inputs = [_safe(graph, node, pred, key, n, i, env[v]) if guard else env[v]
                      for i, v in enumerate(n.inputs)]
            copy = graph.insert_before(node, n.op, inputs, dict(n.attrs), n.loc)
            env.update(zip(n.outputs, copy.outputs))
            if n.op != Op.CONST:
                count += 1
        results[key] = [env[v] for v in region.outputs]
    for out, a, b in zip(node.outputs, results["then"], results["else"]):
        graph.replace_all_uses_with(out, graph.insert_before(node, Op.WHERE, [pred, a, b], {}, node.loc).output)
    graph.erase_node(node)
    return count


def _safe(graph: Graph, at: Node, pred: Value, key: str, n: Node, i: int, v: Value) -> Value:
    """Operand ``i`` of the copy of ``n``: ``where(pred, v, safe)`` (``where(pred, safe, v)`` in the else branch)
    when ``n`` is a domain op, so that the branch not taken computes on a safe value."""
    positions, safe = GUARDED.get(n.op, ((), None))
    if i not in positions or v.node.op == Op.CONST:
        return v
    if n.op == Op.CAST and not (n.attrs["dtype"].kind in "iub" and v.type.dtype.kind in "fc"):
        return v
    value = True if v.type.dtype == np.bool_ else safe
    const = graph.insert_before(at, Op.CONST, [], {"value": value}, n.loc).output
    pair = [v, const] if key == "then" else [const, v]
    return graph.insert_before(at, Op.WHERE, [pred, *pair], {}, n.loc).output  # of v's type (see _refusal)
