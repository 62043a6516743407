"""The same figures on each CPython version, side by side: this script runs itself under each of 3.11, 3.12 and
3.13 that dev.py finds (in the venv dev.py makes for it) and prints one column per version.

1. The cache-hit cost of the seed's gelu_mlp on [4, 8] (float64; W1 [8, 16], W2 [16, 8]), in microseconds per
   call and over eager NumPy's on the same version: a traced and a scripted graph reused after ``check_guards``
   (codegen backend), a ``LazyRunner`` (it records the calls again, finds its graph in the structure cache and runs
   it), and ``compile()``'s cache hit. Where ``compile()`` cannot interpret the function on a version (no bytecode
   handlers for it) it runs eagerly: that column says so and gives the reason instead of a figure.
2. W2's capture cost per node: the residual chain ``x = x + tanh(x @ W_i)`` of 64 and 256 layers on [4, 8], for
   trace, script, LazyRunner (recording and running) and compile()'s first call (see bench_w2_capture.py).

The last columns divide each version's figure by 3.11's. The versions are measured one after the other, twice in
turn (3.11, 3.12, 3.13, 3.11, ...), and each figure is the smaller of its two runs' medians, so that a slow minute
of a shared machine does not fall on one version only.

    python3 benchmarks/bench_python_versions.py           (all versions found)
    python3 benchmarks/bench_python_versions.py --child   (this interpreter's figures as one JSON line)
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import warnings

import numpy as np

from harness import interleaved, machine, print_table

import graph_lab
from graph_lab import LazyRunner, check_guards, compile_graph, trace
from bench_compile_overhead import gelu_mlp, per_call_us
from bench_w2_capture import batch_size, capture_lazy, capture_trace, chain

LAYERS = (64, 256)
PASSES = 2


def compile_status(compiled) -> str | None:
    """None when compile() captured graphs; otherwise why it ran the function eagerly."""
    if compiled.captures:
        return None
    return f"eager fallback: {compiled.eager_fallback or 'no graph captured'}"


def cache_hits() -> tuple[dict[str, float], str | None]:
    """Microseconds per call of each way to reuse gelu_mlp's graph, and compile()'s fallback reason if any."""
    rng = np.random.default_rng(0)
    p = {"W1": rng.standard_normal((8, 16)), "W2": rng.standard_normal((16, 8))}
    x = rng.standard_normal((4, 8))
    inputs = {"x": x}
    expected = gelu_mlp(x, p)
    ways = {}
    for name, graph in (("trace", trace(gelu_mlp, {"x": (4, 8)}, p)),
                        ("script", graph_lab.script(gelu_mlp, {"x": (4, 8)}, p))):
        run = compile_graph(graph, "codegen")

        def reuse(graph=graph, run=run):
            assert check_guards(graph, inputs)
            return run(x)[0]
        ways[f"{name} graph: check_guards + codegen"] = reuse
    runner = LazyRunner()
    ways["LazyRunner (record, cache hit, run)"] = lambda: runner.materialize(gelu_mlp(runner.tensor(x), p))
    compiled = graph_lab.compile(gelu_mlp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a fallback warns; it is reported below instead)
        compiled(x, p)
    fallback = compile_status(compiled)
    if fallback is None:
        ways["compile() cache hit"] = lambda: compiled(x, p)
    for name, fn in ways.items():
        # the same NumPy calls in the same order on 64 elements: bit for bit eager's
        assert np.array_equal(fn(), expected), f"{name} differs from eager NumPy"
    times = {"eager NumPy": [], **{name: [] for name in ways}}
    for _ in range(7):  # interleaved rounds, median
        times["eager NumPy"].append(per_call_us(gelu_mlp, (x, p)))
        for name, fn in ways.items():
            times[name].append(per_call_us(fn, ()))
    return {name: float(np.median(t)) for name, t in times.items()}, fallback


def capture_costs() -> tuple[dict[str, float], str | None]:
    """Microseconds per node of one capture of W2's chain, by way and number of layers."""
    rng = np.random.default_rng(1)
    configs, nodes, fallback = {}, {}, None
    for n in LAYERS:
        ws = [rng.standard_normal((8, 8)) / 3 for _ in range(n)]
        x = rng.standard_normal((4, 8))
        nodes[n] = trace(chain, {"x": (4, 8)}, ws).count()
        configs[f"trace, {n} layers"] = lambda ws=ws: capture_trace(ws)
        configs[f"script, {n} layers"] = lambda ws=ws: graph_lab.script(chain, {"x": (4, 8)}, ws)
        configs[f"LazyRunner, {n} layers"] = lambda x=x, ws=ws: capture_lazy(x, ws)
        probe = graph_lab.compile(chain)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe(x, ws)
        fallback = fallback or compile_status(probe)
        if fallback is None:
            configs[f"compile() first call, {n} layers"] = lambda x=x, ws=ws: graph_lab.compile(chain)(x, ws)
    numbers = {name: batch_size(fn) for name, fn in configs.items()}
    seconds = interleaved(configs, rounds=5, number=numbers, collect=True)
    per_node = {name: t / nodes[int(name.rsplit(", ", 1)[1].split()[0])] * 1e6 for name, t in seconds.items()}
    return per_node, fallback


def child() -> None:
    hits, hit_fallback = cache_hits()
    capture, capture_fallback = capture_costs()
    print(json.dumps({"version": platform.python_version(), "machine": machine(), "hits": hits,
                      "capture": capture, "fallback": hit_fallback or capture_fallback}))


def run_child(python) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    result = subprocess.run([str(python), os.path.abspath(__file__), "--child"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(__file__)), env=env)
    if result.returncode != 0:
        raise SystemExit(f"bench_python_versions: the run under {python} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def merge(runs: list[dict]) -> dict:
    """One version's figures over its runs: the smallest median of each."""
    merged = dict(runs[0])
    for part in ("hits", "capture"):
        merged[part] = {name: min(r[part][name] for r in runs) for name in runs[0][part]}
    return merged


def side_by_side(results: list[dict], part: str, unit: str) -> None:
    names = list(dict.fromkeys(name for r in results for name in r[part]))
    base = results[0] if results[0]["version"].startswith("3.11.") else None
    header = ["", *(f"Python {r['version']} ({unit})" for r in results)]
    if base:
        header += [f"{r['version'].rsplit('.', 1)[0]} / 3.11" for r in results[1:]]
    rows = []
    for name in names:
        cells = [f"{r[part][name]:.2f}" if name in r[part] else "eager fallback" for r in results]
        if base:
            cells += [f"{r[part][name] / base[part][name]:.2f}" if name in r[part] and name in base[part] else "-"
                      for r in results[1:]]
        rows.append([name, *cells])
    print_table(header, rows)


def main() -> None:
    import dev  # (finds the interpreters and makes their venvs, as `python3 dev.py test --all-pythons` does)

    found = {minor: dev.find_python(minor) for minor in dev.SUPPORTED}
    pythons = {minor: dev.ensure_venv(".", p) for minor, p in found.items() if p}
    runs: dict[str, list[dict]] = {minor: [] for minor in pythons}
    for _ in range(PASSES):
        for minor, python in pythons.items():
            runs[minor].append(run_child(python))
    results = [merge(r) for r in runs.values()]
    print("graph_lab on each Python version, side by side")
    for r in results:
        print(f"  {r['version']}: {r['machine']}")
    for minor, p in found.items():
        if p is None:
            print(f"  {minor}: not found (looked at {dev.where_looked(minor)})")
    print("\ncache hit of gelu_mlp [4, 8] float64, us per call (median of 7 interleaved rounds of 2000 calls):")
    side_by_side(results, "hits", "us")
    print("\nthe same as cost over eager NumPy on each version, us per call:")
    overheads = [{**r, "hits": {k: v - r["hits"]["eager NumPy"] for k, v in r["hits"].items() if k != "eager NumPy"}}
                 for r in results]
    side_by_side(overheads, "hits", "us")
    print("\nW2 capture cost, us per node (median of 5 interleaved rounds, each a batch of ~20 ms):")
    side_by_side(results, "capture", "us/node")
    for r in results:
        if r["fallback"]:
            print(f"\nPython {r['version']}: compile() is not measured: {r['fallback']}")


if __name__ == "__main__":
    if "--child" in sys.argv[1:]:
        child()
    else:
        main()
