"""Shape and data-movement ops. Attributes hold sizes known at capture: a reshape to (-1, 4) is stored resolved.

A size may be symbolic (``reshape shape=(T, 2, d//2)``): it is bound from the inputs when the graph runs. The
rules then require what they would check on numbers (the same element count, equal sizes to concatenate), and
a fact they cannot prove becomes a shape guard (``ir/shape_env.py``).
"""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..ir.relations import relation
from ..ir.shape_env import current, require
from ..ir.symbolic import Expr, floordiv, mod, unwrap
from ..ir.types import TensorType
from .base import (Op, OpDef, broadcast, ndim_of, normalize_axes, normalize_axis, probe_dtype, register, same_size,
                   shape_of, static_int, static_shape)


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _same_dtype(types, shape) -> tuple[TensorType, ...]:
    return (TensorType(types[0].dtype, tuple(shape)),)


def _shape_op(op: Op, bind, shape_rule, impl, numpy_name: str, doc: str, *, view: bool = False):
    def infer(types, attrs):
        return _same_dtype(types, shape_rule(types[0].shape, attrs))
    register(OpDef(op, "shape", bind, infer, impl, numpy_name, view=view, doc=doc))


def _varargs_shape(args) -> tuple:
    """``reshape(2, 3)`` and ``reshape((2, 3))`` both mean (2, 3)."""
    if len(args) == 1 and not isinstance(unwrap(args[0]), (int, np.integer, Expr)):
        return tuple(args[0])
    return tuple(args)


# --- reshape

def _is_minus_one(d) -> bool:
    return type(d) is int and d == -1


def resolve_reshape(op: str, old: tuple, new) -> tuple:
    new = list(static_shape(op, new))
    unknown = [i for i, d in enumerate(new) if _is_minus_one(d)]
    if len(unknown) > 1 or any(type(d) is int and d < -1 for d in new):
        raise OpError(f"{op}: at most one size may be -1 and none may be below it, got {_text(new)}")
    known = _size(d for d in new if not _is_minus_one(d))
    total = _size(old)
    if unknown:
        if known == 0 or (type(total) is int and type(known) is int and total % known):
            raise OpError(f"{op}: cannot reshape {_text(old)} ({total} elements) into {_text(new)}")
        new[unknown[0]] = floordiv(total, known)  # exact: _check_reshape requires known * (total // known) == total
    return _check_reshape(old, tuple(new))


def _text(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _bind_reshape(x, *shape, order="C"):
    if order != "C":
        raise OpError(f"reshape: only order='C' is supported, got {order!r}")
    return [x], {"shape": resolve_reshape("reshape", shape_of(x), _varargs_shape(shape))}


_shape_op(Op.RESHAPE, _bind_reshape, lambda s, a: _check_reshape(s, a["shape"]),
          lambda x, shape: np.reshape(x, shape), "np.reshape", "same elements, new shape", view=True)


def _check_reshape(old, new):
    same_size("reshape", _size(old), _size(new),
              f"reshape: cannot reshape {_text(old)} ({_size(old)} elements) into {_text(new)} ({_size(new)} "
              f"elements); the new shape must hold the same number of elements (one size may be -1 to infer it)")
    return new


# --- transpose

def _bind_transpose(x, *axes):
    nd = ndim_of(x)
    axes = _varargs_shape(axes) if axes and axes != (None,) else tuple(reversed(range(nd)))
    perm = tuple(normalize_axis("transpose", a, nd) for a in axes)
    if sorted(perm) != list(range(nd)):
        raise OpError(f"transpose: axes {axes} are not a permutation of the {nd} dimensions")
    return [x], {"perm": perm}


def _transpose_shape(shape, attrs):
    perm = attrs["perm"]
    if sorted(perm) != list(range(len(shape))):
        raise OpError(f"transpose: perm {perm} is not a permutation of the {len(shape)} dimensions")
    return tuple(shape[p] for p in perm)


_shape_op(Op.TRANSPOSE, _bind_transpose, _transpose_shape, lambda x, perm: np.transpose(x, perm),
          "np.transpose", "dimensions permuted", view=True)


# --- broadcast_to

def _bind_broadcast_to(x, shape):
    return [x], {"shape": static_shape("broadcast_to", shape)}


def _broadcast_to_shape(shape, attrs):
    target = attrs["shape"]
    try:
        if len(shape) <= len(target) and broadcast("broadcast_to", shape, target) == target:
            return target
    except ValueError:
        pass
    raise OpError(f"broadcast_to: cannot broadcast {_text(shape)} to {_text(target)}")


_shape_op(Op.BROADCAST_TO, _bind_broadcast_to, _broadcast_to_shape,
          lambda x, shape: np.broadcast_to(x, shape), "np.broadcast_to", "read-only broadcast view", view=True)


# --- expand_dims / squeeze

def _bind_expand_dims(x, axis):
    out_ndim = ndim_of(x) + (1 if isinstance(axis, (int, np.integer)) else len(axis))
    return [x], {"axis": normalize_axes("expand_dims", axis, out_ndim)}


def _expand_dims_shape(shape, attrs):
    axes = attrs["axis"]
    out, it = [], iter(shape)
    for i in range(len(shape) + len(axes)):
        out.append(1 if i in axes else next(it))
    return tuple(out)


_shape_op(Op.EXPAND_DIMS, _bind_expand_dims, _expand_dims_shape,
          lambda x, axis: np.expand_dims(x, axis), "np.expand_dims", "size-1 dimensions inserted", view=True)


def _bind_squeeze(x, axis=None):
    shape = shape_of(x)
    axes = normalize_axes("squeeze", axis, len(shape))
    if axes is None:
        axes = tuple(i for i, d in enumerate(shape) if d == 1)
    return [x], {"axis": axes}


def _squeeze_shape(shape, attrs):
    for a in attrs["axis"]:
        if a >= len(shape) or shape[a] != 1:
            raise OpError(f"squeeze: cannot select an axis to squeeze out which has size not equal to one "
                          f"(axis {a} of shape {shape})")
    return tuple(d for i, d in enumerate(shape) if i not in attrs["axis"])


_shape_op(Op.SQUEEZE, _bind_squeeze, _squeeze_shape, lambda x, axis: np.squeeze(x, axis),
          "np.squeeze", "size-1 dimensions removed", view=True)


# --- concatenate / stack

def _bind_concatenate(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise OpError("concatenate: need at least one array to concatenate")
    if axis is not None:
        axis = normalize_axis("concatenate", axis, ndim_of(arrays[0]))
    return arrays, {"axis": axis}


def _infer_concatenate(types, attrs):
    axis = attrs["axis"]
    dtype = probe_dtype(lambda *xs: np.concatenate(xs, axis=None), types, ())
    if axis is None:
        return (TensorType(dtype, (sum(t.size for t in types),)),)
    first = types[0].shape
    message = f"concatenate: all sizes except along axis {axis} must match: {', '.join(str(t) for t in types)}"
    for t in types[1:]:
        if len(t.shape) != len(first):
            raise OpError(message)
        for i, (a, b) in enumerate(zip(first, t.shape)):
            if i != axis:
                same_size("concatenate", a, b, message)
    shape = list(first)
    shape[axis] = sum(t.shape[axis] for t in types)
    return (TensorType(dtype, tuple(shape)),)


def _concatenate(*arrays, axis):
    return np.concatenate(arrays, axis=axis)


register(OpDef(Op.CONCATENATE, "shape", _bind_concatenate, _infer_concatenate, _concatenate, "np.concatenate",
               doc="arrays joined along an existing axis"))


def _bind_stack(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise OpError("stack: need at least one array to stack")
    return arrays, {"axis": normalize_axis("stack", axis, ndim_of(arrays[0]) + 1)}


def _infer_stack(types, attrs):
    first = types[0].shape
    message = f"stack: all input arrays must have the same shape: {', '.join(str(t) for t in types)}"
    for t in types[1:]:
        if len(t.shape) != len(first):
            raise OpError(message)
        for a, b in zip(first, t.shape):
            same_size("stack", a, b, message)
    dtype = probe_dtype(lambda *xs: np.concatenate(xs, axis=None), types, ())
    shape = list(first)
    shape.insert(attrs["axis"], len(types))
    return (TensorType(dtype, tuple(shape)),)


def _stack(*arrays, axis):
    return np.stack(arrays, axis=axis)


register(OpDef(Op.STACK, "shape", _bind_stack, _infer_stack, _stack, "np.stack",
               doc="arrays joined along a new axis"))


# --- split (np.split and np.array_split both become split points)

def split_points(op: str, length, sections, equal: bool) -> tuple:
    if isinstance(unwrap(sections), (int, np.integer, Expr)):
        n = static_int(op, "the number of sections", sections, symbolic=False)
        if n <= 0:
            raise OpError(f"{op}: number of sections must be larger than 0")
        if type(length) is not int:
            divides = relation("==", mod(length, n), 0)
            why = f"{op} of the symbolic size {length} into {n} sections"
            if equal:
                require(divides, why)
            elif not current().decide(divides, why):  # unequal sections: their sizes depend on length % n
                length = current().specialize(length, why)
        if type(length) is not int:
            return tuple(floordiv(length, n) * k for k in range(1, n))
        if equal and length % n:
            raise OpError(f"{op}: array split does not result in an equal division ({length} into {n}); "
                          f"use np.array_split for unequal parts")
        base, extra = divmod(length, n)
        sizes = [base + 1] * extra + [base] * (n - extra)
        points, acc = [], 0
        for s in sizes[:-1]:
            acc += s
            points.append(acc)
        return tuple(points)
    return tuple(static_int(op, "each split index", i) for i in sections)


def _bind_split(x, indices_or_sections, axis=0, *, equal=True):
    shape = shape_of(x)
    axis = normalize_axis("split", axis, len(shape))
    return [x], {"indices": split_points("split", shape[axis], indices_or_sections, equal), "axis": axis}


def _infer_split(types, attrs):
    shape, axis = types[0].shape, attrs["axis"]
    n = shape[axis]
    bounds = [0] + [min(max(i if i >= 0 else i + n, 0), n) for i in attrs["indices"]] + [n]
    outs = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        s = list(shape)
        s[axis] = max(hi - lo, 0)
        outs.append(TensorType(types[0].dtype, tuple(s)))
    return tuple(outs)


def _split(x, indices, axis):
    return tuple(np.split(x, list(indices), axis=axis))


register(OpDef(Op.SPLIT, "shape", _bind_split, _infer_split, _split, "np.split", multi_output=True,
               doc="pieces between split points along an axis"))


# --- repeat / tile / pad / triu / tril

def _bind_repeat(x, repeats, axis=None):
    shape = shape_of(x)
    reps = static_int("repeat", "repeats", repeats) if isinstance(repeats, (int, np.integer)) else \
        tuple(static_int("repeat", "each repeat count", r) for r in repeats)
    ax = None if axis is None else normalize_axis("repeat", axis, len(shape))
    return [x], {"repeats": reps, "axis": ax}


def _repeat_shape(shape, attrs):
    reps, axis = attrs["repeats"], attrs["axis"]
    n = _size(shape) if axis is None else shape[axis]
    if isinstance(reps, tuple):
        if len(reps) != 1 and type(n) is not int:
            same_size("repeat", n, len(reps), f"repeat: {len(reps)} repeat counts for an axis of size {n}")
            n = len(reps)
        if len(reps) not in (1, n):
            raise OpError(f"repeat: {len(reps)} repeat counts for an axis of size {n}")
        if any(r < 0 for r in reps):
            raise OpError("repeat: negative dimensions are not allowed")
        total = reps[0] * n if len(reps) == 1 else sum(reps)
    else:
        if reps < 0:
            raise OpError("repeat: negative dimensions are not allowed")
        total = reps * n
    if axis is None:
        return (total,)
    out = list(shape)
    out[axis] = total
    return tuple(out)


_shape_op(Op.REPEAT, _bind_repeat, _repeat_shape, lambda x, repeats, axis: np.repeat(x, repeats, axis),
          "np.repeat", "each element repeated")


def _bind_tile(x, reps):
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    return [x], {"reps": tuple(static_int("tile", "each repetition", r) for r in reps)}


def _tile_shape(shape, attrs):
    reps = attrs["reps"]
    n = max(len(shape), len(reps))
    shape = (1,) * (n - len(shape)) + tuple(shape)
    reps = (1,) * (n - len(reps)) + reps
    return tuple(s * r for s, r in zip(shape, reps))


_shape_op(Op.TILE, _bind_tile, _tile_shape, lambda x, reps: np.tile(x, reps), "np.tile", "whole array repeated")


def _bind_pad(x, pad_width, mode="constant", constant_values=0):
    if mode != "constant":
        raise OpError(f"pad: only mode='constant' is supported, got {mode!r}")
    nd = ndim_of(x)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=object), (nd, 2)) if nd else np.zeros((0, 2), object)
    pads = tuple((static_int("pad", "pad width", b), static_int("pad", "pad width", a)) for b, a in widths)
    if any(b < 0 or a < 0 for b, a in pads):
        raise OpError("pad: index can't contain negative values")
    if not isinstance(constant_values, (int, float, bool, np.number)):
        raise OpError("pad: constant_values must be one Python or NumPy number")
    return [x], {"pad_width": pads, "value": constant_values}


def _pad(x, pad_width, value):
    # A 0-d array has no borders: its pad_width is (), which np.pad rejects, so give it the width 0.
    return np.pad(x, pad_width or 0, mode="constant", constant_values=value)


_shape_op(Op.PAD, _bind_pad, lambda s, a: tuple(d + b + e for d, (b, e) in zip(s, a["pad_width"])), _pad,
          "np.pad", "borders of a constant added")


def _tri_op(op: Op, fn, numpy_name: str, doc: str):
    def bind(x, k=0):
        if ndim_of(x) < 2:
            raise OpError(f"{op}: input must have at least 2 dimensions")
        return [x], {"k": static_int(op, "k", k)}
    _shape_op(op, bind, lambda s, a: s, lambda x, k: fn(x, k), numpy_name, doc)


_tri_op(Op.TRIU, np.triu, "np.triu", "upper triangle (k-th diagonal and above), zeros elsewhere")
_tri_op(Op.TRIL, np.tril, "np.tril", "lower triangle (k-th diagonal and below), zeros elsewhere")
