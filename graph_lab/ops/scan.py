"""Ops along one axis that keep it: running sums and products (``cumsum``, ``ufunc.accumulate``), sorting, and
differences; and ``ufunc.reduce`` for the binary ufuncs that have no reduction op of their own.

``axis=None`` flattens first, as NumPy does (the result is 1-D). Each is NumPy's own function, so a graph computes
what eager code computes, bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..ir.relations import relation
from ..ir.shape_env import decide
from ..ir.types import TensorType
from .base import Op, OpDef, ndim_of, normalize_axis, probe_dtype, register, static_int
from .elementwise import ufunc_of


def _flat_size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _axis_attr(op: Op, x, axis):
    return None if axis is None else normalize_axis(op, axis, ndim_of(x))


def _along_infer(op: Op, impl, length=lambda n, attrs: n):
    """Same shape (1-D when ``axis`` is None), the axis's length changed by ``length``; NumPy's dtype."""
    def infer(types, attrs):
        (t,) = types
        axis = attrs["axis"]
        if axis is None:
            shape = (length(_flat_size(t.shape), attrs),)
        else:
            if not 0 <= axis < t.ndim:
                raise OpError(f"{op}: axis {axis} is out of bounds for {t}")
            shape = t.shape[:axis] + (length(t.shape[axis], attrs),) + t.shape[axis + 1:]
        key = tuple(sorted((k, v) for k, v in attrs.items() if k != "axis"))
        probe_attrs = {k: v for k, v in attrs.items() if k != "axis"}
        try:
            dtype = probe_dtype(impl, types, key, axis=None, **probe_attrs)
        except TypeError as e:
            raise OpError(f"{op}: NumPy does not take {t}: {e}") from None
        return (TensorType(dtype, shape),)
    return infer


def _scan(op: Op, fn, numpy_name: str, doc: str):
    def bind(x, axis=None):
        return [x], {"axis": _axis_attr(op, x, axis)}

    def impl(x, axis):
        return fn(x, axis=axis)

    register(OpDef(op, "reduce", bind, _along_infer(op, impl), impl, numpy_name, doc=doc))


_scan(Op.CUMSUM, np.cumsum, "np.cumsum", "running sum along an axis (flattened when axis is None)")
_scan(Op.CUMPROD, np.cumprod, "np.cumprod", "running product along an axis (flattened when axis is None)")


# --- ufunc.accumulate and ufunc.reduce of a binary op of the table (np.maximum.accumulate, np.subtract.reduce)

def _bind_accumulate(x, ufunc, axis=0):
    if axis is None:
        raise OpError(f"{ufunc}.accumulate: axis=None is not allowed (NumPy needs one axis)")
    return [x], {"ufunc": Op(ufunc).value, "axis": normalize_axis("accumulate", axis, ndim_of(x))}


def _accumulate(x, ufunc, axis):
    return ufunc_of("accumulate", ufunc).accumulate(x, axis=axis)


def _accumulate_flat(x, ufunc, axis):
    return _accumulate(x.reshape(-1), ufunc, 0)


register(OpDef(Op.ACCUMULATE, "reduce", _bind_accumulate, _along_infer(Op.ACCUMULATE, _accumulate_flat), _accumulate,
               None,
               doc="ufunc.accumulate of a binary op along an axis (np.maximum.accumulate...)"))


def _bind_ufunc_reduce(x, ufunc, axis=0, keepdims=False):
    nd = ndim_of(x)
    axes = None if axis is None else tuple(sorted(normalize_axis("ufunc_reduce", a, nd) for a in
                                                  ((axis,) if isinstance(axis, (int, np.integer)) else axis)))
    return [x], {"ufunc": Op(ufunc).value, "axis": axes, "keepdims": bool(keepdims)}


def _ufunc_reduce(x, ufunc, axis, keepdims):
    return ufunc_of("ufunc_reduce", ufunc).reduce(x, axis=axis, keepdims=keepdims)


def _reduce_flat(x, ufunc):
    return _ufunc_reduce(x.reshape(-1), ufunc, 0, False)


def _infer_ufunc_reduce(types, attrs):
    (t,) = types
    axes = tuple(range(t.ndim)) if attrs["axis"] is None else attrs["axis"]
    if any(not 0 <= a < t.ndim for a in axes):
        raise OpError(f"ufunc_reduce: axis {attrs['axis']} is out of bounds for {t}")
    fn = ufunc_of("ufunc_reduce", attrs["ufunc"])
    if fn.identity is None and any(t.shape[a] == 0 for a in axes):
        raise OpError(f"{attrs['ufunc']}.reduce: zero-size axis of {t} and the ufunc has no identity")
    if attrs["keepdims"]:
        shape = tuple(1 if i in axes else d for i, d in enumerate(t.shape))
    else:
        shape = tuple(d for i, d in enumerate(t.shape) if i not in axes)
    try:
        dtype = probe_dtype(_reduce_flat, types, (attrs["ufunc"],), ufunc=attrs["ufunc"])
    except TypeError as e:
        raise OpError(f"{attrs['ufunc']}.reduce: NumPy does not take {t}: {e}") from None
    return (TensorType(dtype, shape),)


register(OpDef(Op.UFUNC_REDUCE, "reduce", _bind_ufunc_reduce, _infer_ufunc_reduce, _ufunc_reduce, None,
               doc="ufunc.reduce of a binary op without a reduction of its own (np.subtract.reduce...)"))


# --- sort and argsort: NumPy's sort; kind="stable" gives the same order for ties on every machine

_KINDS = (None, "quicksort", "stable", "mergesort", "heapsort")


def _sort_op(op: Op, fn, numpy_name: str, doc: str):
    def bind(x, axis=-1, kind=None, order=None):
        if order is not None:
            raise OpError(f"{op}: order= (fields of a structured array) is not supported")
        if kind not in _KINDS:
            raise OpError(f"{op}: kind must be one of {_KINDS[1:]}, got {kind!r}")
        return [x], {"axis": _axis_attr(op, x, axis), "kind": kind}

    def impl(x, axis, kind):
        return fn(x, axis=axis, kind=kind)

    register(OpDef(op, "reduce", bind, _along_infer(op, impl), impl, numpy_name, doc=doc))


_sort_op(Op.SORT, np.sort, "np.sort", "a sorted copy along an axis (NaN last)")
_sort_op(Op.ARGSORT, np.argsort, "np.argsort", "the indices that sort along an axis")


# --- diff: n-th differences, the axis n shorter

def _bind_diff(x, n=1, axis=-1, prepend=None, append=None):
    if prepend is not None or append is not None:
        raise OpError("diff: prepend= and append= are not supported in a graph; concatenate first")
    n = static_int(Op.DIFF, "n", n, symbolic=False)
    if n < 0:
        raise OpError(f"diff: order must be non-negative but got {n}")
    if ndim_of(x) == 0:
        raise OpError("diff: requires input that is at least one dimensional")
    return [x], {"n": n, "axis": normalize_axis(Op.DIFF, axis, ndim_of(x))}


def _diff(x, n, axis):
    return np.diff(x, n=n, axis=axis)


def _diff_length(size, attrs):
    n = attrs["n"]
    if type(size) is int:
        return max(size - n, 0)
    return size - n if decide(relation(">=", size, n), f"diff of order {n} along an axis of size {size}") else 0


def _same_dtype(x, axis, n):
    return x


register(OpDef(Op.DIFF, "reduce", _bind_diff, _along_infer(Op.DIFF, _same_dtype, _diff_length), _diff, "np.diff",
               doc="n-th discrete difference along an axis"))
