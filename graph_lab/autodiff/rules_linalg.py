"""Derivative rules of ``tensordot`` and the products that are one (``dot``, ``inner``), and ``vdot``.

``tensordot(a, b, (la, lb))`` keeps a's free axes then b's: a's cotangent contracts the output cotangent with b
over b's free axes, which leaves a's free axes followed by b's contracted ones (in b's order), put back in a's
order with one transpose; b's likewise. A 0-d operand of ``dot`` or ``inner`` makes them a product.
"""

from __future__ import annotations

import numpy as np

from ..frontends import functional as F
from ..ops import Op, opdef
from ..ops.base import register_vjp
from .rules_complex import conj


def _transpose_to(t, order: list[int]):
    """``t`` whose axis i stands for axis ``order[i]`` of the operand, transposed into the operand's order."""
    return F.transpose(t, tuple(int(i) for i in np.argsort(order))) if order != sorted(order) else t


def tensordot_vjp(ct, a, b, left: tuple, right: tuple) -> list:
    free_a = [i for i in range(a.ndim) if i not in left]
    free_b = [j for j in range(b.ndim) if j not in right]
    ct_b_axes = list(range(len(free_a), len(free_a) + len(free_b)))
    da = F.tensordot(ct, conj(b), axes=(ct_b_axes, free_b))
    da = _transpose_to(da, free_a + [left[right.index(j)] for j in sorted(right)])
    db = F.tensordot(conj(a), ct, axes=(free_a, list(range(len(free_a)))))
    db = _transpose_to(db, [right[left.index(i)] for i in sorted(left)] + free_b)
    return [da, db]


def _tensordot(cts, ins, outs, axes):
    return tensordot_vjp(cts[0], ins[0], ins[1], tuple(axes[0]), tuple(axes[1]))


def _product_or(contracted):
    """The rule of dot / inner: a product when an operand is 0-d, else a tensordot over ``contracted(a, b)``."""
    def rule(cts, ins, outs):
        a, b = ins
        if a.ndim == 0 or b.ndim == 0:
            return opdef(Op.MUL).vjp(cts, ins, outs)
        left, right = contracted(a, b)
        return tensordot_vjp(cts[0], a, b, (left,), (right,))
    return rule


def _vdot(cts, ins, outs):
    """sum(conj(a) * b) of the flattened operands: d/db = ct a, d/da = conj(ct) b (conj(a) is not holomorphic)."""
    a, b, ct = ins[0], ins[1], cts[0]
    return [F.reshape(conj(ct) * F.reshape(b, (-1,)), tuple(a.shape)), F.reshape(ct * F.reshape(a, (-1,)),
                                                                                    tuple(b.shape))]


register_vjp(Op.TENSORDOT, _tensordot)
register_vjp(Op.DOT, _product_or(lambda a, b: (a.ndim - 1, max(b.ndim - 2, 0))))
register_vjp(Op.INNER, _product_or(lambda a, b: (a.ndim - 1, b.ndim - 1)))
register_vjp(Op.VDOT, _vdot)
