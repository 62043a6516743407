"""W4: a transformer block (causal multi-head attention, MLP with GELU, layer norms) at [128, 512] float32, and a
small convolutional network (conv + batch norm + ReLU, pooling) on [8, 3, 32, 32] float32: eager NumPy against
each backend and graph_lab.compile; for the convolutional network also the ``inference`` pipeline, which folds
each batch norm into its convolution.

    PYTHONPATH=. python3 benchmarks/bench_w4_models.py
"""

from __future__ import annotations

import math

import numpy as np

from harness import header, interleaved, print_ratios

import graph_lab
from graph_lab import F, compile_graph, trace
from graph_lab.backends.tolerance import GRAPH_ULP, mismatches

HEADS = 8


def transformer_block(x, p):
    seq, dim = x.shape
    head = dim // HEADS
    h = F.layer_norm(x, p["ln1_w"], p["ln1_b"])
    q = (h @ p["wq"]).reshape(seq, HEADS, head).transpose(1, 0, 2)
    k = (h @ p["wk"]).reshape(seq, HEADS, head).transpose(1, 0, 2)
    v = (h @ p["wv"]).reshape(seq, HEADS, head).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1) * (1.0 / math.sqrt(head))
    scores = np.where(p["causal"], scores, -np.inf)
    attention = (F.softmax(scores, axis=-1) @ v).transpose(1, 0, 2).reshape(seq, dim)
    x = x + attention @ p["wo"] + p["bo"]
    h = F.layer_norm(x, p["ln2_w"], p["ln2_b"])
    return x + F.gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def transformer_params(dim: int, seq: int, rng) -> dict:
    def w(*shape):
        return (rng.standard_normal(shape) / math.sqrt(shape[0])).astype(np.float32)

    return {"ln1_w": np.ones(dim, np.float32), "ln1_b": np.zeros(dim, np.float32), "wq": w(dim, dim),
            "wk": w(dim, dim), "wv": w(dim, dim), "wo": w(dim, dim), "bo": np.zeros(dim, np.float32),
            "ln2_w": np.ones(dim, np.float32), "ln2_b": np.zeros(dim, np.float32), "w1": w(dim, 4 * dim),
            "b1": np.zeros(4 * dim, np.float32), "w2": w(4 * dim, dim), "b2": np.zeros(dim, np.float32),
            "causal": np.tril(np.ones((seq, seq), bool))}


def conv_net(x, p):
    h = F.relu(F.batch_norm(F.conv2d(x, p["c1"], padding=1), p["m1"], p["v1"], p["g1"], p["b1"]))
    h = F.max_pool2d(h, 2)
    h = F.relu(F.batch_norm(F.conv2d(h, p["c2"], padding=1), p["m2"], p["v2"], p["g2"], p["b2"]))
    h = F.avg_pool2d(h, 2)
    return h.reshape(h.shape[0], -1) @ p["fc"]


def conv_params(rng) -> dict:
    def f32(a):
        return np.asarray(a, np.float32)

    p = {"c1": f32(rng.standard_normal((16, 3, 3, 3)) / 5), "c2": f32(rng.standard_normal((32, 16, 3, 3)) / 12),
         "fc": f32(rng.standard_normal((32 * 8 * 8, 10)) / 45)}
    for i, c in ((1, 16), (2, 32)):
        p.update({f"m{i}": f32(rng.standard_normal(c) * 0.1), f"v{i}": f32(rng.uniform(0.5, 2.0, c)),
                  f"g{i}": f32(rng.uniform(0.5, 1.5, c)), f"b{i}": f32(rng.standard_normal(c) * 0.1)})
    return p


def compare(name: str, fn, x, p, pipelines: tuple[str, ...], number: int) -> None:
    g = trace(fn, {"x": (x.shape, "float32")}, p)
    expected = fn(x, p)
    variants = {"eager NumPy": lambda: fn(x, p)}
    for pipeline in pipelines:
        for backend in ("interpret", "codegen", "fused"):
            compiled = compile_graph(g, backend, pipeline)
            kind = "fused" if backend == "fused" else None
            kind = pipeline if pipeline != "exact" else kind
            problems = mismatches(compiled(x)[0], expected, GRAPH_ULP[kind]) if kind else \
                (["differs"] if not np.array_equal(compiled(x)[0], expected) else [])
            assert not problems, f"{name} {backend} {pipeline}: {problems}"
            ops = f"{g.count()} -> {compiled.graph.count()} ops"
            suffix = "" if pipeline == "exact" else f", {pipeline} pipeline ({ops})"
            variants[f"graph_lab {backend}{suffix}"] = (lambda c=compiled: c(x))
    notes = {}
    dynamo = graph_lab.compile(fn)
    try:
        dynamo(x, p)
        variants["graph_lab.compile (cache hit)"] = lambda: dynamo(x, p)
    except Exception as e:  # bytecode capture is another part of the project; say why its row is missing
        notes["eager NumPy"] = f"graph_lab.compile could not capture this model: {type(e).__name__}: {e}"
    medians = interleaved(variants, rounds=7, number=number)
    print_ratios(f"W4 {name} (median of 7 interleaved rounds x {number} calls)", medians, notes=notes)


def main() -> None:
    header("W4: a transformer block and a small convolutional network")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 512)).astype(np.float32)
    compare("transformer block [128, 512] float32", transformer_block, x, transformer_params(512, 128, rng),
            ("exact",), number=5)
    images = rng.standard_normal((8, 3, 32, 32)).astype(np.float32)
    compare("conv + bn + relu network [8, 3, 32, 32] float32", conv_net, images, conv_params(rng),
            ("exact", "inference"), number=5)


if __name__ == "__main__":
    main()
