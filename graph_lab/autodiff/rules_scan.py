"""Derivative rules of the ops along one axis (running sums and products, ``ufunc.accumulate``, ``ufunc.reduce``,
``ufunc.outer``, ``sort``, ``diff``), written with ``F``.

A running sum's cotangent is the running sum of the cotangent taken from the other end. ``accumulate`` and
``reduce`` of any other binary op are a chain ``y[j] = op(y[j-1], x[j])``: their rule walks the chain backwards,
one call of that op's own rule per step (so the axis's length must be known at capture). ``sort`` sends each
cotangent back to the element that landed there: it is the inverse permutation of ``argsort``.
"""

from __future__ import annotations

import numpy as np

from ..frontends import functional as F
from ..ops import Op, opdef
from ..ops.base import register_vjp
from .core import NoDerivativeError


def _flat(axis):
    return 0 if axis is None else axis


def _reverse_cumsum(ct, axis):
    return F.flip(F.cumsum(F.flip(ct, axis), axis), axis)


def _cumsum(cts, ins, outs, axis):
    """y[j] = sum of x[:j+1], so x[i] reaches every y[j] with j >= i."""
    x = ins[0]
    return [F.reshape(_reverse_cumsum(cts[0], _flat(axis)), tuple(x.shape))]


def _cumprod(cts, ins, outs, axis):
    """dy[j]/dx[i] = y[j] / x[i] for j >= i (operands without zeros, as ``prod``'s rule)."""
    x = ins[0]
    summed = _reverse_cumsum(cts[0] * outs[0], _flat(axis))
    return [F.reshape(summed, tuple(x.shape)) / x]


register_vjp(Op.CUMSUM, _cumsum)
register_vjp(Op.CUMPROD, _cumprod)


def _binary_rule(ufunc: str):
    rule = opdef(ufunc).vjp
    if rule is None:
        raise NoDerivativeError(f"the binary op {ufunc} has no derivative rule of its own, so neither do its "
                                f"ufunc methods")
    return rule


def _static_length(n, what: str) -> int:
    if type(n) is not int:
        raise NoDerivativeError(f"{what} along an axis of symbolic size {n}: the rule unrolls the axis, so its "
                                f"size must be known at capture")
    return n


def _chain_backward(ufunc: str, ct_steps: list, x_steps: list, y_steps: list) -> list:
    """The cotangents of ``x_steps`` of the chain ``y[0] = x[0]``, ``y[j] = ufunc(y[j-1], x[j])``, given the
    cotangent arriving at each ``y[j]`` from outside (None where none arrives)."""
    rule = _binary_rule(ufunc)
    n = len(x_steps)
    dx: list = [None] * n
    carry = None
    for j in range(n - 1, -1, -1):
        total = ct_steps[j] if carry is None else (carry if ct_steps[j] is None else ct_steps[j] + carry)
        if j == 0:
            dx[0] = total
            break
        d_prev, d_x = rule([total], [y_steps[j - 1], x_steps[j]], [y_steps[j]])
        dx[j], carry = d_x, d_prev
    return [d if d is not None else F.zeros_like(x) for d, x in zip(dx, x_steps)]


def _steps(t, axis: int, n: int) -> list:
    key = (slice(None),) * axis
    return [t[key + (j,)] for j in range(n)]


def _accumulate(cts, ins, outs, ufunc, axis):
    x, y, ct = ins[0], outs[0], cts[0]
    if ufunc == Op.ADD:
        return _cumsum(cts, ins, outs, axis)
    if ufunc == Op.MUL:
        return _cumprod(cts, ins, outs, axis)
    n = _static_length(x.shape[axis], f"{ufunc}.accumulate")
    if n == 0:
        return [F.zeros_like(x)]
    dx = _chain_backward(ufunc, _steps(ct, axis, n), _steps(x, axis, n), _steps(y, axis, n))
    return [F.stack(dx, axis)]


def _ufunc_reduce(cts, ins, outs, ufunc, axis, keepdims):
    """The reduction is the last step of the chain: the chain's values are ``accumulate`` of the operand (the
    reduced axes moved last and joined into one first: NumPy reduces over several axes only for the ufuncs it may
    reorder)."""
    x, ct = ins[0], cts[0]
    axes = tuple(range(x.ndim)) if axis is None else tuple(axis)
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = F.transpose(x, tuple(kept + list(axes))) if kept + list(axes) != list(range(x.ndim)) else x
    kept_shape = tuple(x.shape[i] for i in kept)
    n = 1
    for a in axes:
        n *= _static_length(x.shape[a], f"{ufunc}.reduce")
    if n == 0:
        return [F.zeros_like(x)]
    joined = F.reshape(moved, kept_shape + (n,))
    last = len(kept)
    running = F.accumulate(joined, ufunc, axis=last)
    ct_steps = [None] * (n - 1) + [F.reshape(ct, kept_shape)]
    dx = F.stack(_chain_backward(ufunc, ct_steps, _steps(joined, last, n), _steps(running, last, n)), last)
    dx = F.reshape(dx, tuple(moved.shape))
    inverse = tuple(int(i) for i in np.argsort(kept + list(axes)))
    return [F.transpose(dx, inverse) if kept + list(axes) != list(range(x.ndim)) else dx]


def _ufunc_outer(cts, ins, outs, ufunc):
    """``ufunc.outer(a, b)`` is ``ufunc(a[..., None, ...], b)`` broadcast: the op's own rule on a reshaped."""
    a, b = ins
    widened = F.reshape(a, tuple(a.shape) + (1,) * b.ndim)
    da, db = _binary_rule(ufunc)(cts, [widened, b], outs)
    return [None if da is None else F.reshape(da, tuple(a.shape)), db]


register_vjp(Op.ACCUMULATE, _accumulate)
register_vjp(Op.UFUNC_REDUCE, _ufunc_reduce)
register_vjp(Op.UFUNC_OUTER, _ufunc_outer)


def _sort(cts, ins, outs, axis, kind):
    """sorted[j] = x[order[j]], so x[i]'s cotangent is ct[inverse[i]], ``inverse = argsort(order)``. Ties get
    one cotangent each in a stable order (sort is not differentiable at a tie)."""
    x = ins[0]
    along = _flat(axis)
    order = F.argsort(x, axis=axis, kind="stable")
    inverse = F.argsort(order, axis=along, kind="stable")
    return [F.reshape(F.take_along_axis(cts[0], inverse, along), tuple(x.shape))]


def _diff(cts, ins, outs, n, axis):
    """One difference d[i] = x[i+1] - x[i] sends ct[i-1] - ct[i] to x[i]; n of them, n times."""
    x, ct = ins[0], cts[0]
    if x.shape[axis] - n <= 0:
        return [F.zeros_like(x)]
    widths_before = tuple((1, 0) if i == axis else (0, 0) for i in range(x.ndim))
    widths_after = tuple((0, 1) if i == axis else (0, 0) for i in range(x.ndim))
    for _ in range(n):
        ct = F.pad(ct, widths_before) - F.pad(ct, widths_after)
    return [ct]


register_vjp(Op.SORT, _sort)
register_vjp(Op.DIFF, _diff)
