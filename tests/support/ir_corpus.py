"""A corpus of traced graphs for the IR text tests: every op family, multi-output ops, index keys with slots,
constants of every dtype and awkward value (-0.0, NaN with and without sign or payload, inf, subnormals, empty
and 0-d arrays), weak scalars, parameters in nests with awkward names, and value guards of every kind.

``CASES`` maps a name to ``build() -> (graph, inputs)``: the traced graph and inputs to run it on.
"""

from __future__ import annotations

import struct

import numpy as np

import graph_lab as gl
from graph_lab import F

RNG = np.random.default_rng(1234)


def randn(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def nan_with_payload() -> float:
    return struct.unpack("<d", struct.pack("<Q", 0x7FF4000000000001))[0]


def unary_all(x):
    pos = np.abs(x) + 0.5
    return [-x, np.abs(x), np.sign(x), np.exp(x), np.log(pos), np.log1p(pos), np.expm1(x), np.sqrt(pos),
            np.square(x), np.reciprocal(pos), np.tanh(x), np.sin(x), np.cos(x), np.floor(x), np.ceil(x),
            ~(x > 0), F.sigmoid(x), F.relu(x), F.gelu(x), x.copy(), x.astype(np.float32), F.cast(x, np.int16)]


def binary_all(x, y):
    return [x + y, x - y, x * y, x / y, x // y, x % y, np.abs(x) ** y, np.maximum(x, y), np.minimum(x, y),
            x == y, x != y, x < y, x <= y, x > y, x >= y, (x > 0) & (y > 0), (x > 0) | (y > 0),
            (x > 0) ^ (y > 0), F.where(x > y, x, y), np.clip(x, -0.5, None), np.clip(x, -0.5, 0.5),
            np.clip(x, None, y)]


def reductions(x):
    return [x.sum(), x.sum(axis=0), x.mean(axis=-1, keepdims=True), x.max(axis=(0, 1)), x.min(axis=1),
            x.prod(axis=0), x.var(axis=1, ddof=1), x.std(), x.argmax(), x.argmin(axis=0, keepdims=True),
            (x > 0).any(axis=0), (x > 0).all()]


def linalg(x, w, v):
    return [x @ w, v @ w, x[:, :3] @ v[:3], np.einsum("ij,jk->ik", x, w), np.outer(v, v), F.linear(x, w.T),
            F.linear(x, w.T, v), np.matmul(np.stack([x, x]), w)]


def shapes(x):
    a, b, c = np.split(x, 3, axis=1)
    p, q = np.array_split(x.reshape(-1), [5])
    return [x.reshape(2, -1), x.T, x.transpose(1, 0), np.broadcast_to(x[:1], (4, 6)), np.expand_dims(x, (0, 2)),
            np.squeeze(x[:1]), np.concatenate([a, c], axis=1), np.concatenate([a, b], axis=None),
            np.stack([a, b, c], axis=-1), p, q, np.repeat(x, 2, axis=0), np.repeat(x[0], [1, 2, 0, 1, 1, 1]),
            np.tile(x, (2, 1)), np.pad(x, ((1, 0), (2, 3)), constant_values=np.float32(0.1)),
            np.pad(x, 1), np.triu(x, 1), np.tril(x, -1), np.hstack([a, b]), np.vstack([a, b])]


def indexing(x, idx):
    y = x.copy()
    y[[0, 1], 2:] = 5.0
    y[idx] += 1.0
    y[..., -1] = x[:, 0]
    return [x[:, [0, 2]], x[idx], x[..., None, 1:5:2], x[::-1], x[-1], x[1:3, ::2], x[idx, 0], x[idx[:, None],
            np.array([0, 1])], x[np.array([True, False, True, False])], x[()], y]


def nn(x, p):
    return [F.softmax(x, axis=-1), F.log_softmax(x, axis=0),
            F.layer_norm(x, p["ln"]["w"], p["ln"]["b"], eps=1e-6), F.layer_norm(x), F.layer_norm(x, p["ln"]["w"])]


def like_ops(x):
    return [np.zeros_like(x), np.ones_like(x, dtype=np.int32), np.full_like(x, 2.5),
            np.full_like(x, np.float32(-0.0)), F.full_like(x, 7, dtype=np.uint8)]


def constants(x):
    big = np.array([0.0, -0.0, np.nan, -np.nan, nan_with_payload(), np.inf, -np.inf, 1e300, 5e-324, 0.1, 1 / 3])
    f32 = np.array([0.1, -0.0, np.nan, np.inf, 1e-45, 3.4028235e38, 16777217.0], np.float32)
    f16 = np.array([0.1, 65504.0, -np.inf, 6e-08], np.float16)
    ints = [np.array([-(2**63), 2**63 - 1], np.int64), np.array([-(2**31), 7], np.int32),
            np.array([[-32768, 1]], np.int16), np.array([-128, 127], np.int8), np.array([2**64 - 1], np.uint64),
            np.array([2**32 - 1], np.uint32), np.array([65535], np.uint16), np.array([[255], [0]], np.uint8)]
    cplx = [np.array([1 + 2j, complex(-0.0, np.nan)], np.complex128), np.array([0.1 + 0.2j], np.complex64)]
    empty = [np.zeros((0,)), np.zeros((2, 0, 3), np.float32), np.zeros((0, 3), np.int8), np.zeros((1, 0), bool)]
    zero_d = [np.array(2.0), np.array(-0.0, np.float32), np.array(True), np.array(np.nan)]
    scalars = [np.float64(3.0), np.float32(0.1), np.float16(-0.0), np.int8(-5), np.uint64(2**64 - 1),
               np.bool_(False), np.complex64(1 - 1j), np.float64(-np.nan)]
    weak = [x * 2, x + 0.5, x * -0.0, x * float("nan"), x + float("inf"), x + True, x * 1j, x * (2 - 0j)]
    return [big, f32, f16, *ints, *cplx, *empty, *zero_d, *scalars, *weak, np.array([[True, False]]), 3, 0.25, True]


def guarded(x, p):
    s = float((x * p["scale"]).sum())  # p["scale"] is used only by the guard: the main graph drops it
    y = x * 2.0 if s > 0 else x * 3.0
    if bool(x.max() > 0.0):
        y = y + 1.0
    n = int(x.shape[0] + (x > 0).sum() * 0)
    first = x[0, 0].item()
    table = np.asarray(x[0] > 0)  # an 'array' guard: the whole boolean row is part of the condition
    nan_seen = float(x.sum() * np.nan)
    return y * n + first + table.sum() + (0 if nan_seen == nan_seen else 1)


def awkward_names(x, params):
    return x @ params['we"ird\\key\n'] + params["模型"][0] + params["tab\there"]["list"][1]


def no_outputs(x):
    return ()


def only_consts(x):
    return np.float32(1.5), np.array([], np.int64), 2


def renamed(fn, name):
    fn.__name__ = name
    return fn


def _case(fn, shapes_, params=None, inputs=None, mode="error", name=None):
    def build():
        inputs_ = inputs() if callable(inputs) else inputs
        if inputs_ is None:
            inputs_ = {k: randn(*(v if isinstance(v[0], int) or not v else v[0]),
                                dtype=np.float64 if isinstance(v[0], int) or not v else v[1])
                       for k, v in shapes_.items()}
        kwargs = {"mode": mode, "example": inputs_} if mode != "error" else {}
        target = renamed(lambda *a: fn(*a), name) if name else fn
        return gl.trace(target, shapes_, params() if callable(params) else params, **kwargs), inputs_
    return build


def _ln_params():
    return {"ln": {"w": randn(6), "b": randn(6)}}


def _mlp_params():
    return {"layers": [{"W": randn(8, 16), "b": randn(16)}, {"W": randn(16, 4), "b": np.zeros(4)}],
            "scale": (np.float32(0.5) * np.ones(4, np.float32),)}


def mlp(x, p):
    h = x
    for layer in p["layers"]:
        h = F.gelu(h @ layer["W"] + layer["b"])
    return {"out": h * p["scale"][0], "mean": h.mean()}


CASES = {
    "mlp": _case(mlp, {"x": (4, 8)}, _mlp_params),
    "unary": _case(unary_all, {"x": (3, 5)}),
    "unary_f32": _case(unary_all, {"x": ((3, 5), "float32")}),
    "binary": _case(binary_all, {"x": (4, 6), "y": (6,)}),
    "reductions": _case(reductions, {"x": (4, 6)}),
    "linalg": _case(linalg, {"x": (4, 6), "w": (6, 6), "v": (6,)}),
    "shapes": _case(shapes, {"x": (4, 6)}),
    "indexing": _case(indexing, {"x": (4, 6), "idx": ((3,), "int64")},
                      inputs=lambda: {"x": randn(4, 6), "idx": np.array([2, 0, 3])}),
    "nn": _case(nn, {"x": (4, 6)}, _ln_params),
    "like": _case(like_ops, {"x": (4, 6)}),
    "constants": _case(constants, {"x": (3,)}),
    "guards": _case(guarded, {"x": (4, 6)}, lambda: {"scale": randn(4, 6)}, mode="guard"),
    "awkward_names": _case(awkward_names, {"x": (2, 3)},
                           lambda: {'we"ird\\key\n': randn(3, 3), "模型": [randn(3)],
                                    "tab\there": {"list": [randn(1), randn(3)]}}, name='my "model"\n'),
    "no_outputs": _case(no_outputs, {"x": (2,)}),
    "only_consts": _case(only_consts, {"x": (2,)}),
    "lambda": _case(lambda x: x * 2, {"x": (2,)}),
    "unicode_name": _case(lambda x: x + 1, {"x": (2,)}, name="模型_2"),
    "keyword_name": _case(lambda x: x + 1, {"x": (2,)}, name="nan"),
}
