"""Which ops return new memory and which may hand back (a view of) an operand's memory.

A backend that reuses buffers and a pass that must keep a graph's outputs apart both ask the same question: may
this node's result share memory with one of its operands? An op not listed here is taken to say yes (a reshape,
a transpose, a basic index may be views), which is the safe answer for both.
"""

from __future__ import annotations

from .base import Op, opdef
from .indexing import is_basic

FRESH_FAMILIES = frozenset({"unary", "binary", "reduce", "nn"})
"""Families every op of which returns a new array."""
FRESH_OPS = frozenset({Op.MATMUL, Op.OUTER, Op.CONCATENATE, Op.STACK, Op.REPEAT, Op.TILE, Op.PAD, Op.TRIU,
                       Op.TRIL, Op.INDEX_UPDATE, Op.ZEROS_LIKE, Op.ONES_LIKE, Op.FULL_LIKE, Op.FULL})
"""Other ops that return a new array."""


def returns_fresh(node) -> bool:
    """The node's results are new arrays, sharing memory with none of its operands."""
    return opdef(node.op).family in FRESH_FAMILIES or node.op in FRESH_OPS


def may_be_view(node) -> bool:
    """The node's result may share memory with an operand: not ``returns_fresh``, and not an index with index
    arrays (NumPy's advanced indexing always copies; an int index known at run time, ``At``, is basic)."""
    if returns_fresh(node):
        return False
    return not (node.op == Op.INDEX and len(node.inputs) > 1 and not is_basic(node.attrs["key"]))
