"""``fold_constants(g)``: compute now what does not depend on the inputs, and ``freeze_params(g)``.

A pure node whose operands are all constants is run once, with the op's own implementation (the one ``run``
calls), and replaced by a constant holding its result: the bits are those the graph would compute on every call.
``zeros_like(x)``, ``ones_like(x)`` and ``full_like(x, v)`` need only ``x``'s type and memory order, so they fold
even when ``x`` is an input, as long as its shape allows one memory order only (at most one axis longer than 1):
NumPy gives the result ``x``'s memory order, which the IR does not know (a transposed input makes a column-major
result), and the order decides how later reductions add up (``h.sum()`` then differs in the last bits). Never
folded: ops that are not pure (a random draw must happen on each call), results whose type
would change (a rare NumPy scalar-vs-array difference), and results larger than ``max_elements`` (a
``broadcast_to`` of a scalar would turn a few bytes into megabytes kept with the graph).

``freeze_params(g)`` turns every parameter into a constant holding its stored value, so that folding can reach
through weights (conv + batch-norm folding needs it). A frozen graph no longer takes parameter overrides.
Both edit ``g`` in place; ``g`` stays valid.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..ir.graph import Graph, Node
from ..ir.symbolic import is_symbolic
from ..ir.types import TensorType
from ..ops import SOURCE_OPS, Op, opdef

MAX_ELEMENTS = 1 << 16
"""Largest constant folding may create (elements)."""

TYPE_ONLY_OPS = frozenset({Op.ZEROS_LIKE, Op.ONES_LIKE, Op.FULL_LIKE})
"""Ops whose result depends on their operand's type only, not its values."""


def _foldable(node: Node) -> bool:
    if node.op in SOURCE_OPS or not opdef(node.op).pure or not node.inputs:
        return False
    if node.op in TYPE_ONLY_OPS:
        x = node.inputs[0]
        return x.node.op == Op.CONST or _one_memory_order(x.type)
    for v in node.inputs:
        if v.node.op != Op.CONST:
            return False
    return True


def _one_memory_order(t: TensorType) -> bool:
    """Whether every array of type ``t`` is laid out alike: at most one axis longer than 1 (a symbolic size counts
    as longer)."""
    return sum(1 for d in t.shape if is_symbolic(d) or d > 1) <= 1


def _evaluate(node: Node):
    if node.op in TYPE_ONLY_OPS:
        x = node.inputs[0]
        t = x.type
        if x.node.op == Op.CONST:  # its value, in its memory order
            operands = [x.node.attrs["value"]]
        else:
            operands = [np.zeros(t.shape, t.dtype) if t.weak is None else t.weak(0)]
    else:
        operands = [v.node.attrs["value"] for v in node.inputs]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 1 / 0 folds to inf exactly as it would run, warnings included
        result = opdef(node.op).impl(*operands, **node.attrs)
    return result if opdef(node.op).multi_output else (result,)


def _owned(result):
    """An array that owns its memory, in the same memory order (a view of a constant must not stay one)."""
    if isinstance(result, np.ndarray):
        return np.array(result, copy=True, order="K")
    return result


def _small(t: TensorType, max_elements: int) -> bool:
    """A size known to be at most ``max_elements``: a symbolic size is not asked (no guard decides it, and a
    constant must have one shape anyway)."""
    return not any(is_symbolic(d) for d in t.shape) and t.size <= max_elements


def may_fold(node: Node, max_elements: int = MAX_ELEMENTS) -> bool:
    """Whether ``fold_constants`` tries to fold ``node``: foldable, and every result small enough to keep."""
    return _foldable(node) and all(_small(v.type, max_elements) for v in node.outputs)


def fold_constants(graph: Graph, max_elements: int = MAX_ELEMENTS) -> list[str]:
    report: list[str] = []
    numbering = None  # made at the first fold, which is before anything changed
    for node in list(graph.nodes):
        if not may_fold(node, max_elements):
            continue
        try:
            results = [_owned(r) for r in _evaluate(node)]
        except Exception:  # the op fails on these constants: it fails at run time too, so leave it there
            continue
        if [TensorType.of(r) for r in results] != [v.type for v in node.outputs]:
            continue
        if numbering is None:
            numbering = graph.numbering()
        text = graph.node_text(node, numbering)
        for old, value in zip(node.outputs, results):
            const = graph.insert_before(node, Op.CONST, [], {"value": value}, node.loc)
            graph.replace_all_uses_with(old, const.output)
        graph.erase_node(node)
        report.append(f"folded {text}")
    if report:
        report += _drop_unread_consts(graph)
    return report


def _drop_unread_consts(graph: Graph) -> list[str]:
    """Constants that only fed folded nodes are read by nothing now."""
    numbering = graph.numbering()
    dropped = []
    for node in list(graph.nodes):
        if node.op == Op.CONST and not node.output.users and node.output not in graph.outputs:
            dropped.append(f"removed {graph.node_text(node, numbering)}")
            graph.erase_node(node)
    return dropped


def freeze_params(graph: Graph) -> list[str]:
    report = []
    numbering = graph.numbering()
    for node in list(graph.param_nodes):
        value = graph.param_values[node.attrs["name"]]
        const = graph.insert_before(node, Op.CONST, [], {"value": value}, node.loc)
        if const.output.type != node.output.type:  # a stored value that no longer fits: keep the parameter
            graph.erase_node(const)
            continue
        graph.replace_all_uses_with(node.output, const.output)
        report.append(f"froze {graph.node_text(node, numbering)}")
        graph.erase_node(node)
    return report
