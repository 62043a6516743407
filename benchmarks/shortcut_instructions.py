"""What each speed-up module saves, in machine instructions counted by valgrind (callgrind): the call it speeds,
run with the speed-up and with the reference code it stands in for, on the W2 residual chain
``x = x + tanh(x @ W_i)`` ([4, 8], N layers). Counts do not depend on the machine's load, so a saving of a few
per cent is visible on a shared machine, where timings are not.

    PYTHONPATH=. python3 benchmarks/shortcut_instructions.py [--sizes=1,8,64] [CASE ...]

Each figure is the difference of two processes, one making ``reps`` calls after three warm-up calls and one
making none, divided by ``reps``: interpreter start-up and imports cancel out. A speed-up stays only while it
saves at least a tenth of the call it speeds; its module's docstring quotes the figure.

- ``passes``: a compile() first call (capture, passes, code generation), with ``passes/change_check.py``'s
  ``run_pipeline_on`` and with ``run_pipeline`` (the graph always copied).
- ``prepared``: one run of the traced chain's graph by ``backends/prepared.py``'s function and by the reference
  interpreter's ``execute``.
- ``lazy``: a LazyRunner capture (record, then run at ``materialize``), with the nodes run as the slice finds them
  and the graph made of the slice's own nodes, and with the graph copied and run by ``execute``.
- ``script-*``: a script() capture of the chain with each speed-up of ``frontends/script/kept_between_captures.py``
  and without it (``prepared``, ``parse``, ``ask`` on a chain with an ``if`` on tensor data per layer, ``verify``,
  ``bind``, ``gc``).
- ``infer-memo``: a trace() capture with ``ops.type_rule_memo.infer_static``'s memo and without.
- ``record-gc``: a trace() capture with the collector paused (``frontends/recording_shortcuts.gc_paused``) and
  running.
- ``dynamo-calls``: a compile() capture with ``frontends/dynamo/capture_shortcuts.py``'s context and with the
  reference ``CaptureContext``.

A case name followed by ``@compile`` (``infer-memo@compile``, ``record-gc@compile``) counts compile()'s first call
of the chain on the interpreter backend (capture, guards, ``prepare``) instead of trace().

Two processes of the same configuration can differ by several per cent per call (up to 8% was seen), so a saving
close to a tenth needs more ``reps`` to be told apart.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = (1, 8, 64)
CASES = ("passes", "prepared", "lazy", "script-prepared", "script-parse", "script-ask", "script-verify", "script-gc",
         "script-bind", "infer-memo", "record-gc", "dynamo-calls",
         "infer-memo@compile", "record-gc@compile", "dynamo-calls@compile")


def calls(case: str, n: int, speedup: bool):
    """The call to count, with the speed-up (``speedup``) or with the reference code in its place."""
    sys.path.insert(0, str(HERE))
    import numpy as np
    from bench_w2_capture import capture_compile, chain

    import graph_lab
    from graph_lab import trace
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((8, 8)) / 3 for _ in range(n)]
    x = rng.standard_normal((4, 8))
    if case == "passes":
        if not speedup:
            from graph_lab.backends import compiled
            from graph_lab.passes.manager import run_pipeline
            compiled.run_pipeline_on = run_pipeline
        return lambda: capture_compile(x, ws)
    if case == "prepared":
        from graph_lab.backends.prepared import prepare
        from graph_lab.backends.reference import execute
        graph = trace(chain, {"x": (4, 8)}, ws)
        inputs = {"x": x}
        if speedup:
            run = prepare(graph)
            return lambda: run(inputs)
        return lambda: [execute(graph, inputs)[v] for v in graph.outputs]
    if case == "lazy":
        from bench_w2_capture import capture_lazy

        from graph_lab import LazyRunner
        from graph_lab.backends.reference import execute
        if not speedup:
            class GeneralLazy(LazyRunner):  # an overridden ``_execute`` is never bypassed: the general path
                def _execute(self, graph, inputs):
                    env = execute(graph, inputs)
                    return [env[out] for out in graph.outputs]
            import bench_w2_capture
            bench_w2_capture.LazyRunner = GeneralLazy
        return lambda: capture_lazy(x, ws)
    if case.startswith("script-"):
        return script_call(case, ws, speedup)
    case, _, capture = case.partition("@")
    if case == "infer-memo" and not speedup:
        from graph_lab.frontends import recorder
        recorder.infer_static = lambda definition, types, attrs: definition.infer(types, attrs)
    elif case == "record-gc" and not speedup:
        from graph_lab.frontends.recording_shortcuts import gc_paused
        gc_paused.enabled = False
    elif case == "dynamo-calls" and not speedup:
        from graph_lab.frontends.dynamo import capture_loop
        from graph_lab.frontends.dynamo.capture import CaptureContext
        capture_loop.CAPTURE_CONTEXT = CaptureContext
    elif case not in ("infer-memo", "record-gc", "dynamo-calls"):
        raise ValueError(case)
    if capture == "compile":
        return lambda: graph_lab.compile(chain, backend="interpret")(x, ws)
    return lambda: trace(chain, {"x": (4, 8)}, ws)


def chain_with_branches(x, ws):
    """The chain with an if on tensor data in each layer (a cond node per layer)."""
    for w in ws:
        if (x @ w).sum() > 0:
            x = x + np.tanh(x @ w)
        else:
            x = x - np.tanh(x @ w)
    return x


def script_call(case: str, ws, speedup: bool):
    """A script() capture of the chain, with one of script's speed-ups switched off for ``speedup=False``."""
    import contextlib

    import graph_lab.frontends.script as script_module
    from bench_w2_capture import chain

    from graph_lab import script
    from graph_lab.frontends.script import kept_between_captures as kept
    prepared, parsed = kept._prepared, kept._parsed
    capture = lambda: script(chain, {"x": (4, 8)}, ws)  # noqa: E731
    if case == "script-bind":  # (on a capture that prepares anew: a kept Prepared binds without bind_by_name)
        if not speedup:
            signed = kept._signed
            kept._signed = lambda fn: (signed(fn)[0], None, None)
        return lambda: (prepared.clear(), capture())
    if case == "script-prepared":
        return capture if speedup else lambda: (prepared.clear(), capture())
    if case == "script-parse":  # (each capture prepares anew, as when the Prepared cache misses)
        return (lambda: (prepared.clear(), capture())) if speedup else \
            (lambda: (prepared.clear(), parsed.clear(), capture()))
    if case == "script-ask":  # (on a chain with an if on tensor data in each layer, which asks its questions)
        if not speedup:
            kept.RememberingSource.ask = kept.FunctionSource.ask
        return lambda: script(chain_with_branches, {"x": (4, 8)}, ws)
    if case == "script-verify" and not speedup:
        return lambda: capture().verify()
    if case == "script-gc" and not speedup:
        script_module.gc_paused = contextlib.nullcontext
    return capture


def child(case: str, n: int, speedup: bool, reps: int) -> None:
    fn = calls(case, n, speedup)
    for _ in range(3 + reps):
        fn()


def counted(case: str, n: int, speedup: bool, reps: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={os.path.join(tmp, 'out')}",
                              sys.executable, __file__, "--child", case, str(n), str(int(speedup)), str(reps)],
                             capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(HERE.parent), "PYTHONHASHSEED": "0"})
    found = re.search(r"Collected : (\d+)", run.stderr)
    if run.returncode != 0 or found is None:
        raise RuntimeError(f"valgrind failed for {case} N={n}: {run.stderr[-2000:]}")
    return int(found.group(1))


def reps_for(case: str, n: int) -> int:
    return max(4, (600 if case == "prepared" else 120) // n)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(argv[1], int(argv[2]), argv[3] == "1", int(argv[4]))
        return 0
    sizes = SIZES
    if argv[:1] and argv[0].startswith("--sizes="):  # e.g. --sizes=8: fewer processes to count
        sizes, argv = tuple(int(n) for n in argv[0].split("=", 1)[1].split(",")), argv[1:]
    cases = argv or list(CASES)
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        print(f"unknown cases {unknown}; choose from {list(CASES)}", file=sys.stderr)
        return 2
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: this benchmark counts instructions with it", file=sys.stderr)
        return 2
    jobs = [(c, n, s, r) for c in cases for n in sizes for s in (True, False) for r in (0, reps_for(c, n))]
    with ThreadPoolExecutor(max(1, min(2, os.cpu_count() or 1))) as pool:
        results = dict(zip(jobs, pool.map(lambda job: counted(*job), jobs)))
    print("instructions per call, with the speed-up and with the reference code (callgrind)")
    for c in cases:
        for n in sizes:
            reps = reps_for(c, n)
            per = {s: (results[(c, n, s, reps)] - results[(c, n, s, 0)]) / reps for s in (True, False)}
            saved = 1 - per[True] / per[False]
            print(f"  {c:16s} N={n:<3d} with {per[True] / 1e3:9.0f}k  without {per[False] / 1e3:9.0f}k  "
                  f"saves {saved:6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
