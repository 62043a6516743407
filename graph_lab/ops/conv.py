"""Convolution, pooling and inference-mode batch normalization, in PyTorch's NCHW conventions.

Each is one op in the graph, computed by a short fixed sequence of NumPy calls (so eager ``F.conv2d(array, ...)``
and a graph agree bit for bit). A convolution is "im2col + matrix multiply": ``sliding_window_view`` exposes every
window of the (padded) input without copying, and ``tensordot`` multiplies the windows by the weights with BLAS.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..errors import OpError
from ..ir.types import TensorType
from ..ir.relations import relation
from ..ir.shape_env import require
from .base import Op, OpDef, ndim_of, probe_dtype, register, same_shape, same_size, static_int


def _pair(op: str, what: str, v) -> tuple[int, int]:
    """``3`` or ``(3, 3)``: a size for the two spatial dimensions."""
    if isinstance(v, (int, np.integer)):
        v = (v, v)
    try:
        a, b = v
    except (TypeError, ValueError):
        raise OpError(f"{op}: {what} must be an int or a pair of ints, got {v!r}") from None
    return static_int(op, what, a), static_int(op, what, b)


def _out_size(op: str, size, kernel: int, stride: int, pad: int, dilation: int):
    """Output length of a sliding window; ``size`` may be symbolic (then the fit is required, or guarded)."""
    span = dilation * (kernel - 1) + 1
    why = (f"{op}: the window ({kernel} with dilation {dilation}) is larger than the padded input "
           f"({size} + 2 * {pad})")
    if type(size) is int:
        if size + 2 * pad < span:
            raise OpError(why)
    else:
        require(relation(">=", size + 2 * pad, span), why)
    return (size + 2 * pad - span) // stride + 1


def _windows(x, kernel, stride, dilation):
    """Every window of the last two axes: [..., out_h, out_w, k_h, k_w], a strided view of ``x``."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    view = sliding_window_view(x, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(-2, -1))
    return view[..., ::sh, ::sw, ::dh, ::dw]


def _pad_spatial(x, padding, value):
    ph, pw = padding
    if ph == 0 and pw == 0:
        return x
    widths = [(0, 0)] * (x.ndim - 2) + [(ph, ph), (pw, pw)]
    return np.pad(x, widths, mode="constant", constant_values=value)


def _check_positive(op: str, **sizes) -> None:
    for what, pair in sizes.items():
        if min(pair) < 1:
            raise OpError(f"{op}: {what} must be at least 1, got {pair}")


# --- conv2d

def conv2d(x, weight, *bias, stride, padding, dilation, groups, has_bias):
    """[N, C, H, W] * [O, C/groups, kH, kW] -> [N, O, OH, OW], plus bias[O] if given."""
    windows = _windows(_pad_spatial(x, padding, 0), weight.shape[2:], stride, dilation)  # [N, C, OH, OW, kH, kW]
    in_per_group = weight.shape[1]
    out_per_group = weight.shape[0] // groups
    parts = []
    for g in range(groups):
        win = windows[:, g * in_per_group:(g + 1) * in_per_group]
        w = weight[g * out_per_group:(g + 1) * out_per_group]
        parts.append(np.tensordot(win, w, axes=((1, 4, 5), (1, 2, 3))))  # [N, OH, OW, O/groups]
    y = parts[0] if groups == 1 else np.concatenate(parts, axis=-1)
    y = np.ascontiguousarray(np.moveaxis(y, -1, 1))
    if has_bias:
        y = y + bias[0].reshape(-1, 1, 1)
    return y


def _bind_conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    attrs = {"stride": _pair("conv2d", "stride", stride), "padding": _pair("conv2d", "padding", padding),
             "dilation": _pair("conv2d", "dilation", dilation), "groups": static_int("conv2d", "groups", groups),
             "has_bias": bias is not None}
    return [x, weight] + ([bias] if bias is not None else []), attrs


def _infer_conv2d(types, attrs):
    x, w = types[0], types[1]
    if x.ndim != 4 or w.ndim != 4:
        raise OpError(f"conv2d: input must be [N, C, H, W] and weight [O, C/groups, kH, kW], got {x} and {w}")
    groups = attrs["groups"]
    _check_positive("conv2d", stride=attrs["stride"], dilation=attrs["dilation"], groups=(groups,))
    if min(attrs["padding"]) < 0:
        raise OpError(f"conv2d: padding must not be negative, got {attrs['padding']}")
    channels = (f"conv2d: with groups={groups}, the input's {x.shape[1]} channels must equal weight.shape[1] "
                f"* groups ({w.shape[1]} * {groups}) and the {w.shape[0]} output channels must divide by groups")
    same_size("conv2d", x.shape[1], w.shape[1] * groups, channels)
    if groups != 1:
        same_size("conv2d", w.shape[0] % groups, 0, channels)
    if attrs["has_bias"] and not same_shape(types[2].shape, (w.shape[0],)):
        if types[2].ndim != 1:
            raise OpError(f"conv2d: bias must have shape ({w.shape[0]},), got {types[2]}")
        same_size("conv2d", types[2].shape[0], w.shape[0], f"conv2d: bias must have shape ({w.shape[0]},), "
                                                            f"got {types[2]}")
    out_hw = tuple(_out_size("conv2d", x.shape[2 + i], w.shape[2 + i], attrs["stride"][i], attrs["padding"][i],
                             attrs["dilation"][i]) for i in range(2))
    one = dict(attrs, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1)  # valid on size-1 samples
    dtype = probe_dtype(conv2d, types, (attrs["has_bias"],), **one)
    return (TensorType(dtype, (x.shape[0], w.shape[0]) + out_hw),)


register(OpDef(Op.CONV2D, "nn", _bind_conv2d, _infer_conv2d, conv2d, None,
               doc="2-D convolution (cross-correlation) of [N, C, H, W] with [O, C/groups, kH, kW]"))


# --- pooling over the last two axes

def _pool_attrs(op: str, x, kernel_size, stride, padding) -> dict:
    if ndim_of(x) < 2:
        raise OpError(f"{op}: the input needs at least two dimensions (it pools the last two)")
    kernel = _pair(op, "kernel_size", kernel_size)
    return {"kernel": kernel, "stride": kernel if stride is None else _pair(op, "stride", stride),
            "padding": _pair(op, "padding", padding)}


def _pool_shape(op: str, t: TensorType, attrs) -> tuple[int, ...]:
    if t.ndim < 2:
        raise OpError(f"{op}: the input needs at least two dimensions (it pools the last two), got {t}")
    _check_positive(op, kernel_size=attrs["kernel"], stride=attrs["stride"])
    kernel, pad = attrs["kernel"], attrs["padding"]
    if min(pad) < 0 or pad[0] * 2 > kernel[0] or pad[1] * 2 > kernel[1]:
        raise OpError(f"{op}: padding {pad} must be between 0 and half the kernel size {kernel}")
    out = tuple(_out_size(op, t.shape[-2 + i], kernel[i], attrs["stride"][i], pad[i], 1) for i in range(2))
    return t.shape[:-2] + out


def _lowest(dtype: np.dtype):
    """The value max-pooling pads with: it never wins a maximum."""
    if dtype.kind == "f":
        return -np.inf
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    return False


def max_pool2d(x, kernel, stride, padding):
    windows = _windows(_pad_spatial(x, padding, _lowest(x.dtype)), kernel, stride, (1, 1))
    return np.max(windows, axis=(-2, -1))


def avg_pool2d(x, kernel, stride, padding):
    """The mean of each window; zero padding counts in the mean (PyTorch's count_include_pad=True)."""
    windows = _windows(_pad_spatial(x, padding, 0), kernel, stride, (1, 1))
    return np.mean(windows, axis=(-2, -1))


def _pool(op: Op, fn, doc: str):
    def bind(x, kernel_size, stride=None, padding=0):
        return [x], _pool_attrs(op, x, kernel_size, stride, padding)

    def infer(types, attrs):
        (t,) = types
        shape = _pool_shape(op, t, attrs)
        dtype = probe_dtype(fn, (TensorType(t.dtype, (1, 1)),), (), kernel=(1, 1), stride=(1, 1), padding=(0, 0))
        return (TensorType(dtype, shape),)

    register(OpDef(op, "nn", bind, infer, fn, None, doc=doc))


_pool(Op.MAX_POOL2D, max_pool2d, "maximum over each window of the last two axes (padding never wins)")
_pool(Op.AVG_POOL2D, avg_pool2d, "mean over each window of the last two axes (zero padding counted)")


# --- batch normalization with running statistics (inference mode)

def batch_norm(x, mean, var, *affine, eps, has_weight, has_bias):
    """(x - mean) / sqrt(var + eps) * weight + bias, the statistics per channel (axis 1)."""
    shape = (-1,) + (1,) * (x.ndim - 2)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    it = iter(affine)
    if has_weight:
        y = y * next(it).reshape(shape)
    if has_bias:
        y = y + next(it).reshape(shape)
    return y


def _bind_batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if training:
        raise OpError("batch_norm: only inference mode (training=False) is an op: in training mode the statistics "
                      "come from the batch; write them out (x.mean(axis=(0, 2, 3)), ...) to capture that")
    operands = [x, running_mean, running_var] + [a for a in (weight, bias) if a is not None]
    return operands, {"eps": float(eps), "has_weight": weight is not None, "has_bias": bias is not None}


def _infer_batch_norm(types, attrs):
    x = types[0]
    if x.ndim < 2:
        raise OpError(f"batch_norm: the input needs a channel axis (axis 1), got {x}")
    for t in types[1:]:
        if t.ndim == 1 and not same_shape(t.shape, (x.shape[1],)):
            same_size("batch_norm", t.shape[0], x.shape[1], f"batch_norm: statistics, weight and bias must have "
                                                            f"shape ({x.shape[1]},) for an input {x}, got {t}")
        elif t.ndim != 1:
            raise OpError(f"batch_norm: statistics, weight and bias must have shape ({x.shape[1]},) for an input "
                          f"{x}, got {t}")
    dtype = probe_dtype(batch_norm, tuple(TensorType(t.dtype, (1,) * (2 if i == 0 else 1))
                                          for i, t in enumerate(types)), tuple(sorted(attrs.items())), **attrs)
    return (TensorType(dtype, x.shape),)


register(OpDef(Op.BATCH_NORM, "nn", _bind_batch_norm, _infer_batch_norm, batch_norm, None,
               doc="batch normalization with running statistics (inference mode), per channel (axis 1)"))

