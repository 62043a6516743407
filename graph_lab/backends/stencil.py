"""Slices as C sees them: the offset and strides, in elements, of a static view of a C-ordered array.

A stencil statement reads and writes views like ``A[1:-1, :-2]``; a C loop nest reads element ``(i0, i1)`` of
that view at ``offset + i0 * strides[0] + i1 * strides[1]`` of the base array. ``c_programs`` finds the statements
and ``c_program_code`` writes their loop nests from these layouts. The offsets and strides are written into the
source: a graph's shapes are static.
"""

from __future__ import annotations

import numpy as np

from ..ops import Op
from ..ops.indexing import Slice

STENCIL_OPS = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.NEG, Op.SQRT})
"""The ops a stencil statement computes: C's float arithmetic is NumPy's for them (``-ffp-contract=off``)."""
FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _layout(shape: tuple[int, ...], key: tuple) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
    """(offset, strides, shape) in elements of ``base[key]`` for a C-ordered base of ``shape``; None for a key
    that is not integers and static slices."""
    if len(key) > len(shape) or not all(type(k) is int or isinstance(k, Slice) for k in key):
        return None
    c = _c_strides(shape)
    offset, strides, out = 0, [], []
    for d, n in enumerate(shape):
        k = key[d] if d < len(key) else Slice(None, None, None)
        if type(k) is int:
            if not -n <= k < n:
                return None
            offset += (k % n) * c[d]
            continue
        if not all(x is None or type(x) is int for x in k):
            return None
        start, stop, step = slice(*k).indices(n)
        length = len(range(start, stop, step))
        offset += start * c[d] if length else 0
        strides.append(step * c[d])
        out.append(length)
    return offset, tuple(strides), tuple(out)
