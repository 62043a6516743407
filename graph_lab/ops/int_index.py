"""Ints known only when the graph runs, in an index key (ops/indexing.py): ``At`` and ``Span``.

A loop region's body indexes with its input ``i`` (``A[i, 1:-1]``, ``A[i - 1]``, ``A[:, k:k + 2]``): the int is an
operand of the ``index`` node, as an index array is, but NumPy reads it as an *integer* index (basic indexing:
a view, one axis removed, a negative index counting from the end, IndexError out of bounds). ``At(pos)`` is such
an int; ``Span(pos, length)`` is the slice ``s : s + length`` from such an int ``s``, of a length known now, so
that the result's shape is static. Running a span checks that NumPy's slice has that length (past the end of
the axis it would be shorter, and the graph's types would be wrong). A frontend asks for either with an
``IntIndex`` in the key it gives ``bind_key``.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np


class At(NamedTuple):
    """An integer index that is the node's operand number ``pos`` (a 0-d integer value, read as a Python int)."""

    pos: int

    def __str__(self) -> str:
        return f"@{self.pos}"


class Span(NamedTuple):
    """The slice ``s : s + length`` whose start ``s`` is the node's operand number ``pos`` (a 0-d integer)."""

    pos: int
    length: int

    def __str__(self) -> str:
        return f"@{self.pos}:+{self.length}"


class IntIndex:
    """In a key given to ``bind_key``: ``value`` (a 0-d integer tensor) is an integer index known when the graph
    runs, to be an ``At`` operand, or with ``length`` the start of a ``Span``. ``now`` is its value during
    capture (what a view made with it is rebuilt from, ``fill_key``). (Not a tuple: a tuple in a key is an index
    array.)"""

    __slots__ = ("value", "now", "length")

    def __init__(self, value, now: int | None, length: int | None = None):
        self.value, self.now, self.length = value, now, length

    def __repr__(self) -> str:
        return f"IntIndex({self.now})" if self.length is None else f"IntIndex({self.now}:+{self.length})"


def view_key(key: tuple, operands) -> tuple:
    """``key`` with each ``At`` given back as the ``IntIndex`` of its operand: the key of a view, from which a
    write through the view is recorded again (``bind_key`` numbers the operand anew)."""
    if not any(type(k) is At or type(k) is Span for k in key):
        return key
    return tuple(IntIndex(operands[k.pos], None) if type(k) is At else
                 IntIndex(operands[k.pos], None, k.length) if type(k) is Span else k for k in key)


def span_slice(start, length: int) -> slice:
    s = operator.index(start)
    return slice(s, s + length)


def known_index(k: IntIndex):
    return k.now if k.length is None else slice(k.now, k.now + k.length)


def check_spans(base, key: tuple, operands) -> None:
    """Each ``Span`` of ``key`` takes its whole length of ``base``'s axis (NumPy's slice would be shorter past
    its end): an IndexError otherwise, as for an int index out of bounds."""
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    axis = 0
    for k in key:
        if k is Ellipsis:
            axis += np.ndim(base) - consumed
        elif k is not None:
            if type(k) is Span:
                n = np.shape(base)[axis]
                s = operator.index(operands[k.pos])
                if len(range(n)[s:s + k.length]) != k.length:
                    raise IndexError(f"slice {s}:{s + k.length} is not {k.length} items long in axis {axis} "
                                     f"with size {n}")
            axis += 1


def has_spans(key: tuple) -> bool:
    return any(type(k) is Span for k in key)


