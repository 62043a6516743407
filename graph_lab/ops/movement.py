"""Data movement without arithmetic: the real and imaginary parts, ``flip``, ``roll``, diagonals, and ``take``.

``real``, ``imag``, ``flip``, ``diagonal`` and ``diag`` of a matrix are views in NumPy (``diagonal``'s is
read-only): they are marked as views, so a write through one is refused rather than lost. The others make new
arrays. Each is NumPy's own function.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..ir.relations import relation
from ..ir.shape_env import decide
from ..ir.types import TensorType
from .base import Op, OpDef, broadcast, ndim_of, normalize_axes, normalize_axis, probe_dtype, register, static_int


def _one(x):
    return [x], {}


def _part(op: Op, fn, numpy_name: str, doc: str):
    def infer(types, attrs):
        return (TensorType(probe_dtype(fn, types, ()), types[0].shape),)
    register(OpDef(op, "shape", _one, infer, fn, numpy_name, view=True, doc=doc))


_part(Op.REAL, np.real, "np.real", "the real part (x itself for real dtypes; a view)")
_part(Op.IMAG, np.imag, "np.imag", "the imaginary part (zeros for real dtypes)")


def _same_type(types, attrs):
    return (types[0],)


# --- flip and roll

def _bind_flip(m, axis=None):
    return [m], {"axis": normalize_axes(Op.FLIP, axis, ndim_of(m))}


def _flip(m, axis):
    return np.flip(m, axis)


register(OpDef(Op.FLIP, "shape", _bind_flip, _same_type, _flip, "np.flip", view=True,
               doc="the order of elements reversed along axes (all when axis is None)"))


def _bind_roll(a, shift, axis=None):
    nd = ndim_of(a)
    if isinstance(shift, (tuple, list)):
        shift = tuple(static_int(Op.ROLL, "each shift", s) for s in shift)
    else:
        shift = static_int(Op.ROLL, "shift", shift)
    if axis is not None:
        # (an axis may repeat: NumPy adds up the shifts along it)
        axis = tuple(normalize_axis(Op.ROLL, ax, nd) for ax in axis) if isinstance(axis, (tuple, list)) else \
            normalize_axis(Op.ROLL, axis, nd)
    if isinstance(shift, tuple) and (axis is None or isinstance(axis, int) or len(axis) != len(shift)):
        if not isinstance(axis, tuple) or len(axis) != len(shift):
            raise OpError("roll: give one axis for each shift ('shift' and 'axis' should be scalars or 1D "
                          "sequences of the same length)")
    return [a], {"shift": shift, "axis": axis}


def _roll(a, shift, axis):
    return np.roll(a, shift, axis)


register(OpDef(Op.ROLL, "shape", _bind_roll, _same_type, _roll, "np.roll",
               doc="elements shifted along an axis, those past the end coming back at the start"))


# --- diagonal (a read-only view) and diag (1-D to a matrix, or a matrix's diagonal)

def _diagonal_length(n1, n2, k: int):
    rows, cols = (n1, n2 - k) if k >= 0 else (n1 + k, n2)
    if type(rows) is int and type(cols) is int:
        return max(0, min(rows, cols))
    if rows == cols:
        return rows
    shorter = rows if decide(relation(">=", cols, rows), f"the length of a diagonal with offset {k}") else cols
    if type(shorter) is int:
        return max(shorter, 0)
    return shorter if decide(relation(">=", shorter, 0), "the length of a diagonal") else 0


def diagonal_axes(op: Op, a, axis1, axis2) -> tuple[int, int]:
    """The two distinct axes a diagonal of ``a`` runs over (``diagonal``, ``trace``), normalized, as NumPy checks
    them."""
    nd = ndim_of(a)
    if nd < 2:
        raise OpError(f"{op.value}: diag requires an array of at least two dimensions")
    a1, a2 = normalize_axis(op, axis1, nd), normalize_axis(op, axis2, nd)
    if a1 == a2:
        raise OpError(f"{op.value}: axis1 and axis2 cannot be the same")
    return a1, a2


def _bind_diagonal(a, offset=0, axis1=0, axis2=1):
    a1, a2 = diagonal_axes(Op.DIAGONAL, a, axis1, axis2)
    return [a], {"offset": static_int(Op.DIAGONAL, "offset", offset, symbolic=False), "axis1": a1, "axis2": a2}


def _diagonal(a, offset, axis1, axis2):
    return np.diagonal(a, offset, axis1, axis2)


def _infer_diagonal(types, attrs):
    (t,) = types
    a1, a2 = attrs["axis1"], attrs["axis2"]
    if max(a1, a2) >= t.ndim or a1 == a2:
        raise OpError(f"diagonal: axes {a1}, {a2} do not fit {t}")
    rest = tuple(d for i, d in enumerate(t.shape) if i not in (a1, a2))
    return (TensorType(t.dtype, rest + (_diagonal_length(t.shape[a1], t.shape[a2], attrs["offset"]),)),)


register(OpDef(Op.DIAGONAL, "shape", _bind_diagonal, _infer_diagonal, _diagonal, "np.diagonal", view=True,
               doc="the diagonal of two axes, as the last axis (a read-only view)"))


def _bind_diag(v, k=0):
    if ndim_of(v) not in (1, 2):
        raise OpError("diag: input must be 1- or 2-d")
    return [v], {"k": static_int(Op.DIAG, "k", k, symbolic=False)}


def _diag(v, k):
    return np.diag(v, k)


def _infer_diag(types, attrs):
    (t,), k = types, attrs["k"]
    if t.ndim == 1:
        n = t.shape[0] + abs(k)
        return (TensorType(t.dtype, (n, n)),)
    if t.ndim != 2:
        raise OpError("diag: input must be 1- or 2-d")
    return (TensorType(t.dtype, (_diagonal_length(t.shape[0], t.shape[1], k),)),)


register(OpDef(Op.DIAG, "shape", _bind_diag, _infer_diag, _diag, "np.diag", view=True,
               doc="a vector on the k-th diagonal of a square matrix, or a matrix's k-th diagonal"))


# --- take and take_along_axis: the indices are an operand (an array, a list or an integer tensor)

def _bind_take(a, indices, axis=None, mode="raise"):
    if mode != "raise":
        raise OpError(f"take: only mode='raise' is supported in a graph, got {mode!r}")
    if isinstance(indices, (list, tuple, range)):
        indices = np.asarray(list(indices), dtype=np.intp) if len(indices) == 0 else np.asarray(list(indices))
    return [a, indices], {"axis": None if axis is None else normalize_axis(Op.TAKE, axis, ndim_of(a))}


def _take(a, indices, axis):
    return np.take(a, indices, axis)


def _check_integer(op: Op, t: TensorType):
    if t.dtype.kind not in "iu":
        raise OpError(f"{op}: indices must be integers, got {t}")


def _infer_take(types, attrs):
    a, ind = types
    _check_integer(Op.TAKE, ind)
    axis = attrs["axis"]
    if axis is None:
        return (TensorType(a.dtype, ind.shape),)
    if axis >= a.ndim:
        raise OpError(f"take: axis {axis} is out of bounds for {a}")
    return (TensorType(a.dtype, a.shape[:axis] + ind.shape + a.shape[axis + 1:]),)


register(OpDef(Op.TAKE, "shape", _bind_take, _infer_take, _take, "np.take",
               doc="elements at the given indices along an axis (of the flattened array when axis is None)"))


def _bind_take_along_axis(arr, indices, axis=-1):
    if not hasattr(indices, "dtype"):
        indices = np.asarray(indices)
    axis = None if axis is None else normalize_axis(Op.TAKE_ALONG_AXIS, axis, ndim_of(arr))
    return [arr, indices], {"axis": axis}


def _take_along_axis(arr, indices, axis):
    return np.take_along_axis(arr, indices, axis)


def _infer_take_along_axis(types, attrs):
    a, ind = types
    _check_integer(Op.TAKE_ALONG_AXIS, ind)
    axis = attrs["axis"]
    if axis is None:
        if ind.ndim != 1:
            raise OpError("take_along_axis: when axis=None, `indices` must have a single dimension")
        return (TensorType(a.dtype, ind.shape),)
    if ind.ndim != a.ndim:
        raise OpError(f"take_along_axis: `indices` and `arr` must have the same number of dimensions ({ind} and "
                      f"{a})")
    others = [(x, y) for i, (x, y) in enumerate(zip(a.shape, ind.shape)) if i != axis]
    try:
        sizes = broadcast(Op.TAKE_ALONG_AXIS, tuple(x for x, _ in others), tuple(y for _, y in others))
    except ValueError:
        raise OpError(f"take_along_axis: shape mismatch: {a} and indices {ind} do not broadcast") from None
    shape = list(sizes)
    shape.insert(axis, ind.shape[axis])
    return (TensorType(a.dtype, tuple(shape)),)


register(OpDef(Op.TAKE_ALONG_AXIS, "shape", _bind_take_along_axis, _infer_take_along_axis, _take_along_axis,
               "np.take_along_axis", doc="elements picked along an axis by an index array of the same rank"))
