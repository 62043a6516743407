"""Derivative rules of the reductions, the shape ops and indexing, written with ``F``.

A reduction's cotangent is put back on the reduced axes (``expand_back``) and spread over the elements that
made each result. A shape op's cotangent takes the inverse movement. Indexing scatters the cotangent back into
zeros with ``index_update``, which is exact when no position is indexed twice: for basic keys (slices, ints) and
for constant index arrays without repeats; ``x[idx]`` with a computed ``idx`` (an embedding lookup, where repeats
are the rule) sums with a one-hot matrix instead, and other keys are refused.
"""

from __future__ import annotations

import numpy as np

from ..frontends import functional as F
from ..ops import Op
from ..ops.base import register_vjp
from ..ops.indexing import At, IntIndex, Slice, Slot, is_basic
from .core import NoDerivativeError
from .rules_elementwise import unbroadcast


def _axes(axis, ndim: int) -> tuple[int, ...]:
    return tuple(range(ndim)) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))


def expand_back(ct, x, axis, keepdims: bool):
    """The cotangent of a reduction of ``x`` over ``axis``, broadcast back to ``x``'s shape."""
    axes = _axes(axis, x.ndim)
    if not keepdims:
        ct = F.reshape(ct, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return F.broadcast_to(ct, tuple(x.shape))


def _count(x, axis) -> int:
    n = 1
    for a in _axes(axis, x.ndim):
        n *= x.shape[a]
    return n


def _sum(cts, ins, outs, axis, keepdims):
    return [expand_back(cts[0], ins[0], axis, keepdims)]


def _mean(cts, ins, outs, axis, keepdims):
    return [expand_back(cts[0], ins[0], axis, keepdims) / float(_count(ins[0], axis))]


def _extremum(cts, ins, outs, axis, keepdims):
    """max/min: spread evenly over the elements equal to the result (PyTorch's amax/amin)."""
    x = ins[0]
    hit = F.cast(x == expand_back(outs[0], x, axis, keepdims), x.dtype)
    share = hit / F.sum(hit, axis=axis, keepdims=True)
    return [share * expand_back(cts[0], x, axis, keepdims)]


def _prod(cts, ins, outs, axis, keepdims):
    """prod(x) / x_i for each element (for operands without zeros)."""
    x = ins[0]
    return [expand_back(cts[0], x, axis, keepdims) * expand_back(outs[0], x, axis, keepdims) / x]


def _var(cts, ins, outs, axis, keepdims, ddof):
    x = ins[0]
    centered = x - F.mean(x, axis=axis, keepdims=True)
    return [expand_back(cts[0], x, axis, keepdims) * centered * (2.0 / (_count(x, axis) - ddof))]


def _std(cts, ins, outs, axis, keepdims, ddof):
    x = ins[0]
    centered = x - F.mean(x, axis=axis, keepdims=True)
    scale = expand_back(cts[0] / outs[0], x, axis, keepdims)
    return [scale * centered * (1.0 / (_count(x, axis) - ddof))]


for _op, _rule in [(Op.SUM, _sum), (Op.MEAN, _mean), (Op.MAX, _extremum), (Op.MIN, _extremum), (Op.PROD, _prod),
                   (Op.VAR, _var), (Op.STD, _std)]:
    register_vjp(_op, _rule)

# --- shape ops: the inverse movement

register_vjp(Op.RESHAPE, lambda cts, ins, outs, shape: [F.reshape(cts[0], tuple(ins[0].shape))])
register_vjp(Op.EXPAND_DIMS, lambda cts, ins, outs, axis: [F.reshape(cts[0], tuple(ins[0].shape))])
register_vjp(Op.SQUEEZE, lambda cts, ins, outs, axis: [F.reshape(cts[0], tuple(ins[0].shape))])
register_vjp(Op.BROADCAST_TO, lambda cts, ins, outs, shape: [unbroadcast(cts[0], ins[0].shape)])
register_vjp(Op.TRANSPOSE, lambda cts, ins, outs, perm: [F.transpose(cts[0], tuple(int(i) for i in np.argsort(perm)))])
register_vjp(Op.TRIU, lambda cts, ins, outs, k: [F.triu(cts[0], k)])
register_vjp(Op.TRIL, lambda cts, ins, outs, k: [F.tril(cts[0], k)])


def _concatenate(cts, ins, outs, axis):
    ct = cts[0]
    if axis is None:
        sizes = [int(np.prod(x.shape)) for x in ins]
        pieces = F.split(ct, list(np.cumsum(sizes)[:-1]), 0)
        return [F.reshape(p, tuple(x.shape)) for p, x in zip(pieces, ins)]
    return list(F.split(ct, list(np.cumsum([x.shape[axis] for x in ins])[:-1]), axis))


def _stack(cts, ins, outs, axis):
    pieces = F.split(cts[0], len(ins), axis)
    return [F.reshape(p, tuple(x.shape)) for p, x in zip(pieces, ins)]


def _split(cts, ins, outs, indices, axis):
    """The pieces' cotangents concatenated; split points out of order make pieces that overlap (or are empty),
    whose cotangents are then added where they lie."""
    x = ins[0]
    n = x.shape[axis]
    bounds = [0] + [min(max(i if i >= 0 else i + n, 0), n) for i in indices] + [n]
    if all(a <= b for a, b in zip(bounds, bounds[1:])):
        return [F.concatenate(list(cts), axis=axis)]
    dx = F.zeros_like(x)
    for lo, hi, ct in zip(bounds, bounds[1:], cts):
        if hi > lo:
            key = (slice(None),) * axis + (slice(lo, hi),)
            dx = F.index_update(dx, key, dx[key] + ct)
    return [dx]


def _repeat(cts, ins, outs, repeats, axis):
    x, ct = ins[0], cts[0]
    if isinstance(repeats, tuple):
        if len(repeats) != 1:
            raise NoDerivativeError("repeat with one count per element is not differentiable here; repeat with "
                                    "one count for all")
        repeats = repeats[0]
    if axis is None:
        return [F.reshape(F.sum(F.reshape(ct, (-1, repeats)), axis=1), tuple(x.shape))]
    shape = tuple(x.shape)
    split = shape[:axis] + (shape[axis], repeats) + shape[axis + 1:]
    return [F.sum(F.reshape(ct, split), axis=axis + 1)]


def _tile(cts, ins, outs, reps):
    x, ct = ins[0], cts[0]
    n = max(x.ndim, len(reps))
    shape = (1,) * (n - x.ndim) + tuple(x.shape)
    reps = (1,) * (n - len(reps)) + tuple(reps)
    interleaved = tuple(v for r, d in zip(reps, shape) for v in (r, d))
    summed = F.sum(F.reshape(ct, interleaved), axis=tuple(range(0, 2 * n, 2)))
    return [F.reshape(summed, tuple(x.shape))]


def _pad(cts, ins, outs, pad_width, value):
    x = ins[0]
    key = tuple(slice(b, b + d) for (b, _), d in zip(pad_width, x.shape))
    return [cts[0][key]]


for _op, _rule in [(Op.CONCATENATE, _concatenate), (Op.STACK, _stack), (Op.SPLIT, _split), (Op.REPEAT, _repeat),
                   (Op.TILE, _tile), (Op.PAD, _pad)]:
    register_vjp(_op, _rule)

# --- indexing


def _key(key: tuple, operands) -> tuple:
    return tuple(k.to_slice() if isinstance(k, Slice) else operands[k.pos] if isinstance(k, Slot) else
                 IntIndex(operands[k.pos], None) if type(k) is At else k for k in key)


def _positions(x, key: tuple, operands):
    """The flat position in ``x`` of each element ``x[key]`` reads: the same key applied to ``arange(x.size)``.
    An array when every index array is a constant (computed now), else a stand-in."""
    known = [_constant(o) for o in operands]
    return F.index(np.arange(int(np.prod(x.shape))).reshape(tuple(x.shape)), _key(key, known))


def _constant(t):
    """The value of a stand-in made by a ``const`` node, else the stand-in itself."""
    value = getattr(t, "_value", None)
    return value.node.attrs["value"] if value is not None and value.node.op == Op.CONST else t


def _unique_constant(positions) -> bool:
    return isinstance(positions, np.ndarray) and len(np.unique(positions)) == positions.size


def _one_hot_rows(x, idx, ct):
    """The cotangent of ``x[idx]`` (rows picked by a computed ``idx``, repeats allowed): a one-hot matrix
    ``(idx % rows == arange(rows))`` multiplied by the cotangent sums the repeats."""
    rows = x.shape[0]
    hot = F.cast(F.reshape(F.mod(idx, rows), (-1, 1)) == np.arange(rows), x.dtype)   # [n, rows]
    flat = F.reshape(ct, (hot.shape[0], -1))                                          # [n, rest]
    return F.reshape(F.matmul(F.transpose(hot), flat), tuple(x.shape))


def _one_hot_positions(x, positions, ct):
    """The general gather's cotangent: each element of ``ct`` added at its flat position (repeats summed)."""
    hot = F.cast(F.reshape(positions, (-1, 1)) == np.arange(int(np.prod(x.shape))), x.dtype)   # [t, x.size]
    return F.reshape(F.matmul(F.transpose(hot), F.reshape(ct, (-1,))), tuple(x.shape))


def _index(cts, ins, outs, key):
    x, ct = ins[0], cts[0]
    rest = [None] * (len(ins) - 1)
    if is_basic(key):
        return [F.index_update(F.zeros_like(x), _key(key, ins), ct)] + rest
    positions = _positions(x, key, ins)
    if _unique_constant(positions):
        return [F.index_update(F.zeros_like(x), _key(key, ins), ct)] + rest
    full = Slice(None, None, None)
    if isinstance(key[0], Slot) and all(k == full or k is Ellipsis for k in key[1:]):
        return [_one_hot_rows(x, ins[key[0].pos], ct)] + rest
    return [_one_hot_positions(x, positions, ct)] + rest


def _index_update(cts, ins, outs, key):
    x, value, ct = ins[0], ins[1], cts[0]
    if not is_basic(key) and not _unique_constant(_positions(x, key, ins)):
        raise NoDerivativeError(f"index_update with index arrays that are computed or repeat a position (key "
                                f"{key}): which of the repeated writes wins is NumPy's iteration order, so the value's "
                                f"cotangent is not defined; write through slices or constant indices without "
                                f"repeats")
    full = _key(key, ins)
    dx = F.index_update(ct, full, 0.0)                # written positions lose x's contribution
    return [dx, unbroadcast(ct[full], value.shape)] + [None] * (len(ins) - 2)


register_vjp(Op.INDEX, _index)
register_vjp(Op.INDEX_UPDATE, _index_update)
