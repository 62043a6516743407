"""The rule table of ``simplify``: small local rewrites, one rule per line, each with the reason it is exact.

Every rule is exact: the graph computes the same bits afterwards, for every input of the node's dtype. That is
why ``x + 0.0 -> x`` is not a rule for floats: ``-0.0 + 0.0`` is ``+0.0``, so the identity is ``x + (-0.0)``
(and ``x - 0.0``). The driver (``simplify.py``) refuses a rewrite whose result has another type than the node's.
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




def is_const(v: Value, number: float, *, negative_zero: bool | None = None) -> bool:
    """``v`` is a constant whose every element equals ``number`` (and, if asked, has that sign of zero)."""
    if v.node.op != Op.CONST:
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
