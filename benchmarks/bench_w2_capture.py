"""W2: capture time per node of residual chains ``x = x + tanh(x @ W_i)``, N layers on [4, 8], for N in
{1, 8, 64, 256, 1024}: trace, script (from the source, without running it), LazyRunner (recording and running
the graph), and compile() (bytecode capture, guards, passes and code generation: the first call), with torch.fx
and jax.make_jaxpr when installed. Flat columns mean capture grows linearly with the program.

    PYTHONPATH=. python3 benchmarks/bench_w2_capture.py
"""

from __future__ import annotations

import gc
import statistics
import time

import numpy as np

from harness import header, interleaved, optional_libraries, print_header, print_table

import graph_lab
from graph_lab import LazyRunner, trace

SIZES = (1, 8, 64, 256, 1024)


def chain(x, ws):
    for w in ws:
        x = x + np.tanh(x @ w)
    return x


def linear_fit(nodes: list[int], seconds: list[float]) -> tuple[float, float]:
    """(a, b) minimizing the sum of ((a + b * n - t) / t)^2: relative errors, so that the small captures weigh as
    much as the large ones."""
    w = [1.0 / t for t in seconds]
    # normal equations of the weighted least squares for (a, b)
    s00 = sum(wi * wi for wi in w)
    s01 = sum(wi * wi * n for wi, n in zip(w, nodes))
    s11 = sum(wi * wi * n * n for wi, n in zip(w, nodes))
    r0 = sum(wi * wi * t for wi, t in zip(w, seconds))
    r1 = sum(wi * wi * n * t for wi, n, t in zip(w, nodes, seconds))
    det = s00 * s11 - s01 * s01
    return (r0 * s11 - r1 * s01) / det, (s00 * r1 - s01 * r0) / det


def batch_size(fn, batch_seconds: float = 0.02) -> int:
    """How many calls of ``fn`` take about ``batch_seconds`` (one capture of 8 layers takes ~0.2 ms, too short to
    time alone against the clock's and the scheduler's noise)."""
    fn()
    start = time.perf_counter()
    fn()
    return max(1, int(batch_seconds / max(time.perf_counter() - start, 1e-9)))


def capture_trace(ws):
    return trace(chain, {"x": (4, 8)}, ws)


def capture_lazy(x, ws):
    lr = LazyRunner()
    t = lr.tensor(x)
    lr.materialize(chain(t, ws))
    return lr


def capture_compile(x, ws):
    compiled = graph_lab.compile(chain)  # a new function object each time: the first call captures
    compiled(x, ws)
    return compiled


def compile_phases(compiled) -> tuple[float, float]:
    """Seconds of a first call's two phases, as the compiled function records them: capture (the bytecode
    interpreted into the graph and its guards) and backend (passes, code generation)."""
    segments = [seg for entries in compiled.cache.values() for seg in entries]
    return sum(seg.compile_seconds for seg in segments), sum(seg.backend_seconds for seg in segments)


def torch_fx(n: int):
    torch = optional_libraries().get("torch")
    if torch is None:
        return None
    import torch.fx

    class Chain(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(8, 8)) for _ in range(n)])

        def forward(self, x):
            for w in self.ws:
                x = x + torch.tanh(x @ w)
            return x

    module = Chain()
    return lambda: torch.fx.symbolic_trace(module)


def jax_jaxpr(n: int, x, ws):
    jax = optional_libraries().get("jax")
    if jax is None:
        return None
    jnp = jax.numpy

    def fn(x, ws):
        for w in ws:
            x = x + jnp.tanh(x @ w)
        return x

    return lambda: jax.make_jaxpr(fn)(x, ws)


ROUNDS = 7


def measure(configs: dict[tuple[str, int], object]) -> dict[tuple[str, int], float]:
    """Median seconds per call of every (frontend, N), interleaved: each round times one batch of each in turn, so a
    drift of the machine's speed during the run (10-20% within minutes on this shared machine) moves every figure
    alike instead of tilting the per-node curve from the first N to the last.

    A graph is a web of Node <-> Value references, freed only by a collection of the cyclic GC. Each batch's time
    includes collecting the garbage its captures made (``collect=True``), and nothing else: the objects alive
    before the measurement are frozen (``gc.freeze``), so that collection scans only what the batch made, and
    the one before each batch (untimed) takes the garbage of the batch before. Without this, a batch of one
    1024-layer capture would be charged or not for its graph's collection by chance, and the batch after it for
    some of it."""
    numbers = {key: batch_size(fn) for key, fn in configs.items()}
    gc.collect()
    gc.freeze()
    try:
        return interleaved(configs, rounds=ROUNDS, number=numbers, collect=True)
    finally:
        gc.unfreeze()


def main() -> None:
    header("W2: capture time per node, residual chains x = x + tanh(x @ W_i) on [4, 8]")
    rng = np.random.default_rng(0)
    node_counts, inputs = [], []
    ours: dict[tuple[str, int], object] = {}
    phases: dict[int, list[tuple[float, float]]] = {n: [] for n in SIZES}  # of every compile() first call timed
    for n in SIZES:
        ws = [rng.standard_normal((8, 8)) / 3 for _ in range(n)]
        x = rng.standard_normal((4, 8))
        inputs.append((n, x, ws))
        nodes = trace(chain, {"x": (4, 8)}, ws).count()
        lr = capture_lazy(x, ws)
        assert lr.graphs == [nodes]
        node_counts.append(nodes)
        ours[("trace", n)] = lambda ws=ws: capture_trace(ws)
        ours[("script", n)] = lambda ws=ws: graph_lab.script(chain, {"x": (4, 8)}, ws)
        ours[("LazyRunner (record + run)", n)] = lambda x=x, ws=ws: capture_lazy(x, ws)
        ours[("compile() first call", n)] = lambda x=x, ws=ws, n=n: phases[n].append(
            compile_phases(capture_compile(x, ws)))
    medians = measure(ours)
    # The peers come after every graph_lab figure: importing torch and jax makes the process hold ten times more
    # objects (~230,000 against ~24,000), and each full pass of the cyclic GC, which any capture's garbage
    # triggers now and then, then takes longer (measured: trace 5-11% slower per node with them imported).
    peers: dict[tuple[str, int], object] = {}
    for n, x, ws in inputs:
        fx = torch_fx(n)
        if fx is not None:
            peers[("torch.fx symbolic_trace", n)] = fx
        jaxpr = jax_jaxpr(n, x, ws)
        if jaxpr is not None:
            peers[("jax.make_jaxpr", n)] = jaxpr
    if peers:
        medians.update(measure(peers))
    times: dict[str, list[float]] = {}
    for (name, n), seconds in medians.items():
        times.setdefault(name, []).append(seconds)
        if name == "compile() first call":
            times.setdefault("of which capture", []).append(statistics.median([c for c, _ in phases[n]]))
            times.setdefault("of which backend", []).append(statistics.median([b for _, b in phases[n]]))
    per_node = {name: [t / nodes for t, nodes in zip(v, node_counts)] for name, v in times.items()}
    rows = [[str(n), str(nodes)] + [f"{per_node[name][i] * 1e6:.1f}" for name in per_node]
            for i, (n, nodes) in enumerate(zip(SIZES, node_counts))]
    print_header(f"microseconds per node (median of {ROUNDS} interleaved rounds, each a batch of captures of ~20 ms)")
    print_table(["layers", "nodes"] + list(per_node), rows)
    print("(compile()'s first call also runs the graph; its capture and backend phases are as the compiled function "
          "records them in each of the first calls timed: their medians)")
    print("\nlinear fit of the time of one capture, a + b * nodes, over N = 1 .. 1024 (least squares, weighted so "
          "each N counts alike):")
    for name, v in per_node.items():
        a, b = linear_fit(node_counts, [t * n for t, n in zip(v, node_counts)])
        print(f"  {name}: {a * 1e6:.0f} us + {b * 1e6:.1f} us per node")
    flat = {name: max(v[1:]) / min(v[1:]) for name, v in per_node.items()}
    print("\nspread from N = 8 to N = 1024 (max / min of us per node): "
          + ", ".join(f"{name} {ratio:.2f}" for name, ratio in flat.items()))


if __name__ == "__main__":
    main()
