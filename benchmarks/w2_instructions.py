"""W2 in instructions: what one capture of the residual chain costs in machine instructions, counted by valgrind
(callgrind), and, with ``--cache``, in simulated cache misses and branch mispredictions (cachegrind). Counts do not
depend on the machine's load or clock, so they separate "the capture does more work per node at small N" from "the
same work runs slower per node at small N" -- which timings alone cannot on a shared machine.

    PYTHONPATH=. python3 benchmarks/w2_instructions.py [--cache] [trace script lazy compile]

Needs valgrind (not part of ``dev.py bench``; about 2-3 minutes per frontend on 2 CPUs, twice that with
``--cache``). Each figure is the difference of two processes, one running ``reps`` captures after three warm-up
captures and one running none, divided by ``reps``: interpreter start-up and imports cancel out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SIZES = (1, 8, 64, 256, 1024)
FRONTENDS = ("trace", "script", "lazy", "compile")
HERE = Path(__file__).resolve().parent


def child(which: str, n: int, reps: int) -> None:
    """Runs inside valgrind: ``reps`` captures of ``n`` layers (after three that warm the caches up)."""
    sys.path.insert(0, str(HERE))
    import numpy as np
    from bench_w2_capture import capture_compile, capture_lazy, capture_trace, chain

    import graph_lab
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((8, 8)) / 3 for _ in range(n)]
    x = rng.standard_normal((4, 8))
    fn = {"trace": lambda: capture_trace(ws), "script": lambda: graph_lab.script(chain, {"x": (4, 8)}, ws),
          "lazy": lambda: capture_lazy(x, ws), "compile": lambda: capture_compile(x, ws)}[which]
    for _ in range(3 + reps):
        fn()


COUNTERS = {  # cachegrind's summary lines -> our names
    "I refs": "instructions", "I1 misses": "I1 misses", "D1 misses": "D1 misses", "Mispredicts": "mispredicts"}


def counted(which: str, n: int, reps: int, cache: bool) -> dict[str, int]:
    """The counters of one child process."""
    tool = (["--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes"] if cache else ["--tool=callgrind"])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        run = subprocess.run(["valgrind", *tool, f"--{'cachegrind' if cache else 'callgrind'}-out-file={out}",
                              sys.executable, __file__, "--child", which, str(n), str(reps)],
                             capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(HERE.parent), "PYTHONHASHSEED": "0"})
    if run.returncode != 0:
        raise RuntimeError(f"valgrind failed for {which} N={n}: {run.stderr[-2000:]}")
    found = {}
    if cache:
        for line in run.stderr.splitlines():
            m = re.match(r"==\d+== (I +refs|I1 +misses|D1 +misses|Mispredicts):\s+([\d,]+)", line)
            if m:
                found[COUNTERS[re.sub(r" +", " ", m.group(1))]] = int(m.group(2).replace(",", ""))
    else:
        m = re.search(r"Collected : (\d+)", run.stderr)
        if m:
            found["instructions"] = int(m.group(1))
    if not found:
        raise RuntimeError(f"no counts in valgrind's output for {which} N={n}")
    return found


def reps_for(n: int) -> int:
    return max(4, 3072 // (3 * n))  # about 3,000 nodes captured per figure (start-up varies by ~1M instructions)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(argv[1], int(argv[2]), int(argv[3]))
        return 0
    cache = "--cache" in argv
    frontends = [a for a in argv if not a.startswith("--")] or list(FRONTENDS)
    unknown = [f for f in frontends if f not in FRONTENDS]
    if unknown:
        print(f"unknown frontends {unknown}; choose from {list(FRONTENDS)}", file=sys.stderr)
        return 2
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: this benchmark counts instructions with it (apt install valgrind)",
              file=sys.stderr)
        return 2
    jobs = [(f, n, r) for f in frontends for n in SIZES for r in (0, reps_for(n))]
    with ThreadPoolExecutor(max(1, min(2, os.cpu_count() or 1))) as pool:
        results = dict(zip(jobs, pool.map(lambda job: counted(*job, cache), jobs)))
    names = ["instructions"] + (["I1 misses", "D1 misses", "mispredicts"] if cache else [])
    print(f"W2 chain: counts per node of one capture ({'cachegrind' if cache else 'callgrind'}; "
          f"nodes = 3 per layer; 'lazy' records and runs; 'compile' is the whole first call)")
    for f in frontends:
        per_node = {}
        for n in SIZES:
            reps = reps_for(n)
            after, before = results[(f, n, reps)], results[(f, n, 0)]
            per_node[n] = {k: (after[k] - before[k]) / reps / (3 * n) for k in names}
        cells = "  ".join(f"N={n}: " + " / ".join(f"{per_node[n][k] / 1e3:.1f}k" if k == "instructions"
                                                   else f"{per_node[n][k]:.0f}" for k in names) for n in SIZES)
        inst = [per_node[n]["instructions"] for n in SIZES[1:]]
        # fixed + per node, from N = 8 and N = 256 (instruction counts are exact: two points suffice)
        slope = (per_node[256]["instructions"] * 768 - per_node[8]["instructions"] * 24) / (768 - 24)
        fixed = per_node[8]["instructions"] * 24 - slope * 24
        print(f"  {f}: {cells}")
        print(f"     spread N = 8..1024 {max(inst) / min(inst):.2f}; fixed {fixed / 1e3:.0f}k + {slope / 1e3:.1f}k "
              f"per node" + (f"  ({' / '.join(names)})" if cache else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
