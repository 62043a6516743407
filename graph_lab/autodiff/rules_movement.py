"""Derivative rules of the data-movement ops (``flip``, ``roll``, diagonals and ``trace``, ``take``,
``take_along_axis``), written with ``F``.

Each moves the cotangent back where the element came from. A diagonal's cotangent is put on the diagonal of
zeros by two constant 0/1 matrices (``ct[..., None, :] * rows @ cols.T``); ``take`` and ``take_along_axis`` may
read a position twice, so their cotangents are sums with a one-hot matrix of the indices (as a gather's is).
"""

from __future__ import annotations

import numpy as np

from ..frontends import functional as F
from ..ops import Op
from ..ops.base import register_vjp
from .core import NoDerivativeError
from .rules_elementwise import unbroadcast


def _static(n, what: str) -> int:
    if type(n) is not int:
        raise NoDerivativeError(f"{what}: the rule needs the size {n} known at capture")
    return n


register_vjp(Op.FLIP, lambda cts, ins, outs, axis: [F.flip(cts[0], axis)])


def _roll(cts, ins, outs, shift, axis):
    back = tuple(-s for s in shift) if isinstance(shift, tuple) else -shift
    return [F.roll(cts[0], back, axis)]


register_vjp(Op.ROLL, _roll)


def _diagonal_length(n1: int, n2: int, offset: int) -> int:
    rows, cols = (n1, n2 - offset) if offset >= 0 else (n1 + offset, n2)
    return max(0, min(rows, cols))


def onto_diagonal(ct, x, offset: int, axis1: int, axis2: int):
    """The cotangent of ``diagonal(x, offset, axis1, axis2)``: ``ct`` (the diagonal as its last axis) placed on
    that diagonal of zeros of ``x``'s shape."""
    n1, n2 = _static(x.shape[axis1], "diagonal"), _static(x.shape[axis2], "diagonal")
    length = ct.shape[-1]
    if length == 0:
        return F.zeros_like(x)
    rows = np.zeros((n1, length), x.dtype)
    cols = np.zeros((n2, length), x.dtype)
    rows[np.arange(length) + max(-offset, 0), np.arange(length)] = 1
    cols[np.arange(length) + max(offset, 0), np.arange(length)] = 1
    placed = F.matmul(F.expand_dims(ct, -2) * rows, cols.T)         # rest + (n1, n2)
    order = [i for i in range(x.ndim) if i not in (axis1, axis2)] + [axis1, axis2]
    return F.transpose(placed, tuple(int(i) for i in np.argsort(order))) if order != list(range(x.ndim)) else placed


def _diagonal(cts, ins, outs, offset, axis1, axis2):
    return [onto_diagonal(cts[0], ins[0], offset, axis1, axis2)]


def _diag(cts, ins, outs, k):
    v = ins[0]
    if v.ndim == 1:  # v laid on the k-th diagonal of a matrix: its cotangent is that diagonal of ct
        return [F.diagonal(cts[0], k)]
    return [onto_diagonal(cts[0], v, k, 0, 1)]


def _trace(cts, ins, outs, offset, axis1, axis2):
    """The sum of a diagonal: every diagonal element gets the cotangent of its sum."""
    x, ct = ins[0], cts[0]
    length = _diagonal_length(_static(x.shape[axis1], "trace"), _static(x.shape[axis2], "trace"), offset)
    spread = F.broadcast_to(F.expand_dims(ct, -1), tuple(ct.shape) + (length,))
    return [onto_diagonal(spread, x, offset, axis1, axis2)]


register_vjp(Op.DIAGONAL, _diagonal)
register_vjp(Op.DIAG, _diag)
register_vjp(Op.TRACE, _trace)


def _one_hot(indices, n: int, dtype):
    """``[indices.size, n]``: row t has a 1 at the (wrapped) position ``indices.flat[t]``."""
    return F.cast(F.reshape(F.mod(indices, n), (-1, 1)) == np.arange(n), dtype)


def _take(cts, ins, outs, axis):
    x, indices, ct = ins[0], ins[1], cts[0]
    if axis is None:
        n = _static(x.size, "take")
        summed = F.matmul(F.reshape(ct, (-1,)), _one_hot(indices, n, x.dtype))
        return [F.reshape(summed, tuple(x.shape)), None]
    n = _static(x.shape[axis], "take")
    before, after = tuple(x.shape[:axis]), tuple(x.shape[axis + 1:])
    flat = F.reshape(ct, before + (-1,) + after)
    summed = F.tensordot(flat, _one_hot(indices, n, x.dtype), axes=([axis], [0]))   # before + after + (n,)
    order = list(range(axis)) + [x.ndim - 1] + list(range(axis, x.ndim - 1))
    return [F.transpose(summed, tuple(order)) if axis != x.ndim - 1 else summed, None]


def _take_along_axis(cts, ins, outs, axis):
    """out[..., j, ...] = x[..., idx[..., j, ...], ...]: x[..., k, ...] gets the cotangents of the j with
    idx == k, summed (a one-hot axis of size n next to the index axis); then summed over the axes where x
    broadcast against the indices."""
    x, indices, ct = ins[0], ins[1], cts[0]
    if axis is None:
        return _take(cts, ins, outs, None)
    n = _static(x.shape[axis], "take_along_axis")
    positions = np.arange(n).reshape((n,) + (1,) * (x.ndim - axis - 1))
    hot = F.cast(F.expand_dims(F.mod(indices, n), axis + 1) == positions, x.dtype)        # ... j, n ...
    summed = F.sum(F.expand_dims(ct, axis + 1) * hot, axis=axis)
    return [unbroadcast(summed, tuple(x.shape)), None]


register_vjp(Op.TAKE, _take)
register_vjp(Op.TAKE_ALONG_AXIS, _take_along_axis)
