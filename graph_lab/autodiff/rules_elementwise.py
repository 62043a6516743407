"""Derivative rules (VJPs) of the elementwise ops, written with ``F``: each takes the output cotangents, the
operands and the outputs, and returns one cotangent per operand (None where none flows).

A binary op broadcasts its operands, so each operand's cotangent is summed back to its shape (``unbroadcast``).
"""

from __future__ import annotations

import math

from ..frontends import functional as F
from ..ops import Op
from ..ops.base import register_vjp
from .rules_complex import conj, is_complex


def unbroadcast(ct, shape: tuple):
    """``ct`` summed over the axes broadcasting added or stretched, reshaped to ``shape``."""
    shape = tuple(shape)
    if tuple(ct.shape) == shape:
        return ct
    lead = ct.ndim - len(shape)
    axes = tuple(range(max(lead, 0))) + tuple(lead + i for i, d in enumerate(shape)
                                              if lead + i >= 0 and d == 1 and ct.shape[lead + i] != 1)
    if axes:
        ct = F.sum(ct, axis=axes, keepdims=True)
    return F.reshape(ct, shape)


def _unary(op: Op, derivative):
    """A rule ``ct * derivative(x, y)``, conjugated for a complex ``x`` (the rule of a holomorphic function)."""
    register_vjp(op, lambda cts, ins, outs, **attrs: [cts[0] * conj(derivative(ins[0], outs[0]))])


_C = math.sqrt(2.0 / math.pi)


def _gelu_derivative(x, y):
    t = F.tanh(_C * (x + 0.044715 * x * x * x))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * (_C * (1.0 + 3 * 0.044715 * x * x))


# |z|: the cotangent ``ct * z / |z|`` (NumPy's sign of a complex z), which is not conjugated: |z| is not holomorphic
register_vjp(Op.ABS, lambda cts, ins, outs: [cts[0] * F.sign(ins[0])])  # |x|' = sign(x)  (0 at 0, as PyTorch)

for _op, _d in [
    (Op.EXP, lambda x, y: y),                         # (e^x)' = e^x
    (Op.LOG, lambda x, y: 1.0 / x),                   # log' = 1/x
    (Op.LOG1P, lambda x, y: 1.0 / (1.0 + x)),
    (Op.EXPM1, lambda x, y: y + 1.0),
    (Op.SQRT, lambda x, y: 0.5 / y),                  # sqrt' = 1 / (2 sqrt x)
    (Op.SQUARE, lambda x, y: 2.0 * x),
    (Op.RECIPROCAL, lambda x, y: -(y * y)),           # (1/x)' = -1/x^2
    (Op.TANH, lambda x, y: 1.0 - y * y),
    (Op.SIN, lambda x, y: F.cos(x)),
    (Op.COS, lambda x, y: -F.sin(x)),
    (Op.SIGMOID, lambda x, y: y * (1.0 - y)),
    (Op.GELU, _gelu_derivative),
    (Op.ARCSIN, lambda x, y: 1.0 / F.sqrt(1.0 - x * x)),
    (Op.ARCCOS, lambda x, y: -1.0 / F.sqrt(1.0 - x * x)),
    (Op.ARCTAN, lambda x, y: 1.0 / (1.0 + x * x)),
    (Op.SINH, lambda x, y: F.cosh(x)),
    (Op.COSH, lambda x, y: F.sinh(x)),
    (Op.LOG2, lambda x, y: 1.0 / (x * math.log(2.0))),
    (Op.LOG10, lambda x, y: 1.0 / (x * math.log(10.0))),
    (Op.EXP2, lambda x, y: y * math.log(2.0)),      # (2^x)' = 2^x ln 2
]:
    _unary(_op, _d)

register_vjp(Op.NEG, lambda cts, ins, outs: [-cts[0]])
register_vjp(Op.RELU, lambda cts, ins, outs: [F.where(ins[0] > 0, cts[0], 0.0)])
register_vjp(Op.COPY, lambda cts, ins, outs, **attrs: [cts[0]])
for _op in (Op.SIGN, Op.FLOOR, Op.CEIL, Op.RINT, Op.TRUNC, Op.ROUND):  # piecewise constant: zero a.e.
    register_vjp(_op, lambda cts, ins, outs, **attrs: [None])


def _cast(cts, ins, outs, dtype):
    x, ct = ins[0], cts[0]
    if x.dtype.kind not in "fc":
        return [None]
    if is_complex(ct) and not is_complex(x):  # a real value made complex: only its real part's cotangent
        ct = F.real(ct)
    return [F.cast(ct, x.dtype) if ct.dtype != x.dtype else ct]


register_vjp(Op.CAST, _cast)

# --- two operands (each cotangent unbroadcast to its operand's shape)

register_vjp(Op.ADD, lambda cts, ins, outs: [unbroadcast(cts[0], ins[0].shape), unbroadcast(cts[0], ins[1].shape)])
register_vjp(Op.SUB, lambda cts, ins, outs: [unbroadcast(cts[0], ins[0].shape),
                                             unbroadcast(-cts[0], ins[1].shape)])
register_vjp(Op.MUL, lambda cts, ins, outs: [unbroadcast(cts[0] * conj(ins[1]), ins[0].shape),
                                             unbroadcast(cts[0] * conj(ins[0]), ins[1].shape)])
register_vjp(Op.DIV, lambda cts, ins, outs: [unbroadcast(cts[0] / conj(ins[1]), ins[0].shape),
                                             unbroadcast(-cts[0] * conj(outs[0]) / conj(ins[1]), ins[1].shape)])
register_vjp(Op.FLOORDIV, lambda cts, ins, outs: [None, None])
register_vjp(Op.MOD, lambda cts, ins, outs: [unbroadcast(cts[0], ins[0].shape),
                                             unbroadcast(-cts[0] * F.floor(ins[0] / ins[1]), ins[1].shape)])


def _pow(cts, ins, outs, operator=False):
    x, y = ins
    ct = cts[0]
    dx = ct * y * F.pow(x, y - 1.0)                 # d(x^y)/dx = y x^(y-1)
    dy = ct * outs[0] * F.log(x)                      # d(x^y)/dy = x^y log x  (x > 0)
    return [unbroadcast(dx, x.shape), unbroadcast(dy, y.shape)]


register_vjp(Op.POW, _pow)


def _arctan2(cts, ins, outs):
    """arctan2(a, b), the angle of the point (b, a): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)."""
    a, b = ins
    share = cts[0] / (a * a + b * b)
    return [unbroadcast(share * b, a.shape), unbroadcast(-share * a, b.shape)]


def _hypot(cts, ins, outs):
    a, b = ins
    share = cts[0] / outs[0]
    return [unbroadcast(share * a, a.shape), unbroadcast(share * b, b.shape)]


def _logaddexp(cts, ins, outs):
    """log(e^a + e^b): each operand's share e^a / (e^a + e^b) = e^(a - result), which cannot overflow."""
    a, b = ins
    ct, y = cts[0], outs[0]
    return [unbroadcast(ct * F.exp(a - y), a.shape), unbroadcast(ct * F.exp(b - y), b.shape)]


register_vjp(Op.ARCTAN2, _arctan2)
register_vjp(Op.HYPOT, _hypot)
register_vjp(Op.LOGADDEXP, _logaddexp)


def _extremum(first_wins):
    """maximum/minimum: the cotangent goes to the operand that won; a tie splits it evenly (as PyTorch)."""
    def rule(cts, ins, outs):
        x, y = ins
        ct = cts[0]
        wins, tie = first_wins(x, y), x == y
        dx = F.where(wins, ct, F.where(tie, ct * 0.5, 0.0))
        dy = F.where(wins, 0.0, F.where(tie, ct * 0.5, ct))
        return [unbroadcast(dx, x.shape), unbroadcast(dy, y.shape)]
    return rule


register_vjp(Op.MAXIMUM, _extremum(lambda x, y: x > y))
register_vjp(Op.MINIMUM, _extremum(lambda x, y: x < y))


def _where(cts, ins, outs):
    cond, x, y = ins
    ct = cts[0]
    return [None, unbroadcast(F.where(cond, ct, 0.0), x.shape), unbroadcast(F.where(cond, 0.0, ct), y.shape)]


register_vjp(Op.WHERE, _where)


def _clip(cts, ins, outs, has_min, has_max):
    """The cotangent passes where lo <= x <= hi (PyTorch's clamp); below lo it goes to lo, above hi to hi."""
    x, ct = ins[0], cts[0]
    it = iter(ins[1:])
    lo = next(it) if has_min else None
    hi = next(it) if has_max else None
    inside = x == x
    grads = []
    if lo is not None:
        inside = inside & (x >= lo)
        grads.append(unbroadcast(F.where(x < lo, ct, 0.0), lo.shape))
    if hi is not None:
        inside = inside & (x <= hi)
        grads.append(unbroadcast(F.where(x > hi, ct, 0.0), hi.shape))
    return [F.where(inside, ct, 0.0)] + grads


register_vjp(Op.CLIP, _clip)

# values made from a shape alone carry no gradient
for _op in (Op.ZEROS_LIKE, Op.ONES_LIKE, Op.FULL_LIKE):
    register_vjp(_op, lambda cts, ins, outs, **attrs: [None] * len(ins))


def _full(cts, ins, outs, shape, dtype, fill=None):
    """``full(shape, v)`` with a 0-d operand ``v``: every element is ``v``, so its cotangent is the sum."""
    return [F.cast(F.sum(cts[0]), ins[0].dtype)] if ins else []


register_vjp(Op.FULL, _full)
