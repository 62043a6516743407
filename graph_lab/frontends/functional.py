"""``F``: one function per op of the table, usable on NumPy arrays (run now) and on stand-ins (recorded).

``F.tanh(x)``, ``F.softmax(x, axis=-1)``, ``F.layer_norm(x, w, b)``, ``F.linear(x, w, b)``... are generated from
the op table, so adding an op adds its ``F`` function. ``F.cond``, ``F.while_loop``, ``F.fori_loop`` and
``F.scan`` take functions (jax.lax's signatures) and trace them into regions. A model written with ``F`` runs
eagerly on arrays and is captured by ``trace`` or ``LazyRunner`` without a change.
"""

from __future__ import annotations

from ..ops import REGISTRY, SOURCE_OPS, Op
from .numpy_api import hstack, vstack  # noqa: F401  (composites re-exported as F.hstack, F.vstack)
from .tensor import call_op
from . import control


def _make(op: Op):
    def fn(*args, **kwargs):
        return call_op(op, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = op.value
    fn.__doc__ = f"{REGISTRY[op].doc} (op {op.value!r})."
    return fn


for _op in Op:
    if _op not in SOURCE_OPS:
        globals()[_op.value] = _make(_op)

# Control flow takes Python functions, traced into regions (frontends/control.py), not values.
cond, while_loop, fori_loop, scan = control.cond, control.while_loop, control.fori_loop, control.scan


def array_split(x, indices_or_sections, axis=0):
    """Like ``np.array_split``: sections need not divide the axis evenly."""
    return call_op(Op.SPLIT, x, indices_or_sections, axis, equal=False)


def swapaxes(x, axis1: int, axis2: int):
    ndim = x.ndim if hasattr(x, "ndim") else 0
    perm = list(range(ndim))
    perm[axis1 % ndim], perm[axis2 % ndim] = perm[axis2 % ndim], perm[axis1 % ndim]
    return call_op(Op.TRANSPOSE, x, tuple(perm))


def astype(x, dtype):
    return call_op(Op.CAST, x, dtype)


__all__ = [op.value for op in Op if op not in SOURCE_OPS] + ["array_split", "swapaxes", "astype", "hstack", "vstack"]
