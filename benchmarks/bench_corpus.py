"""The benchmark corpus (``benchmarks/corpus/``): every kernel eagerly and through ``graph_lab.compile``.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_corpus.py [--only NAME] [--quick] [--rounds N] [--control]
        [--peers] [--peer-limit S] [--markdown] [--strict] [--cpu-time]

For each kernel, first correctness: the kernel runs eagerly and compiled on two fresh copies of the same inputs,
twice (the second call with other data of the same shapes), and the results and the final contents of every
argument array (inside lists, dicts and objects too) must be equal bit for bit. A difference is reported as
``WRONG`` with the first mismatch, an exception from the compiled call as ``CRASH: type: message``, and a
function that gave up and runs eagerly as ``eager: reason``; a wrong kernel is timed all the same, but left out of
the geometric mean. The one difference that is not called wrong is ``ulps``: the fused backend's C kernels call
libmvec's transcendental functions, a few ulps from NumPy's (documented in ``graph_lab/backends/tolerance.py``);
a kernel whose results are within that tolerance, and bit for bit eager's with ``backend="codegen"``, says so. Then what capture did on the last call (graphs run, graph breaks run) and over all calls
(captures, recompiles), and the time: eager and compiled interleaved, each call timed alone after an untimed
call of the same variant and the untimed restore of its inputs, one call of each per round, the ratio the median
of the rounds' ratios (``harness.paired_rounds``); each variant's inputs laid out in memory alike
(``corpus/placement.py``), malloc's thresholds fixed for the run (``harness.steady_malloc``), the garbage
collected at the start of each round. Why each of these: docs/corpus.md, "Method".

Before the timed rounds the compiled function is warmed up, as a JIT is: called (untimed, on restored inputs,
back to back as the timed calls are) until the way its cache hits run is decided
(``graph_lab/frontends/dynamo/way_choice.py``: the first cache hits alternate between the graphs and the original
function), at most ``SETTLE_CALLS`` calls. Without it those calls, half of them on the slower way, fall in the
timed rounds.

``--only NAME``: one kernel or one family (``stencil``, ``linalg``, ``simulation``, ``numpy-api``, ``model``), or
several, separated by commas;
``--quick``: 7 rounds; ``--rounds N``: N rounds (41 by default); ``--control``: eager against itself too
(the same function on its own copy of the inputs, interleaved with the others): how far apart two timings of the
same code come out in this run, the noise any other ratio carries;
``--peers`` (the default when ``GRAPH_LAB_BENCH_PEERS=1``, which ``python3 dev.py bench
--peers`` sets): the peers too, when installed (``corpus/peers.py``): ``torch.compile`` on the same NumPy code and
``jax.jit`` on the jax.numpy ports of ``corpus/jax_ports/``, each checked against eager first and timed interleaved
with eager and compiled; ``--peer-limit S``: the limit on a peer's first call (compile) per kernel (default 120 s);
``--markdown``: the table as Markdown (for docs/corpus.md); ``--strict``: exit status 1 on any WRONG or CRASH.
BLAS runs on one thread unless ``OPENBLAS_NUM_THREADS`` is set (see below). ``--cpu-time``: time the process's
CPU time instead of wall time (on a machine other jobs load, time spent descheduled is left out; every thread's
CPU time is counted, so a kernel that runs on two threads is charged for both).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import sys
import time

# BLAS on one thread (unless the caller says otherwise), set before NumPy loads it: on a machine shared with other
# jobs, a multi-threaded BLAS call waits for whichever of its threads is descheduled (measured here: a 100x120 by
# 120x110 product, 54 us median, took 30-50 ms in most calls of a run under load; on one thread, at most 0.7 ms).
# Eager and compiled code call the same BLAS, so the ratio compares like with like.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from dataclasses import dataclass, field

from harness import fmt_time, machine, median_ratio, optional_versions, paired_rounds, steady_malloc

import graph_lab
from corpus import CORPUS, MUTATION_FAMILIES, Kernel
from corpus.check import capture_stats, compiled_functions, quietly, restore, verdict
from corpus.placement import placed
from corpus.peers import COMPILE_LIMIT_S, load_peers
from graph_lab.console import print_header, print_table


@dataclass
class Row:
    kernel: Kernel
    status: str = "ok"
    graphs: int = 0
    breaks: int = 0
    captures: int = 0
    recompiles: int = 0
    compile_s: float = 0.0
    eager_s: float = math.nan
    compiled_s: float = math.nan
    peer_s: dict[str, float] = field(default_factory=dict)
    """Each peer's median seconds per call, for the peers that were timed."""
    peer_note: dict[str, str] = field(default_factory=dict)
    """Why a peer was not timed (it failed, differs, ran past the limit, has no port)."""
    peer_first_call_s: dict[str, float] = field(default_factory=dict)
    """Each peer's first call (its compile, and one run), wall time."""
    control_s: float = math.nan
    """``--control``: eager again, on its own inputs."""
    rounds: dict[str, list[float]] = field(default_factory=dict)
    """Each timed variant's seconds, round by round (``harness.paired_rounds``)."""
    first_break: str = ""
    way: str = ""
    """The way compile()'s cache hits ran at the end (``way_choice``): graphs or the function, and how decided."""
    settle_calls: int = 0
    """Untimed calls before the timed rounds, until the way was decided (``settle``)."""

    def speedup(self, variant: str) -> float:
        """eager's time over ``variant``'s: the median of the rounds' ratios (each of two calls made in the same
        round, moments apart), NaN for a variant not timed."""
        if variant not in self.rounds or "eager" not in self.rounds:
            return math.nan
        return median_ratio(self.rounds["eager"], self.rounds[variant])

    @property
    def ratio(self) -> float:
        return self.speedup("compiled")

    @property
    def counted(self) -> bool:
        """Whether the ratio enters the geometric mean (a wrong or crashing kernel's time means nothing)."""
        return not self.status.startswith(("WRONG", "CRASH")) and math.isfinite(self.ratio)


def check(kernel: Kernel, cf) -> Row:
    row = Row(kernel, verdict(kernel, cf))
    stats = capture_stats(cf)
    row.graphs, row.breaks = stats.graphs, stats.breaks
    row.first_break = stats.break_reasons[0] if stats.break_reasons else ""
    if row.status == "ok" and stats.eager_fallback:
        row.status = f"eager: {stats.eager_fallback.split('; ')[0]}"
    return row


def time_kernel(kernel: Kernel, variants: dict, rounds: int, clock) -> dict[str, list[float]]:
    """Seconds of each variant's call in each round; every call starts from the same inputs (restored untimed),
    each variant's own copy laid out in memory as the others' (``corpus/placement.py``)."""
    pristine = kernel.inputs()
    working = {name: placed(kernel.inputs()) for name in variants}
    calls = {name: (lambda fn=fn, args=working[name]: quietly(fn, args)) for name, fn in variants.items()}
    before = {name: (lambda args=working[name]: restore(args, pristine)) for name in variants}
    # One call per round and many rounds: on a shared machine a multi-threaded BLAS call now and then takes
    # 100x its usual time, and the median of single calls keeps such an outlier out where a mean would not.
    return paired_rounds(calls, rounds, before=before, clock=clock)


SETTLE_CALLS = 40
"""At most this many untimed calls to let the way choice settle (it needs at most ``2 * (WARM_UP + MAX_SAMPLES)``
cache hits for each capture)."""


def settle(kernel: Kernel, cf) -> int:
    """Call ``cf`` until neither it nor a function compiled for its graph breaks measures its way any more (or
    ``SETTLE_CALLS`` times), on inputs put back to the same data, as the timed calls are made: the calls made."""
    args, pristine = placed(kernel.inputs()), kernel.inputs()
    gc.collect()
    for n in range(SETTLE_CALLS):
        if not any(g.ways.measuring and g.eager_fallback is None for g in compiled_functions(cf)):
            return n
        restore(args, pristine)
        quietly(cf, args)
    return SETTLE_CALLS


def measure(kernel: Kernel, rounds: int, peers: list, clock, control: bool = False) -> Row:
    cf = graph_lab.compile(kernel.fn)
    row = check(kernel, cf)
    if row.status.startswith("CRASH"):
        return row
    row.settle_calls = settle(kernel, cf)
    variants = {"eager": kernel.fn, "compiled": cf}
    if control:
        variants["control"] = kernel.fn
    for peer in peers:
        prepared = peer.prepare(kernel)
        if math.isfinite(prepared.first_call_s):
            row.peer_first_call_s[peer.name] = prepared.first_call_s
        if prepared.fn is None:
            row.peer_note[peer.name] = prepared.note
        else:
            variants[peer.name] = prepared.fn
    row.rounds = time_kernel(kernel, variants, rounds, clock)
    medians = {name: statistics.median(times) for name, times in row.rounds.items()}
    row.eager_s, row.compiled_s = medians["eager"], medians["compiled"]
    row.peer_s = {peer.name: medians[peer.name] for peer in peers if peer.name in medians}
    row.control_s = medians.get("control", math.nan)
    stats = capture_stats(cf)
    row.captures, row.recompiles, row.compile_s = stats.captures, stats.recompiles, stats.compile_seconds
    row.way = way_of(cf)
    return row


def way_of(cf) -> str:
    """``graphs`` or ``function``, with ``predicted`` (clear without measuring) or ``measured`` and the measured
    ratio; ``eager`` for a function that gave up capturing."""
    ways = cf.ways
    if cf.eager_fallback:
        return "eager"
    if ways.measuring:
        return "measuring"
    if "measured" not in ways.reason:
        return f"{ways.way} (predicted)"
    g, f = (statistics.median(ways.samples[w]) for w in ("graphs", "function"))
    return f"{ways.way} (measured {f / g:.2f}x)"


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def _times(ratio: float) -> str:
    return f"{ratio:.2f}x" if math.isfinite(ratio) else "-"


def table(rows: list[Row], peers: list[str], control: bool = False) -> tuple[list[str], list[list[str]]]:
    headers = ["kernel", "family", "graphs", "breaks", "captures", "recompiles", "compile time", "eager", "compiled",
               "eager/compiled", "way"]
    headers += ["eager/eager (control)"] if control else []
    headers += [f"eager/{name}" for name in peers]
    headers += ["status"]
    body = []
    for r in rows:
        line = [r.kernel.name + (" *" if r.kernel.data_dependent else ""), r.kernel.family, str(r.graphs),
                str(r.breaks), str(r.captures), str(r.recompiles), fmt_time(r.compile_s), fmt_time(r.eager_s) if math.isfinite(r.eager_s) else "-",
                fmt_time(r.compiled_s) if math.isfinite(r.compiled_s) else "-",
                f"{r.ratio:.2f}x" if math.isfinite(r.ratio) else "-", r.way]
        if control:
            line.append(_times(r.speedup("control")))
        for name in peers:
            if name in r.peer_s:
                line.append(f"{r.speedup(name):.2f}x")
            else:
                note = r.peer_note.get(name, "-")
                line.append(note if len(note) <= 60 else note[:57] + "...")
        line.append(r.status if len(r.status) <= 90 else r.status[:87] + "...")
        body.append(line)
    return headers, body


def summary(rows: list[Row]) -> list[str]:
    counted = [r for r in rows if r.counted]
    mutation = [r.ratio for r in counted if r.kernel.family in MUTATION_FAMILIES]
    others = [r.ratio for r in counted if r.kernel.family not in MUTATION_FAMILIES]
    flow_free = [r for r in rows if not r.kernel.data_dependent]
    bad = [r for r in rows if r.status.startswith(("WRONG", "CRASH"))]
    return [
        f"{len(rows)} kernels ({sum(r.kernel.data_dependent for r in rows)} with data-dependent control flow, "
        f"marked *); one graph and no break: {sum(r.graphs == 1 and r.breaks == 0 for r in rows)} "
        f"(of the {len(flow_free)} without data-dependent control flow: "
        f"{sum(r.graphs == 1 and r.breaks == 0 for r in flow_free)})",
        f"WRONG: {sum(r.status.startswith('WRONG') for r in rows)}, CRASH: "
        f"{sum(r.status.startswith('CRASH') for r in rows)}, within the fused tolerance only: "
        f"{sum(r.status.startswith('ulps') for r in rows)}, running eagerly: "
        f"{sum(r.status.startswith('eager') for r in rows)}; slower than 0.95x eager: "
        f"{sum(r.ratio < 0.95 for r in counted)}",
        f"geometric mean eager/compiled: {_times(geometric_mean([r.ratio for r in counted]))} over {len(counted)} "
        f"kernels (WRONG and CRASH left out); mutation families {_times(geometric_mean(mutation))}, "
        f"the others {_times(geometric_mean(others))}",
    ] + control_summary(rows) + [f"!! {r.kernel.name}: {r.status}" for r in bad]


def control_summary(rows: list[Row]) -> list[str]:
    """With ``--control``: how the ratios of eager against itself spread (the noise of this run)."""
    ratios = sorted(r.speedup("control") for r in rows if math.isfinite(r.control_s))
    if not ratios:
        return []
    return [f"control, eager against itself: {_times(ratios[0])} to {_times(ratios[-1])}, below 0.95x: "
            f"{sum(x < 0.95 for x in ratios)}, above 1.05x: {sum(x > 1.05 for x in ratios)} of {len(ratios)}"]


def peer_summary(rows: list[Row], peers: list[str]) -> list[str]:
    """Each peer's geometric mean beside compile()'s on the same kernels, and the issue's goals, met or not."""
    counted = [r for r in rows if r.counted]
    ours = geometric_mean([r.ratio for r in counted])
    lines = [f"goal: geometric mean eager/compiled at least 2x: {'met' if ours >= 2 else 'not met'} "
             f"({_times(ours)} over {len(counted)} kernels)"]
    for name in peers:
        timed = [r for r in counted if name in r.peer_s]
        theirs = geometric_mean([r.speedup(name) for r in timed])
        same = geometric_mean([r.ratio for r in timed])
        faster = sum(r.compiled_s <= r.peer_s[name] for r in timed)
        first_calls = {r.kernel.name: r.peer_first_call_s[name] for r in rows if name in r.peer_first_call_s}
        slowest = max(first_calls, key=first_calls.get, default=None)
        lines.append(f"{name}: timed on {len(timed)} kernels, geometric mean eager/{name} {_times(theirs)} "
                     f"(compile() on the same kernels {_times(same)}; compile() at least as fast on {faster}); "
                     f"not timed on {len(rows) - len(timed)}; first calls (compile) "
                     f"{sum(first_calls.values()):.0f} s in all"
                     + (f", the longest {slowest} {first_calls[slowest]:.1f} s" if slowest else ""))
    if "torch.compile" in peers:
        timed = [r for r in counted if "torch.compile" in r.peer_s]
        theirs = geometric_mean([r.speedup("torch.compile") for r in timed])
        lines.append(f"goal: compile()'s geometric mean above torch.compile's: "
                     f"{'met' if ours > theirs else 'not met'} ({_times(ours)} over all {len(counted)} kernels, "
                     f"torch.compile {_times(theirs)} over the {len(timed)} it ran correctly)")
    if "jax.jit" in peers:
        for goal, names in (("a stencil time loop", ("jacobi_2d", "heat_3d")), ("an n-body simulation", ("nbody",))):
            timed = [r for r in rows if r.kernel.name in names and "jax.jit" in r.peer_s and r.counted]
            figures = ", ".join(f"{r.kernel.name} compile() {fmt_time(r.compiled_s)}, jax.jit "
                                f"{fmt_time(r.peer_s['jax.jit'])} ({r.peer_s['jax.jit'] / r.compiled_s:.2f}x)"
                                for r in timed)
            met = any(r.compiled_s <= r.peer_s["jax.jit"] for r in timed)
            lines.append(f"goal: {goal} at least as fast as jax.jit: {'met' if met else 'not met'} "
                         f"({figures or 'not timed'})")
    return lines


def print_markdown(headers: list[str], body: list[list[str]]) -> None:
    print("| " + " | ".join(headers) + " |")
    print("|" + "|".join("---" for _ in headers) + "|")
    for line in body:
        print("| " + " | ".join(cell.replace("|", "\\|") for cell in line) + " |")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="kernels or families, separated by commas")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--peers", action="store_true", default=os.environ.get("GRAPH_LAB_BENCH_PEERS") == "1")
    parser.add_argument("--peer-limit", type=float, default=COMPILE_LIMIT_S, metavar="S")
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--control", action="store_true")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--cpu-time", action="store_true")
    opts = parser.parse_args(argv)
    malloc = steady_malloc()  # (before any input is made)
    wanted = opts.only.split(",") if opts.only else None
    kernels = [k for k in CORPUS if wanted is None or k.name in wanted or k.family in wanted]
    if not kernels:
        print(f"bench_corpus: no kernel or family named {opts.only!r}", file=sys.stderr)
        return 2
    peers = []
    if opts.peers:
        peers, missing = load_peers(opts.peer_limit)
        for line in missing:
            print(f"--peers: {line}")
    print(f"graph_lab.compile on the benchmark corpus\nmachine: {machine()}; "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}; {malloc}; "
          f"{'process CPU time' if opts.cpu_time else 'wall time'}; {7 if opts.quick else opts.rounds} rounds\n")
    rows = []
    for k in kernels:
        start = time.perf_counter()
        rows.append(measure(k, 7 if opts.quick else opts.rounds, peers,
                            time.process_time if opts.cpu_time else time.perf_counter, opts.control))
        r = rows[-1]
        print(f"  {k.name}: {r.status}, {r.graphs} graph(s), {r.breaks} break(s), {r.way} after {r.settle_calls} calls"
              f"{', ' + format(r.ratio, '.2f') + 'x' if math.isfinite(r.ratio) else ''}"
              + "".join(f"; {name} {r.speedup(name):.2f}x (first call {r.peer_first_call_s[name]:.1f} s)"
                        for name in r.peer_s)
              + "".join(f"; {name}: {note}" for name, note in r.peer_note.items() if note != "no port")
              + (f", control {r.speedup('control'):.2f}x" if math.isfinite(r.control_s) else "")
              + f" ({time.perf_counter() - start:.1f} s)", flush=True)
    peer_names = [p.name for p in peers]
    headers, body = table(rows, peer_names, opts.control)
    lines = summary(rows) + (peer_summary(rows, peer_names) if peers else [])
    if opts.markdown:
        print_markdown(headers, body)
        print()
        for line in lines:
            print(f"- {line}")
    else:
        print_header("eager NumPy vs graph_lab.compile (interleaved, median)")
        print_table(headers, body)
        print()
        for line in lines:
            print(line)
    breaks = [r for r in rows if r.first_break]
    if breaks:
        print("\nThe first graph break of each kernel that has one:\n")
        for r in breaks:
            reason = " ".join(r.first_break.split())
            print(f"- {r.kernel.name}: {reason}" if opts.markdown else f"  {r.kernel.name}: {reason}")
    if "torch" in optional_versions() and not opts.peers:
        print("\n(torch is installed: --peers adds torch.compile)")
    bad = any(r.status.startswith(("WRONG", "CRASH")) for r in rows)
    return 1 if (bad and opts.strict) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
