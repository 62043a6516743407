"""Traced graphs that together use every op of the table, with inputs to run them on.

Used by the IR-views, interpreter and rewrite tests: each backend and each transformation is checked against
``run`` (and ``run`` against eager NumPy) on all of them. The functions are written as a model author would write
them; ``SAMPLES`` pairs each with its input shapes and parameters. Kept in a module of its own so that the source
lines recorded in the graphs (pinned by the expect tests) do not move when a test file is edited.
"""

from __future__ import annotations

import math

import numpy as np

from graph_lab import F, nn as modules_nn, trace
from graph_lab.ops import SOURCE_OPS, Op


def gelu_mlp(x, p):
    """The seed's model (lecture 12, 01_tracing.py): x @ W1 -> GELU (tanh approximation) -> @ W2."""
    h = x @ p["W1"]
    g = 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return g @ p["W2"]


def unary(x):
    a = np.abs(x) + 0.5
    return (np.log(a), np.sqrt(a), np.log1p(a), np.expm1(x), np.exp(x), -x, np.sign(x), np.square(x),
            np.reciprocal(a), np.tanh(x), np.sin(x), np.cos(x), np.floor(x), np.ceil(x), F.sigmoid(x),
            F.relu(x), F.gelu(x), x.copy(), x.astype(np.float32))


def compare_select(x, y):
    big, pos = x > y, x > 0
    return (big, ~pos, big & pos, big | pos, big ^ pos, x == y, x != y, x < y, x <= y, x >= y,
            F.where(big, x, y), F.clip(x, -0.5, 0.5), np.clip(x, None, 0.25), np.maximum(x, y), np.minimum(x, y))


def int_arith(a, b):
    return a // b, a % b, a ** 2, a + 1, a * b, a / b, a - 3


def reductions(x):
    return (x.sum(axis=-1), x.mean(axis=(0, 2), keepdims=True), x.max(), x.min(axis=1), x.prod(axis=0),
            x.var(axis=1, ddof=1), x.std(axis=-1), x.argmax(axis=1), x.argmin(), (x > 0).any(axis=0),
            (x > 0).all())


def linalg(x, w):
    return x @ w, F.einsum("ij,jk->ik", x, w), np.outer(x[0], w[:, 0])


def shapes(x):
    left, right = np.split(x, 2, axis=1)
    return (x.reshape(2, -1), x.transpose(1, 0), np.broadcast_to(x[0], (3, 4)), np.expand_dims(x, 0),
            np.expand_dims(x, 0).squeeze(0), np.concatenate([left, right], axis=0), np.stack([left, right]),
            np.array_split(x, 3, axis=1)[2], np.split(x, 1)[0], np.repeat(x, 2, axis=0), np.tile(x, (1, 2)),
            np.pad(x, 1, constant_values=0.5), np.triu(x, 1), np.tril(x), x.swapaxes(0, 1))


def indexing(x, idx):
    y = x.copy()
    y[0] = 1.0
    y[:, [1, 3]] += 2.0
    return x[:, 1:3], x[[0, 2]], x[..., None, -1], x[idx], x[::-1, ::2], y


def nn(x, p):
    return (F.softmax(x, axis=-1), F.log_softmax(x, axis=0), F.layer_norm(x, p["g"], p["b"]),
            F.layer_norm(x), F.linear(x, p["W"], p["b2"]), F.linear(x, p["W"]))


def constants(x):
    """Weak Python scalars, NumPy scalars, -0.0, inf and a constant array: each must keep its exact type."""
    return (0.5 * x + 1, x * np.float64(2.0), x + (-0.0), x + math.inf, x + np.arange(4, dtype=np.float32),
            F.zeros_like(x), F.ones_like(x, dtype=np.int32), F.full_like(x, 3.5), 2**62 + x.sum(), F.full(2, x.max()))


_RNG = np.random.default_rng(12)
SAMPLES = {
    "gelu_mlp": (gelu_mlp, {"x": (4, 8)}, {"W1": _RNG.standard_normal((8, 16)) / 3,
                                           "W2": _RNG.standard_normal((16, 8)) / 4}),
    "unary": (unary, {"x": (3, 4)}, None),
    "compare_select": (compare_select, {"x": (3, 4), "y": (3, 4)}, None),
    "int_arith": (int_arith, {"a": ((5,), "int64"), "b": ((5,), "int64")}, None),
    "reductions": (reductions, {"x": (3, 4, 5)}, None),
    "linalg": (linalg, {"x": (3, 4), "w": (4, 2)}, None),
    "shapes": (shapes, {"x": (3, 4)}, None),
    "indexing": (indexing, {"x": (3, 4), "idx": ((2,), "int64")}, None),
    "nn": (nn, {"x": (3, 4)}, {"g": _RNG.standard_normal(4), "b": _RNG.standard_normal(4),
                               "W": _RNG.standard_normal((5, 4)), "b2": _RNG.standard_normal(5)}),
    "constants": (constants, {"x": ((4,), "float32")}, None),
}


def make_graph(name: str):
    fn, shape_spec, params = SAMPLES[name]
    return trace(fn, shape_spec, params)


def make_inputs(graph, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs of the graph's types: normal floats (with a -0.0 in them), small positive ints, valid indices."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, t in graph.input_types().items():
        shape = tuple(d if type(d) is int else SYMBOL_SIZE for d in t.shape)
        if np.issubdtype(t.dtype, np.integer):
            inputs[name] = rng.integers(1, 3, size=shape).astype(t.dtype)
        else:
            x = rng.standard_normal(shape).astype(t.dtype)
            if x.size:
                x.flat[0] = -0.0
            inputs[name] = x
    return inputs


def eager(name: str, inputs: dict[str, np.ndarray]):
    """The sample run eagerly on arrays, its result flattened to a list like ``run``'s."""
    fn, shape_spec, params = SAMPLES[name]
    args = [inputs[n] for n in shape_spec] + ([params] if params is not None else [])
    out = fn(*args)
    return [np.asarray(v) for v in (out if isinstance(out, tuple) else (out,))]


def ops_covered() -> set[Op]:
    return {node.op for name in SAMPLES for node in make_graph(name).nodes}


def all_ops() -> set[Op]:
    return set(Op) - set(SOURCE_OPS) | set(SOURCE_OPS)


# Added after the others so that their recorded source lines stay where the expect tests pin them.

def symbolic_sizes(x):
    """Sizes known only at run time: a reshape into heads, a mean divisor, 1/sqrt(d), a slice, a size returned."""
    T, d = x.shape
    heads = x.reshape(T, 2, d // 2)
    return heads.sum(axis=1) / T * (1.0 / np.sqrt(d)) * d ** -0.5, x[:T - 1], T * d


SAMPLES["symbolic_sizes"] = (symbolic_sizes, {"x": ("T", "d")}, None)
SYMBOL_SIZE = 6
"""The size each symbolic dimension gets in ``make_inputs`` (even, and at least 2, as the samples' guards need)."""


def control(x, w):
    """Structured control flow: a branch on data, a data-dependent loop, a counted loop and a scan."""
    y = F.cond(x.sum() > 0, lambda a: np.tanh(a @ w), lambda a: -a, x)
    y, n = F.while_loop(lambda c: np.abs(c[0]).sum() > 1.0, lambda c: (c[0] * 0.5, c[1] + 1), (y, 0))
    z = F.fori_loop(0, 3, lambda i, acc: acc + x * i, x)
    total, rows = F.scan(lambda c, row: (c + row, c * row), x[0], x)
    return y, n, z, total, rows


SAMPLES["control"] = (control, {"x": (3, 4), "w": (4, 4)}, None)


def conv_net(x, p):
    """A small vision block: convolution, batch norm (running statistics), ReLU, max and average pooling."""
    h = F.relu(F.batch_norm(F.conv2d(x, p["conv_w"], padding=1), p["mean"], p["var"], p["gamma"], p["beta"]))
    return F.max_pool2d(h, 2), F.avg_pool2d(h, 3, stride=1, padding=1)


SAMPLES["conv_net"] = (conv_net, {"x": (2, 3, 6, 6)}, {
    "conv_w": _RNG.standard_normal((4, 3, 3, 3)) / 4, "mean": _RNG.standard_normal(4),
    "var": _RNG.uniform(0.5, 2.0, 4), "gamma": _RNG.standard_normal(4), "beta": _RNG.standard_normal(4)})


def numpy_coverage(x, i):
    """The NumPy beyond the first samples: trigonometry, rounding, NaN tests, bitwise ints, complex parts, running
    sums, sorting, the dot family, diagonals, take, statistics, ufunc methods and library calls."""
    a = np.arcsin(np.clip(x, -1.0, 1.0)) + np.arccos(np.clip(x, -1.0, 1.0)) + np.arctan(x) + np.sinh(x)
    a = a + np.cosh(x) + np.log2(np.abs(x) + 1.0) + np.log10(np.abs(x) + 1.0) + np.exp2(x)
    a = a + np.isnan(x) + np.isinf(x) + np.isfinite(x) + np.rint(x) + np.trunc(x) + np.round(x, 1)
    a = a + np.arctan2(x, 1.0) + np.hypot(x, 2.0) + np.logaddexp(x, 0.0)
    bits = ((i & 3) | (i << 1)) ^ (~i >> 1)
    z = x * 1j + 1.0
    parts = np.conj(z).real + z.imag + np.angle(z)
    runs = np.cumsum(x, axis=1) + np.cumprod(x, axis=0) + np.maximum.accumulate(x, axis=1)
    order = np.sort(x, axis=1) + np.argsort(x, axis=1) + np.take_along_axis(x, np.argsort(x, axis=1), axis=1)
    linear = np.dot(x, x.T) + np.inner(x, x) + np.tensordot(x, x, ([1], [1])) + np.vdot(x, x)
    moved = np.flip(x, 0) + np.roll(x, 1) + np.take(x, [0, 1, 0], axis=0)
    diag = np.diag(np.diagonal(x)) + np.trace(x) + np.diff(x, axis=0)[0, 0] + np.subtract.reduce(x, axis=1)[0]
    stats = np.average(x, axis=0) + np.cov(x)[0, 0] + np.corrcoef(x)[0, 1] + np.histogram(x, 3)[0][0]
    library = np.linalg.norm(x, axis=1) + np.fft.rfft(x)[:, 0].real + np.add.outer(x[0], x[1])[0, 0]
    return a, bits, parts, runs, order, linear, moved, diag, stats, library


SAMPLES["numpy_coverage"] = (numpy_coverage, {"x": (3, 3), "i": ((3, 3), "int64")}, None)


def symbolic_constructors(x):
    """arange, linspace, eye and tri of a size known only at run time (a causal mask, positions)."""
    T = x.shape[0]
    causal = np.where(F.tri(T, dtype=bool), x, -np.inf)
    return causal + F.eye(T) + F.arange(T) * F.linspace(0.0, 1.0, T)


SAMPLES["symbolic_constructors"] = (symbolic_constructors, {"x": ("T", "T")}, None)


def modules(x):
    """Leaf modules of graph_lab.nn recorded as call_module nodes (as symbolic_trace records them)."""
    h = modules_nn.record_call(_FC, "block.fc", (x,))
    return modules_nn.record_call(_ACT, "block.act", (h,)) * 2.0


_FC = modules_nn.Linear(4, 3, generator=np.random.default_rng(3))
_ACT = modules_nn.GELU()
SAMPLES["modules"] = (modules, {"x": (3, 4)}, None)
