"""Reductions over an axis (None, an int, a negative int, or a tuple), with ``keepdims``."""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..ir.types import TensorType
from ..ir.relations import relation
from ..ir.shape_env import require
from .base import Op, OpDef, ndim_of, normalize_axes, normalize_axis, probe_dtype, register


def _reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...] | None, keepdims: bool) -> tuple[int, ...]:
    if axes is None:
        axes = tuple(range(len(shape)))
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _keepdims(op: Op, keepdims) -> bool:
    # Strict, because NumPy's third positional argument is often dtype (np.sum(x, 0, np.float32)), which must
    # not be read as keepdims=True.
    if keepdims is not True and keepdims is not False and not isinstance(keepdims, np.bool_):
        raise OpError(f"{op}: keepdims must be True or False, got {keepdims!r}; NumPy's dtype= and out= are not "
                      f"supported in a graph (cast with .astype instead)")
    return bool(keepdims)


def _reduce_infer(op: Op, fn, needs_identity: bool):
    def infer(types, attrs):
        (t,) = types
        axes = attrs["axis"]
        if isinstance(axes, int):
            axes = (axes,)
        if needs_identity:
            reduced = t.shape if axes is None else tuple(t.shape[a] for a in axes)
            _require_nonempty(op, reduced)
            if 0 in reduced:
                raise OpError(f"{op}: cannot reduce a zero-size axis of {t} (no identity for {op}; NumPy raises "
                              f"the same). Reduce over a non-empty axis, or use a reduction with an identity "
                              f"such as sum")
        dtype = probe_dtype(fn, types, tuple(sorted(attrs.items())), **attrs)
        return (TensorType(dtype, _reduced_shape(t.shape, axes, attrs["keepdims"])),)
    return infer


def _require_nonempty(op: Op, sizes) -> None:
    """A reduction without an identity needs each symbolic size it reduces to be at least 1."""
    for d in sizes:
        if type(d) is not int:
            require(relation(">=", d, 1), f"{op} has no identity, so it cannot reduce an empty axis")


def _reduction(op: Op, fn, numpy_name: str, doc: str, *, needs_identity: bool = False, ddof: bool = False):
    def bind(x, axis=None, keepdims=False, **extra):
        attrs = {"axis": normalize_axes(op, axis, ndim_of(x)), "keepdims": _keepdims(op, keepdims)}
        if ddof:
            attrs["ddof"] = extra.pop("ddof", 0)
        if extra:
            raise TypeError(f"{op}() got unexpected keyword arguments {sorted(extra)}")
        return [x], attrs

    def impl(x, axis, keepdims, **kw):
        return fn(x, axis=axis, keepdims=keepdims, **kw)

    register(OpDef(op, "reduce", bind, _reduce_infer(op, impl, needs_identity), impl, numpy_name, doc=doc))


_reduction(Op.SUM, np.sum, "np.sum", "sum over axes")
_reduction(Op.MEAN, np.mean, "np.mean", "mean over axes")
_reduction(Op.MAX, np.max, "np.max", "maximum over axes", needs_identity=True)
_reduction(Op.MIN, np.min, "np.min", "minimum over axes", needs_identity=True)
_reduction(Op.PROD, np.prod, "np.prod", "product over axes")
_reduction(Op.VAR, np.var, "np.var", "variance over axes (ddof attribute)", ddof=True)
_reduction(Op.STD, np.std, "np.std", "standard deviation over axes (ddof attribute)", ddof=True)
_reduction(Op.ANY, np.any, "np.any", "logical or over axes")
_reduction(Op.ALL, np.all, "np.all", "logical and over axes")


def _arg_reduction(op: Op, fn, numpy_name: str, doc: str):
    def bind(x, axis=None, keepdims=False):
        ax = None if axis is None else normalize_axis(op, axis, ndim_of(x))
        return [x], {"axis": ax, "keepdims": _keepdims(op, keepdims)}

    def impl(x, axis, keepdims):
        return fn(x, axis=axis, keepdims=keepdims)

    def infer(types, attrs):
        (t,) = types
        axis = attrs["axis"]
        _require_nonempty(op, t.shape if axis is None else (t.shape[axis],))
        if (t.size == 0 if axis is None else t.shape[axis] == 0):
            raise OpError(f"{op}: attempt to get {op} of an empty sequence ({t}); NumPy raises the same")
        if axis is None:
            shape = (1,) * t.ndim if attrs["keepdims"] else ()
        else:
            shape = _reduced_shape(t.shape, (axis,), attrs["keepdims"])
        return (TensorType(np.dtype(np.intp), shape),)

    register(OpDef(op, "reduce", bind, infer, impl, numpy_name, doc=doc))


_arg_reduction(Op.ARGMAX, np.argmax, "np.argmax", "index of the maximum (first one on ties)")
_arg_reduction(Op.ARGMIN, np.argmin, "np.argmin", "index of the minimum (first one on ties)")

