"""W1: the seed's gelu_mlp, tiny ([4,8] x [8,16] x [16,8]) and large ([512,1024] x [1024,4096] x [4096,1024]),
float32: eager NumPy against each backend, graph_lab.compile, and torch / jax when installed.

    python3 dev.py bench                      (every benchmark)
    PYTHONPATH=. python3 benchmarks/bench_w1_gelu_mlp.py
"""

from __future__ import annotations

import math

import numpy as np

from harness import header, heap_trim, interleaved, optional_libraries, page_faults, print_ratios

import graph_lab
from graph_lab import F, compile_graph, trace


def gelu_mlp(x, p):
    h = x @ p["W1"]
    g = 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return g @ p["W2"]


def torch_variants(x, p) -> dict:
    torch = optional_libraries().get("torch")
    if torch is None:
        return {}
    tx, w1, w2 = (torch.from_numpy(a) for a in (x, p["W1"], p["W2"]))

    def fn(x, w1, w2):
        h = x @ w1
        return (0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))) @ w2

    compiled = torch.compile(fn)
    compiled(tx, w1, w2)
    return {"torch eager": lambda: fn(tx, w1, w2), "torch.compile": lambda: compiled(tx, w1, w2)}


def jax_variants(x, p) -> dict:
    jax = optional_libraries().get("jax")
    if jax is None:
        return {}
    jnp = jax.numpy
    jx, w1, w2 = (jnp.asarray(a) for a in (x, p["W1"], p["W2"]))

    def fn(x, w1, w2):
        h = x @ w1
        return (0.5 * h * (1.0 + jnp.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))) @ w2

    jitted = jax.jit(fn)
    jitted(jx, w1, w2).block_until_ready()
    return {"jax.jit": lambda: jitted(jx, w1, w2).block_until_ready()}


def run(size: str, shapes: tuple[int, int, int, int], number: int) -> None:
    n, d, hidden, out = shapes
    rng = np.random.default_rng(0)
    p = {"W1": (rng.standard_normal((d, hidden)) / math.sqrt(d)).astype(np.float32),
         "W2": (rng.standard_normal((hidden, out)) / math.sqrt(hidden)).astype(np.float32)}
    x = rng.standard_normal((n, d)).astype(np.float32)
    g = trace(gelu_mlp, {"x": ((n, d), "float32")}, p)
    backends = {name: compile_graph(g, name) for name in ("interpret", "codegen", "fused")}
    dynamo = graph_lab.compile(gelu_mlp)
    expected = gelu_mlp(x, p)
    assert np.array_equal(backends["codegen"](x)[0], expected) and np.array_equal(dynamo(x, p), dynamo(x, p))
    variants = {"eager NumPy": lambda: gelu_mlp(x, p)}
    variants.update({f"graph_lab {name}": (lambda c=c: c(x)) for name, c in backends.items()})
    variants["graph_lab.compile (cache hit)"] = lambda: dynamo(x, p)
    trim = heap_trim() if number == 1 else None
    before = {}
    if trim is not None:
        # Large arrays: eager NumPy's temporaries (8 MB each) come from the C heap. In a process that holds little
        # else, glibc hands them back to the OS after each call and the next call page-faults them in again
        # (measured: 2,100-4,000 faults, 43-48 ms a call); interleaved with the other variants the heap mostly keeps
        # them (0-900 faults, 38-41 ms). These two variants start every call from a trimmed heap: the small program's case.
        for name in ("eager NumPy", "graph_lab.compile (cache hit)"):
            variants[f"{name}, heap trimmed first"] = variants[name]
            before[f"{name}, heap trimmed first"] = trim
    variants.update(torch_variants(x, p))
    variants.update(jax_variants(x, p))
    medians = interleaved(variants, rounds=7, number=number, before=before)
    kernels = backends["fused"].kernels
    notes = {"graph_lab fused": (f"{len(kernels)} kernel(s): " + "; ".join(k.decision.reason for k in kernels)
                                 if kernels else "cost model: " + "; ".join(
                                     g.decision.reason for g in backends["fused"].partition.groups))}
    if number == 1:  # (large arrays: whether the allocator hands the temporaries' memory back to the OS matters)
        for name, faults in page_faults(variants, before=before).items():
            notes[name] = f"{faults} page faults per call" + (f"; {notes[name]}" if name in notes else "")
        trimmed = "graph_lab.compile (cache hit), heap trimmed first"
        if trimmed in medians:
            ratio = medians["eager NumPy, heap trimmed first"] / medians[trimmed]
            notes[trimmed] += f"; {ratio:.2f}x the trimmed eager NumPy"
    print_ratios(f"W1 gelu_mlp {size} {list(shapes)} float32 (median of 7 rounds x {number} calls)", medians,
                 notes=notes)


if __name__ == "__main__":
    header("W1: gelu_mlp, eager NumPy vs compiled graphs")
    run("tiny", (4, 8, 16, 8), number=2000)
    run("large", (512, 1024, 4096, 1024), number=1)
