"""W5: the row kernels alone: ``softmax``, ``log_softmax`` and ``layer_norm`` (with weight and bias) over the last
axis of [128, 512] and [4096, 1024] float32, eager NumPy against codegen and the fused backend as its cost model
chooses, and forced onto 1 and 2 threads. Each line of the cost model's decision is printed under its table.

    PYTHONPATH=. python3 benchmarks/bench_w5_row_kernels.py
"""

from __future__ import annotations

import numpy as np

from harness import backend_variants, header, interleaved, print_ratios

from graph_lab import F, trace

SHAPES = [(128, 512), (4096, 1024)]


def ops(dim: int, rng) -> dict:
    w = rng.standard_normal(dim).astype(np.float32)
    b = rng.standard_normal(dim).astype(np.float32)
    return {"softmax": lambda x: F.softmax(x, axis=-1), "log_softmax": lambda x: F.log_softmax(x, axis=-1),
            "layer_norm": lambda x: F.layer_norm(x, w, b)}


def compare(name: str, fn, x, number: int) -> None:
    variants, auto = backend_variants(fn, trace(fn, {"x": (x.shape, "float32")}), x)
    medians = interleaved(variants, rounds=9, number=number)
    print_ratios(f"W5 {name} {list(x.shape)} float32 (median of 9 interleaved rounds x {number} calls)", medians)
    print("cost model: " + "; ".join(grp.decision.reason for grp in auto.partition.groups))


def main() -> None:
    header("W5: row kernels (softmax, log_softmax, layer_norm over the last axis)")
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        x = rng.standard_normal(shape).astype(np.float32)
        number = 20 if x.size < 1 << 20 else 4
        for name, fn in ops(shape[-1], rng).items():
            compare(name, fn, x, number)


if __name__ == "__main__":
    main()
