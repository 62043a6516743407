"""Model code written for any batch size or sequence length: the corpus the symbolic-shape tests capture once and
run on many sizes. Each entry names its inputs' symbolic shapes and the sizes to run it on.

The functions are written as a model author writes them, with ``x.shape`` read in the body where the model
needs a size (heads, divisors, slices), so that the sizes flow through Python arithmetic into the graph.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from graph_lab import F

RNG = np.random.default_rng(8)


def w(*shape) -> np.ndarray:
    return RNG.standard_normal(shape) / math.sqrt(shape[0])


def mlp(x, p):
    return F.relu(x @ p["W1"] + p["b1"]) @ p["W2"]


def gelu_mlp(x, p):
    """The seed lecture's model: x @ W1 -> GELU (tanh approximation) -> @ W2."""
    h = x @ p["W1"]
    g = 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return g @ p["W2"]


def attention(x, p):
    """Causal self-attention over a sequence of any length T (the mask is built from the scores' own shape)."""
    T, d = x.shape
    q, k, v = x @ p["Wq"], x @ p["Wk"], x @ p["Wv"]
    scores = q @ k.T / math.sqrt(d)
    mask = np.triu(np.ones_like(scores), 1) * -1e9
    return F.softmax(scores + mask, axis=-1) @ v


def multi_head(x, p):
    """Attention with 4 heads: reshape into heads, batched matmul, back to one row per position."""
    T, d = x.shape
    heads = 4
    q = (x @ p["Wq"]).reshape(T, heads, d // heads).transpose(1, 0, 2)
    k = (x @ p["Wk"]).reshape(T, heads, d // heads).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1) * (1.0 / np.sqrt(d // heads))
    out = F.softmax(scores, axis=-1) @ q
    return out.transpose(1, 0, 2).reshape(T, d)


def seed_heads(x):
    """The seed lecture's demo 2 with both sizes symbolic: 2 heads of d // 2, scaled by 1/sqrt(d)."""
    T, d = x.shape
    heads = x.reshape(T, 2, d // 2).transpose(1, 0, 2)
    return heads.transpose(1, 0, 2).reshape(T, d) * (1.0 / np.sqrt(d))


def mean_by_hand(x):
    """Reductions with a symbolic divisor: a mean, a variance and a normalization written with sum / T."""
    T = x.shape[0]
    mean = x.sum(axis=0) / T
    var = ((x - mean) ** 2).sum(axis=0) / (T - 1)
    return (x - mean) / np.sqrt(var + 1e-5), x.mean(), x.var(axis=0)


def layer_norm_by_hand(x, p):
    d = x.shape[-1]
    mu = x.sum(axis=-1, keepdims=True) / d
    centered = x - mu
    return centered / np.sqrt((centered * centered).sum(axis=-1, keepdims=True) / d + 1e-5) * p["g"]


def concat_sizes(x, y):
    """Concatenation of two symbolic sizes, B + T rows, then sliced back apart by x's own size."""
    z = np.concatenate([x, y], axis=0)
    B = x.shape[0]
    return z, z[:B] - x, z[B:] * 2.0, z.shape[0] * 1.0


def batched(x, p):
    """A batch of sequences: [B, T, 8] @ [8, 4], then a mean over the sequence."""
    return (x @ p["W"]).mean(axis=1)


def flatten_linear(x, p):
    B = x.shape[0]
    return x.reshape(B, -1) @ p["W"]


def halves(x):
    """np.split into equal halves of a symbolic size (needs B % 2 == 0, guarded)."""
    top, bottom = np.split(x, 2, axis=0)
    return top - bottom, np.split(x, 2, axis=1)[1]


def differences(x):
    """Neighbouring rows: x[1:] - x[:-1], T-1 rows; and the last row."""
    return x[1:] - x[:-1], x[-1], x[::2]


def padded(x):
    return np.pad(x, ((1, 2), (0, 0))), np.repeat(x, 2, axis=0), np.tile(x, (2, 1))


def stacked(x):
    return np.stack([x, 2.0 * x], axis=1), np.expand_dims(x, 0).squeeze(0)


def outer_sizes(x, y):
    """Broadcasting a symbol against 1: [B, 1, d] + [1, T, d] is [B, T, d]."""
    return x[:, None, :] + y[None, :, :]


def gram(x):
    """einsum over the batch, divided by its size; and the centered batch."""
    centered = x - x.mean(axis=0)
    return F.einsum("bi,bj->ij", centered, centered) / x.shape[0], centered


def nn_ops(x, p):
    return F.log_softmax(F.linear(F.layer_norm(x, p["g"], p["b"]), p["W"], p["c"]), axis=-1)


def size_outputs(x):
    """Sizes as numbers: returned, multiplied, and used by a float in Python arithmetic."""
    T, d = x.shape
    return T * d, x * (T / d), d ** -0.5


@dataclass
class Case:
    fn: Callable
    shapes: dict
    """Each input's shape with names for the symbolic sizes, or (shape, dtype)."""
    sizes: list
    """Several {symbol: size} to run the graph on (each >= 2)."""
    params: dict | None = None
    example: bool = False
    """True: the capture needs an example (a size decides something); else make_graph captures it."""
    name: str = field(default="")

    def __post_init__(self):
        self.name = self.fn.__name__


FOUR = [{"B": 2}, {"B": 3}, {"B": 5}, {"B": 8}]
SEQ = [{"T": 2}, {"T": 3}, {"T": 7}, {"T": 16}]
EVEN = [{"B": 2}, {"B": 4}, {"B": 6}, {"B": 10}]

CASES = [
    Case(mlp, {"x": ("B", 16)}, FOUR, {"W1": w(16, 32), "b1": w(32), "W2": w(32, 4)}),
    Case(gelu_mlp, {"x": (("B", 8), "float32")}, FOUR,
         {"W1": w(8, 16).astype(np.float32), "W2": w(16, 8).astype(np.float32)}),
    Case(attention, {"x": ("T", 16)}, SEQ, {"Wq": w(16, 16), "Wk": w(16, 16), "Wv": w(16, 16)}),
    Case(multi_head, {"x": ("T", 16)}, SEQ, {"Wq": w(16, 16), "Wk": w(16, 16)}),
    Case(seed_heads, {"x": ("T", "d")}, [{"T": 4, "d": 8}, {"T": 5, "d": 8}, {"T": 2, "d": 6},
                                         {"T": 9, "d": 12}]),
    Case(mean_by_hand, {"x": ("T", 3)}, SEQ),
    Case(layer_norm_by_hand, {"x": ("B", "d")}, [{"B": 2, "d": 4}, {"B": 3, "d": 4}, {"B": 7, "d": 4},
                                                  {"B": 4, "d": 4}], {"g": w(4)}),
    Case(concat_sizes, {"x": ("B", 4), "y": ("T", 4)}, [{"B": 2, "T": 3}, {"B": 5, "T": 2}, {"B": 4, "T": 4},
                                                          {"B": 9, "T": 6}]),
    Case(batched, {"x": ("B", "T", 8)}, [{"B": 2, "T": 3}, {"B": 3, "T": 2}, {"B": 4, "T": 5},
                                         {"B": 6, "T": 6}], {"W": w(8, 4)}),
    Case(flatten_linear, {"x": ("B", 4, 4)}, FOUR, {"W": w(16, 3)}),
    Case(halves, {"x": ("B", 8)}, EVEN),
    Case(differences, {"x": ("T", 5)}, SEQ),
    Case(padded, {"x": ("T", 3)}, SEQ),
    Case(stacked, {"x": ("B", 3)}, FOUR),
    Case(outer_sizes, {"x": ("B", 4), "y": ("T", 4)}, [{"B": 2, "T": 3}, {"B": 3, "T": 2}, {"B": 5, "T": 5},
                                                         {"B": 8, "T": 4}]),
    Case(gram, {"x": ("B", 5)}, FOUR),
    Case(nn_ops, {"x": ("B", 6)}, FOUR, {"g": w(6), "b": w(6), "W": w(4, 6), "c": w(4)}),
    Case(size_outputs, {"x": ("T", "d")}, [{"T": 2, "d": 2}, {"T": 3, "d": 5}, {"T": 8, "d": 4},
                                           {"T": 6, "d": 7}]),
]


def concrete_shape(spec, sizes: dict) -> tuple[tuple, np.dtype]:
    shape, dtype = (spec, np.float64) if not isinstance(spec[0], tuple) else spec
    return tuple(sizes[d] if isinstance(d, str) else d for d in shape), np.dtype(dtype)


def make_inputs(case: Case, sizes: dict, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for name, spec in case.shapes.items():
        shape, dtype = concrete_shape(spec, sizes)
        out[name] = rng.standard_normal(shape).astype(dtype)
    return out
