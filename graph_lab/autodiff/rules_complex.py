"""Derivative rules of the complex parts (``real``, ``imag``, ``conj``, ``angle``), and the convention for complex
values.

The loss is real. The cotangent of a complex value ``z = x + iy`` is ``dL/dx + i dL/dy`` (PyTorch's convention):
a real and an imaginary part, each the derivative by that part. With it, a holomorphic ``f`` has the rule
``ct * conj(f'(z))``, a linear map's rule is its adjoint (conjugate transpose), and the cotangent of a real operand
is the real part of what its rule gives (``backward`` takes it). Only the ops in ``COMPLEX_OPS`` have rules written
and tested for complex operands; any other op with a complex operand or result is refused (``NoDerivativeError``),
so a rule written for real values is never applied to complex ones.
"""

from __future__ import annotations

import math

from ..frontends import functional as F
from ..ops import Op
from ..ops.base import register_vjp


def is_complex(t) -> bool:
    return t.dtype.kind == "c"


def conj(t):
    """``t`` conjugated when it is complex (no node for a real value)."""
    return F.conj(t) if is_complex(t) else t


def as_complex(ct, like):
    """The real cotangent ``ct`` as a cotangent of the complex ``like`` (zero imaginary part)."""
    return F.cast(ct, like.dtype) if ct.dtype != like.dtype else ct


def _real(cts, ins, outs):
    x = ins[0]
    return [as_complex(cts[0], x) if is_complex(x) else cts[0]]


def _imag(cts, ins, outs):
    """imag(x + iy) = y: the cotangent ``i ct``; a real operand's imaginary part is 0 whatever it is."""
    x = ins[0]
    return [as_complex(cts[0], x) * 1j if is_complex(x) else None]


def _conj(cts, ins, outs):
    return [conj(cts[0])]


def _angle(cts, ins, outs, deg):
    """angle(z) = arctan2(y, x): d/dx = -y / |z|^2, d/dy = x / |z|^2, so the cotangent is ``ct i z / |z|^2``.
    A real operand's angle is 0 or pi: constant except at 0."""
    z = ins[0]
    if not is_complex(z):
        return [None]
    ct = cts[0] * (180.0 / math.pi) if deg else cts[0]
    magnitude = F.abs(z)
    return [as_complex(ct / (magnitude * magnitude), z) * (1j * z)]


register_vjp(Op.REAL, _real)
register_vjp(Op.IMAG, _imag)
register_vjp(Op.CONJ, _conj)
register_vjp(Op.ANGLE, _angle)

COMPLEX_OPS = frozenset({
    Op.REAL, Op.IMAG, Op.CONJ, Op.ANGLE, Op.ABS, Op.EXP, Op.NEG, Op.COPY, Op.CAST, Op.ADD, Op.SUB, Op.MUL, Op.DIV,
    Op.ROUND, Op.SUM, Op.MEAN, Op.RESHAPE, Op.TRANSPOSE, Op.EXPAND_DIMS, Op.SQUEEZE, Op.BROADCAST_TO, Op.INDEX,
    Op.VDOT, Op.LIBRARY_CALL,
})
"""The ops whose rules are written for complex values too (and checked on complex samples in
tests/autodiff/test_autodiff.py); ``library_call`` refuses complex operands for its linear-algebra functions itself."""
