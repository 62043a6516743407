"""Temporaries of a C program whose arrays leave the call: returned, or read by NumPy code after it.

A *temporary* of a program (``c_programs``) is arithmetic computed into an array of its own. When only
statements read it, the array is scratch the call makes; when code after the call reads it too (a result of the
graph, a ``np.diff`` of the last time step), it is a new array the call returns, computed as NumPy would have,
and the program takes it only where NumPy's elementwise groups could not do as well: a temporary that reads rolls
(``roll_reads``: the partition's groups cannot), or reads a window of what a statement of the call wrote (the
value is then computed while the statement's output is in the cache, in the same call: a moving average's last
division).
"""

from __future__ import annotations

from ..ops import Op
from .roll_reads import reads_rolls
from .stencil import STENCIL_OPS


def reads_near(node, wanted) -> bool:
    """Whether arithmetic from ``node`` down reads a node ``wanted(n)`` within a few ops (a cheap test before
    looking for a temporary)."""
    pending, seen = [node], 0
    while pending and seen < 64:
        n = pending.pop()
        seen += 1
        if wanted(n):
            return True
        if n.op in STENCIL_OPS:
            pending += [v.node for v in n.inputs]
    return False


def may_leave(node, found: dict) -> bool:
    """Whether the arithmetic ending at ``node`` may be a temporary read after the call: it reads a roll, a
    statement (``found``: id(node) -> statement) or a view of one within a few ops."""
    def wanted(n):
        return n.op == Op.ROLL or id(n) in found or \
            n.op == Op.INDEX and len(n.inputs) == 1 and id(n.inputs[0].node) in found
    return reads_near(node, wanted)


def leaves_the_call(s, found: dict) -> bool:
    """The temporary ``s`` is one whose array the call returns: it reads rolls, or a view of a statement's result
    (a whole array an elementwise group reads as well: trmm_upper's final ``B * alpha`` measured 0.86-0.92x eager
    as a program, 0.93-0.96x as NumPy's call)."""
    return bool(reads_rolls(s.leaves)) or \
        any(id(source.node) in found and leaf is not source for leaf, (source, _) in s.leaves.items())
