"""W4: a transformer block (causal multi-head attention, MLP with GELU, layer norms) at [128, 512] float32, and a
small convolutional network (conv + batch norm + ReLU, pooling) on [8, 3, 32, 32] float32: eager NumPy against
each backend and graph_lab.compile; for the convolutional network also the ``inference`` pipeline, which folds
each batch norm into its convolution. With torch or jax installed, the same models through torch eager,
torch.compile and jax.jit (each checked against eager NumPy first).

    PYTHONPATH=. python3 benchmarks/bench_w4_models.py
"""

from __future__ import annotations

import math

import numpy as np

from harness import header, interleaved, optional_libraries, print_ratios

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


# --- the same two models for torch and jax (measured beside graph_lab when installed; never required)


def torch_transformer_block(torch, x, p):
    fn = torch.nn.functional
    seq, dim = x.shape
    head = dim // HEADS
    h = fn.layer_norm(x, (dim,), p["ln1_w"], p["ln1_b"], eps=1e-5)
    q = (h @ p["wq"]).reshape(seq, HEADS, head).transpose(0, 1)
    k = (h @ p["wk"]).reshape(seq, HEADS, head).transpose(0, 1)
    v = (h @ p["wv"]).reshape(seq, HEADS, head).transpose(0, 1)
    scores = q @ k.transpose(1, 2) * (1.0 / math.sqrt(head))
    scores = torch.where(p["causal"], scores, -math.inf)
    attention = (torch.softmax(scores, dim=-1) @ v).transpose(0, 1).reshape(seq, dim)
    x = x + attention @ p["wo"] + p["bo"]
    h = fn.layer_norm(x, (dim,), p["ln2_w"], p["ln2_b"], eps=1e-5)
    return x + fn.gelu(h @ p["w1"] + p["b1"], approximate="tanh") @ p["w2"] + p["b2"]


def torch_conv_net(torch, x, p):
    fn = torch.nn.functional
    h = fn.relu(fn.batch_norm(fn.conv2d(x, p["c1"], padding=1), p["m1"], p["v1"], p["g1"], p["b1"], eps=1e-5))
    h = fn.max_pool2d(h, 2)
    h = fn.relu(fn.batch_norm(fn.conv2d(h, p["c2"], padding=1), p["m2"], p["v2"], p["g2"], p["b2"], eps=1e-5))
    h = fn.avg_pool2d(h, 2)
    return h.reshape(h.shape[0], -1) @ p["fc"]


def jax_transformer_block(jax, x, p):
    jnp = jax.numpy
    seq, dim = x.shape
    head = dim // HEADS

    def layer_norm(x, w, b):
        mean = x.mean(axis=-1, keepdims=True)
        centered = x - mean
        return centered / jnp.sqrt((centered * centered).mean(axis=-1, keepdims=True) + 1e-5) * w + b

    h = layer_norm(x, p["ln1_w"], p["ln1_b"])
    q = (h @ p["wq"]).reshape(seq, HEADS, head).transpose(1, 0, 2)
    k = (h @ p["wk"]).reshape(seq, HEADS, head).transpose(1, 0, 2)
    v = (h @ p["wv"]).reshape(seq, HEADS, head).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1) * (1.0 / math.sqrt(head))
    scores = jnp.where(p["causal"], scores, -jnp.inf)
    attention = (jax.nn.softmax(scores, axis=-1) @ v).transpose(1, 0, 2).reshape(seq, dim)
    x = x + attention @ p["wo"] + p["bo"]
    h = layer_norm(x, p["ln2_w"], p["ln2_b"])
    return x + jax.nn.gelu(h @ p["w1"] + p["b1"], approximate=True) @ p["w2"] + p["b2"]


def jax_conv_net(jax, x, p):
    jnp, lax = jax.numpy, jax.lax

    def conv_bn_relu(h, i):
        h = lax.conv_general_dilated(h, p[f"c{i}"], (1, 1), ((1, 1), (1, 1)),
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
        shape = (1, -1, 1, 1)
        h = (h - p[f"m{i}"].reshape(shape)) / jnp.sqrt(p[f"v{i}"].reshape(shape) + 1e-5)
        return jnp.maximum(h * p[f"g{i}"].reshape(shape) + p[f"b{i}"].reshape(shape), 0)

    h = conv_bn_relu(x, 1)
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    h = conv_bn_relu(h, 2)
    h = lax.reduce_window(h, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID") / 4.0
    return h.reshape(h.shape[0], -1) @ p["fc"]


PEERS = {"transformer": (torch_transformer_block, jax_transformer_block), "conv": (torch_conv_net, jax_conv_net)}


def peer_variants(model: str, x, p, expected) -> dict:
    """torch eager, torch.compile and jax.jit of the model, each first checked against eager NumPy (float32: within
    1e-3 relative to the largest value)."""
    libraries = optional_libraries()
    torch_model, jax_model = PEERS[model]
    scale = float(np.abs(expected).max())
    variants = {}

    def check(name, result):
        error = float(np.abs(np.asarray(result, np.float32) - expected).max())
        assert error <= 1e-3 * scale, f"{name} differs from eager NumPy by {error} (largest value {scale})"

    torch = libraries.get("torch")
    if torch is not None:
        tx = torch.from_numpy(x)
        tp = {k: torch.from_numpy(v) for k, v in p.items()}
        compiled = torch.compile(lambda a: torch_model(torch, a, tp))
        with torch.no_grad():
            check("torch eager", torch_model(torch, tx, tp).numpy())
            check("torch.compile", compiled(tx).numpy())
        variants["torch eager"] = lambda: torch_model(torch, tx, tp)
        variants["torch.compile"] = lambda: compiled(tx)
    jax = libraries.get("jax")
    if jax is not None:
        jx = jax.numpy.asarray(x)
        jp = {k: jax.numpy.asarray(v) for k, v in p.items()}
        jitted = jax.jit(lambda a: jax_model(jax, a, jp))
        check("jax.jit", jitted(jx))
        variants["jax.jit"] = lambda: jitted(jx).block_until_ready()
    return variants


def compare(name: str, fn, x, p, pipelines: tuple[str, ...], number: int, model: str) -> None:
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
    torch = optional_libraries().get("torch")
    variants.update(peer_variants(model, x, p, expected))
    if torch is not None:  # (inference: no autograd bookkeeping, as NumPy has none)
        variants = {k: (lambda f=f: _no_grad(torch, f)) if k.startswith("torch") else f for k, f in variants.items()}
    medians = interleaved(variants, rounds=7, number=number)
    print_ratios(f"W4 {name} (median of 7 interleaved rounds x {number} calls)", medians, notes=notes)


def _no_grad(torch, f):
    with torch.no_grad():
        return f()


def main() -> None:
    header("W4: a transformer block and a small convolutional network")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 512)).astype(np.float32)
    compare("transformer block [128, 512] float32", transformer_block, x, transformer_params(512, 128, rng),
            ("exact",), number=5, model="transformer")
    images = rng.standard_normal((8, 3, 32, 32)).astype(np.float32)
    compare("conv + bn + relu network [8, 3, 32, 32] float32", conv_net, images, conv_params(rng),
            ("exact", "inference"), number=5, model="conv")


if __name__ == "__main__":
    main()
