"""Traced functions whose printed IR is pinned by ``test_expect.py`` (expected text in ``expect/*.txt``).

The printed IR names source lines of this file. Keep it apart from the tests so that editing a test does not
move these lines; add new cases at the end so the existing ones keep their line numbers.
"""

import math

import numpy as np

from graph_lab import F, trace


def gelu_mlp(x, p):
    h = x @ p["W1"] + p["b1"]
    g = 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return g @ p["W2"]


def mlp():
    # Small integer-valued weights: they never print (params show only their names), but keep them exact.
    p = {"W1": np.ones((8, 16)), "b1": np.zeros(16), "W2": np.ones((16, 8))}
    return trace(gelu_mlp, {"x": (4, 8)}, p)


def split_heads(x):
    T, d = x.shape
    heads = x.reshape(T, 2, d // 2).transpose(1, 0, 2)
    scores = heads @ heads.swapaxes(-1, -2)
    return scores.transpose(1, 0, 2).reshape(T, -1).T


def reshape_transpose():
    return trace(split_heads, {"x": (4, 8)})


def scatter_rows(x, idx):
    x = x.copy()
    x[1:3, ::2] = 0.0
    picked = x[idx]
    x[idx, -1] += picked.sum(axis=1)
    return x[:, None, 0], picked


def indexing():
    return trace(scatter_rows, {"x": (5, 4), "idx": ((2,), "int64")})


def split_parts(x):
    a, b, c = np.split(x, [1, 3], axis=1)
    left, right = np.array_split(x, 2, axis=0)
    return a * c, F.concatenate([b, b], axis=1), left.sum() - right.sum()


def split():
    return trace(split_parts, {"x": (3, 4)})


CASES = {"mlp": mlp, "reshape_transpose": reshape_transpose, "indexing": indexing, "split": split}
