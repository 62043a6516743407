"""Neural-network composites: each one op in the graph, computed by a short fixed sequence of NumPy calls.

Eager ``F.softmax(array)`` runs the same function, so a graph and eager code agree bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..ir.types import TensorType
from .base import Op, OpDef, broadcast_shapes, ndim_of, normalize_axis, probe_dtype, register
from .linalg import matmul_shape


def softmax(x, axis):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _softmax_like(op: Op, fn, doc: str):
    def bind(x, axis=-1):
        return [x], {"axis": normalize_axis(op, axis, ndim_of(x))}

    def infer(types, attrs):
        (t,) = types
        if t.size == 0 and t.shape[attrs["axis"]] == 0:
            raise OpError(f"{op}: cannot take {op} over an empty axis of {t}")
        return (TensorType(probe_dtype(fn, types, (attrs["axis"],), axis=attrs["axis"]), t.shape),)

    register(OpDef(op, "nn", bind, infer, fn, None, doc=doc))


_softmax_like(Op.SOFTMAX, softmax, "exp(x - max) / sum(exp(x - max)) along an axis")
_softmax_like(Op.LOG_SOFTMAX, log_softmax, "x - max - log(sum(exp(x - max))) along an axis")


def layer_norm(x, *affine, eps, has_weight, has_bias):
    """Normalize over the last axis: (x - mean) / sqrt(var + eps), then * weight + bias if given."""
    mean = np.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    y = centered / np.sqrt(var + eps)
    it = iter(affine)
    if has_weight:
        y = y * next(it)
    if has_bias:
        y = y + next(it)
    return y


def _bind_layer_norm(x, weight=None, bias=None, eps=1e-5):
    if ndim_of(x) == 0:
        raise OpError("layer_norm: the input needs at least one dimension (it normalizes the last one)")
    operands = [x] + [a for a in (weight, bias) if a is not None]
    return operands, {"eps": float(eps), "has_weight": weight is not None, "has_bias": bias is not None}


def _infer_layer_norm(types, attrs):
    shape = broadcast_shapes(Op.LAYER_NORM, types)
    if shape != types[0].shape:
        raise OpError(f"layer_norm: weight and bias must broadcast to the input's shape {types[0].shape}, "
                      f"got {', '.join(str(t) for t in types[1:])}")
    dtype = probe_dtype(layer_norm, types, tuple(sorted(attrs.items())), **attrs)
    return (TensorType(dtype, shape),)


register(OpDef(Op.LAYER_NORM, "nn", _bind_layer_norm, _infer_layer_norm, layer_norm, None,
               doc="layer normalization over the last axis, optional weight and bias"))


def linear(x, w, *bias, has_bias):
    """PyTorch's convention: ``x @ w.T + b`` with ``w`` of shape [out_features, in_features]."""
    y = np.matmul(x, np.transpose(w))
    return y + bias[0] if has_bias else y


def _bind_linear(x, weight, bias=None):
    return [x, weight] + ([bias] if bias is not None else []), {"has_bias": bias is not None}


def _infer_linear(types, attrs):
    x, w = types[0], types[1]
    if w.ndim != 2:
        raise OpError(f"linear: weight must be 2-D [out_features, in_features], got {w}")
    shape = matmul_shape(x.shape, (w.shape[1], w.shape[0]))
    if attrs["has_bias"]:
        shape = broadcast_shapes(Op.LINEAR, (TensorType(x.dtype, shape), types[2]))
    return (TensorType(probe_dtype(linear, types, (attrs["has_bias"],), **attrs), shape),)


register(OpDef(Op.LINEAR, "nn", _bind_linear, _infer_linear, linear, None,
               doc="x @ weight.T + bias (PyTorch's nn.Linear convention)"))
