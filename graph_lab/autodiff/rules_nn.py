"""Derivative rules of linear algebra and the network ops (softmax, layer/batch norm, linear, convolution,
pooling), written with ``F``.

The convolution's rules are convolutions too: the input's cotangent is the output cotangent (spread out by the
stride) convolved with the flipped kernel, and the kernel's is the input convolved with the output cotangent
(the roles of batch and channel axes swapped). Pooling's rules walk the window offsets, one strided slice each.
"""

from __future__ import annotations

import numpy as np

from ..frontends import functional as F
from ..ops import Op
from ..ops.base import register_vjp
from .core import NoDerivativeError
from .rules_elementwise import unbroadcast


def _swap(t):
    return F.swapaxes(t, -1, -2)


def _reshaped(t, shape):
    shape = tuple(shape)
    return t if tuple(t.shape) == shape else F.reshape(t, shape)


def _matmul(cts, ins, outs):
    a, b = ins
    ct = cts[0]
    if a.ndim == 1 and b.ndim == 1:
        return [ct * b, ct * a]
    a2 = F.reshape(a, (1, a.shape[0])) if a.ndim == 1 else a
    b2 = F.reshape(b, (b.shape[0], 1)) if b.ndim == 1 else b
    ct_shape = tuple(outs[0].shape)
    if a.ndim == 1:
        ct_shape = ct_shape[:-1] + (1, ct_shape[-1])
    if b.ndim == 1:
        ct_shape = ct_shape + (1,)
    ct2 = _reshaped(ct, ct_shape)
    da = unbroadcast(F.matmul(ct2, _swap(b2)), a2.shape)
    db = unbroadcast(F.matmul(_swap(a2), ct2), b2.shape)
    return [_reshaped(da, a.shape), _reshaped(db, b.shape)]


def _einsum(cts, ins, outs, subscripts):
    """Each operand's cotangent is an einsum of the output cotangent with the other operands; an index only that
    operand has (summed away) is restored by broadcasting."""
    spec = subscripts.replace(" ", "")
    lhs, arrow, rhs = spec.partition("->")
    terms = lhs.split(",")
    if "." in spec or any(len(set(t)) != len(t) for t in terms):
        raise NoDerivativeError(f"einsum {subscripts!r}: '...' and repeated indices in one operand (diagonals) "
                                f"have no rule; spell the dimensions out")
    if not arrow:
        rhs = "".join(sorted(ch for ch in set(lhs) - {","} if lhs.count(ch) == 1))
    grads = []
    for i, (term, x) in enumerate(zip(terms, ins)):
        others = [t for j, t in enumerate(terms) if j != i]
        present = set(rhs).union(*others) if others else set(rhs)
        kept = "".join(ch for ch in term if ch in present)
        g = F.einsum(",".join([rhs] + others) + "->" + kept, cts[0], *[o for j, o in enumerate(ins) if j != i])
        if kept != term:
            g = F.broadcast_to(F.reshape(g, tuple(x.shape[k] if ch in present else 1 for k, ch in enumerate(term))),
                               tuple(x.shape))
        grads.append(g)
    return grads


def _outer(cts, ins, outs):
    a, b = ins
    ct = cts[0]
    return [F.reshape(F.matmul(ct, F.reshape(b, (-1,))), tuple(a.shape)),
            F.reshape(F.matmul(F.reshape(a, (-1,)), ct), tuple(b.shape))]


register_vjp(Op.MATMUL, _matmul)
register_vjp(Op.EINSUM, _einsum)
register_vjp(Op.OUTER, _outer)

# --- network composites


def _softmax(cts, ins, outs, axis):
    y, ct = outs[0], cts[0]
    return [y * (ct - F.sum(ct * y, axis=axis, keepdims=True))]


def _log_softmax(cts, ins, outs, axis):
    ct = cts[0]
    return [ct - F.exp(outs[0]) * F.sum(ct, axis=axis, keepdims=True)]


def _layer_norm(cts, ins, outs, eps, has_weight, has_bias):
    x, ct = ins[0], cts[0]
    it = iter(ins[1:])
    weight = next(it) if has_weight else None
    bias = next(it) if has_bias else None
    centered = x - F.mean(x, axis=-1, keepdims=True)
    rstd = 1.0 / F.sqrt(F.mean(centered * centered, axis=-1, keepdims=True) + eps)
    xhat = centered * rstd
    g = ct * weight if weight is not None else ct
    dx = rstd * (g - F.mean(g, axis=-1, keepdims=True) - xhat * F.mean(g * xhat, axis=-1, keepdims=True))
    grads = [dx]
    if weight is not None:
        grads.append(unbroadcast(ct * xhat, weight.shape))
    if bias is not None:
        grads.append(unbroadcast(ct, bias.shape))
    return grads


def _linear(cts, ins, outs, has_bias):
    x, w = ins[0], ins[1]
    ct = cts[0]
    dx = F.matmul(ct, w)
    flat_ct = F.reshape(ct, (-1, w.shape[0]))
    flat_x = F.reshape(x, (-1, w.shape[1]))
    grads = [F.reshape(dx, tuple(x.shape)), F.matmul(F.transpose(flat_ct), flat_x)]
    if has_bias:
        grads.append(unbroadcast(ct, ins[2].shape))
    return grads


register_vjp(Op.SOFTMAX, _softmax)
register_vjp(Op.LOG_SOFTMAX, _log_softmax)
register_vjp(Op.LAYER_NORM, _layer_norm)
register_vjp(Op.LINEAR, _linear)


def _batch_norm(cts, ins, outs, eps, has_weight, has_bias):
    """y = (x - mean) * rstd * weight + bias per channel (axis 1), rstd = 1 / sqrt(var + eps)."""
    x, mean, var, ct = ins[0], ins[1], ins[2], cts[0]
    it = iter(ins[3:])
    weight = next(it) if has_weight else None
    per_channel = (-1,) + (1,) * (x.ndim - 2)
    others = (0,) + tuple(range(2, x.ndim))
    rstd = F.reshape(1.0 / F.sqrt(var + eps), per_channel)
    scale = rstd * F.reshape(weight, per_channel) if weight is not None else rstd
    centered = x - F.reshape(mean, per_channel)
    dx = ct * scale
    d_mean = -F.sum(dx, axis=others)
    d_var = F.sum(ct * centered * (scale * rstd * rstd), axis=others) * -0.5
    grads = [dx, d_mean, d_var]
    if weight is not None:
        grads.append(F.sum(ct * centered * rstd, axis=others))
    if has_bias:
        grads.append(F.sum(ct, axis=others))
    return grads


register_vjp(Op.BATCH_NORM, _batch_norm)

# --- convolution and pooling


def _conv2d(cts, ins, outs, stride, padding, dilation, groups, has_bias):
    x, w, ct = ins[0], ins[1], cts[0]
    if groups != 1:  # each group is a convolution of its own channels
        xs, ws, cs = F.split(x, groups, 1), F.split(w, groups, 0), F.split(ct, groups, 1)
        parts = [_conv2d([c], [xg, wg], [c], stride, padding, dilation, 1, False) for xg, wg, c in zip(xs, ws, cs)]
        grads = [F.concatenate([p[0] for p in parts], axis=1), F.concatenate([p[1] for p in parts], axis=0)]
        return grads + ([F.sum(ct, axis=(0, 2, 3))] if has_bias else [])
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    kh, kw = w.shape[2], w.shape[3]
    n, o, oh, ow = ct.shape
    h, wd = x.shape[2], x.shape[3]
    span_h, span_w = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    spread = ct
    if sh > 1 or sw > 1:  # the cotangent at the strided positions, zeros between
        spread = F.index_update(F.zeros_like(ct[:, :, :1, :1]) * np.zeros(((oh - 1) * sh + 1, (ow - 1) * sw + 1)),
                                (slice(None), slice(None), slice(None, None, sh), slice(None, None, sw)), ct)
    flipped = F.transpose(w[:, :, ::-1, ::-1], (1, 0, 2, 3))
    full = F.conv2d(F.pad(spread, ((0, 0), (0, 0), (span_h - 1, span_h - 1), (span_w - 1, span_w - 1))), flipped,
                    dilation=(dh, dw))
    rest_h = h + 2 * ph - full.shape[2]  # rows of the padded input no window reached
    rest_w = wd + 2 * pw - full.shape[3]
    dx = F.pad(full, ((0, 0), (0, 0), (0, rest_h), (0, rest_w)))[:, :, ph:ph + h, pw:pw + wd]
    padded = F.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    dw_full = F.conv2d(F.transpose(padded, (1, 0, 2, 3)), F.transpose(ct, (1, 0, 2, 3)), stride=(dh, dw),
                       dilation=(sh, sw))
    d_weight = F.transpose(dw_full[:, :, :kh, :kw], (1, 0, 2, 3))
    grads = [dx, d_weight]
    if has_bias:
        grads.append(F.sum(ct, axis=(0, 2, 3)))
    return grads


def _pool_offsets(x, kernel, stride, padding, out_shape, fill):
    """The padded input, and for each window offset the strided slice of it that offset reads in every window."""
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    widths = ((0, 0),) * (x.ndim - 2) + ((ph, ph), (pw, pw))
    padded = F.pad(x, widths, constant_values=fill) if ph or pw else x
    oh, ow = out_shape[-2], out_shape[-1]
    keys = [(Ellipsis, slice(i, i + sh * (oh - 1) + 1, sh), slice(j, j + sw * (ow - 1) + 1, sw))
            for i in range(kh) for j in range(kw)]
    return padded, keys


def _unpad(acc, x, padding):
    ph, pw = padding
    return acc[..., ph:ph + x.shape[-2], pw:pw + x.shape[-1]] if ph or pw else acc


def _max_pool2d(cts, ins, outs, kernel, stride, padding):
    """Each window's cotangent goes to its first maximum (in row-major order of the window, as PyTorch picks)."""
    x, y, ct = ins[0], outs[0], cts[0]
    padded, keys = _pool_offsets(x, kernel, stride, padding, y.shape, -np.inf)
    acc = F.zeros_like(padded)
    remaining = F.ones_like(y)
    for key in keys:
        picked = F.where(padded[key] == y, remaining, 0.0)
        remaining = remaining - picked
        acc = F.index_update(acc, key, acc[key] + ct * picked)
    return [_unpad(acc, x, padding)]


def _avg_pool2d(cts, ins, outs, kernel, stride, padding):
    x, ct = ins[0], cts[0]
    padded, keys = _pool_offsets(x, kernel, stride, padding, outs[0].shape, 0.0)
    acc = F.zeros_like(padded)
    share = ct / float(kernel[0] * kernel[1])
    for key in keys:
        acc = F.index_update(acc, key, acc[key] + share)
    return [_unpad(acc, x, padding)]


register_vjp(Op.CONV2D, _conv2d)
register_vjp(Op.MAX_POOL2D, _max_pool2d)
register_vjp(Op.AVG_POOL2D, _avg_pool2d)
