"""Fast-math rewrites: algebra that is true of real numbers but not bit for bit of floating point.

Behind an explicit option (the ``fast_math`` pipeline), never in the default one. Each rule changes only the
last bits of a result (reassociation, a multiplication by a rounded reciprocal); none changes the sign of a zero,
and none turns a finite result into NaN or inf except where NumPy's own result is within one rounding of
overflowing. A zero's sign is not a last bit: ``np.angle``, ``arctan2``, ``copysign``, ``1 / x`` and ``signbit``
turn it into pi, inf or a flipped answer, beyond any ulps tolerance. So ``x + 0.0 -> x`` is no rule here
(``-0.0 + 0.0`` is ``+0.0``); its exact forms, ``x + (-0.0)`` and ``x - 0.0``, are in the exact table. The rules
use ``simplify``'s driver, so they print and report like the exact ones.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ops import Op
from .simplify import simplify
from .simplify_rules import RULES, Rule, first, second


def const_value(v: Value):
    return v.node.attrs["value"] if v.node.op == Op.CONST else None


def is_float(v: Value) -> bool:
    return np.issubdtype(v.type.dtype, np.floating)


def _new_const(g: Graph, before: Node, value) -> Value:
    return g.insert_before(before, Op.CONST, [], {"value": value}, before.loc).output


def divide_by_constant(n: Node, g: Graph) -> Value | None:
    """x / c -> x * (1 / c): a multiplication is several times cheaper than a division; 1 / c is rounded. The
    signs agree (1 / c has c's sign, 1 / inf is a zero), zeros included. Not when 1 / c overflows in the
    result's dtype (c subnormal there): ``0 / c`` is 0 but ``0 * inf`` is NaN."""
    c = const_value(second(n))
    if not is_float(n.output) or c is None or not np.all(np.asarray(c) != 0):
        return None
    if type(c) in (int, float):
        inverse = 1.0 / c  # a Python float: weak, like c, so the product keeps x's dtype
    elif isinstance(c, (np.ndarray, np.generic)) and c.dtype.kind == "f":
        with np.errstate(all="ignore"):
            inverse = np.asarray(1, c.dtype) / c
    else:
        return None
    with np.errstate(all="ignore"):
        if not np.all(np.isfinite(np.asarray(inverse).astype(n.output.type.dtype))):
            return None
    return g.insert_before(n, Op.MUL, [first(n), _new_const(g, n, inverse)], {}, n.loc).output


def reassociate(op: Op):
    """(x op c1) op c2 -> x op (c1 op c2) for weak (Python) constants: one rounding instead of two. A zero
    result keeps its sign (-0.0 on both sides only when x, c1 and c2 are all -0.0), but where the additions
    cancel, eager's +0.0 may come out as a tiny number of either sign: last bits, near zero."""
    def rewrite(n: Node, g: Graph) -> Value | None:
        inner, c2 = first(n).node, const_value(second(n))
        if inner.op != op or not isinstance(c2, float) or not isinstance(const_value(second(inner)), float):
            return None
        if len(first(n).users) != 1 or not is_float(n.output):
            return None  # the inner result is needed elsewhere: nothing saved
        c1 = const_value(second(inner))
        combined = c1 * c2 if op == Op.MUL else c1 + c2
        return g.insert_before(n, op, [first(inner), _new_const(g, n, combined)], {}, n.loc).output
    return rewrite


FAST_MATH_RULES: list[Rule] = [
    Rule(Op.DIV, "x / c -> x * (1/c) [fast-math: 1/c is rounded]", divide_by_constant),
    Rule(Op.MUL, "(x * c1) * c2 -> x * (c1*c2) [fast-math: reassociation]", reassociate(Op.MUL)),
    Rule(Op.ADD, "(x + c1) + c2 -> x + (c1+c2) [fast-math: reassociation]", reassociate(Op.ADD)),
]


def simplify_fast_math(graph: Graph) -> list[str]:
    """The exact rules and the fast-math ones, to a fixed point."""
    return simplify(graph, RULES + FAST_MATH_RULES)
