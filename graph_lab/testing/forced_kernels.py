"""The fuzzer's programs with every fused kernel and every C program forced, judged bit for bit.

The cost model leaves the generator's small arrays to NumPy calls, so F1 never runs a fused C kernel or a C
program (``backends/c_programs.py``). These ways compile each graph with ``fuse="always"`` (every elementwise
group a kernel, every run of slice updates a C program, buffers planned at every size), through

- ``compile()`` as a user's call makes it: each segment's graph with its write-backs *donated*, so the graph
  writes into the caller's arrays in place (``backends/inplace.py``) and the C programs update them;
- ``trace``, for graphs without writes.

A kernel computes ``+ - * /``, comparisons, casts, sums and the rest bit for bit as NumPy does; only its calls of
libm's transcendental functions (``TRANSCENDENTAL``) may differ, within the fused backend's documented bounds
(``backends/tolerance.py``). So a program whose graphs hold none of those ops is compared exactly; one that does
and differs is judged by that bound, or failing it (a composition such as ``cos(exp(x))`` grows an input's
last bits) by the per-dtype tolerance table (``judge``).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

import numpy as np

from ..backends.compiled import compile_captured, compile_graph
from ..backends.options import FusedOptions
from ..backends.tolerance import GRAPH_ULP, allowed_error, mismatches, tolerance_for
from ..frontends.dynamo.mutation import donated_inputs
from ..frontends.dynamo.runtime import CompiledFunction
from .differential import Verdict, default_calls, differential, observe_calls
from .program import Program
from .ways import FRONTENDS, PIPELINES, Backend, Frontend, GraphCompiler, Way, _CompiledWith, way as way_named

FORCED = FusedOptions(fuse="always", min_buffer_bytes=0)
"""Every group a kernel and every statement run a C program, whatever their size."""

TRANSCENDENTAL = frozenset({"exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "pow", "sigmoid", "gelu",
                            "softmax", "log_softmax"})
"""Ops whose kernels call libm's vector functions (``c_kernels.VECTOR_MATH`` and the ops written with them; the
row kernels), where results may differ from NumPy's in the last bits. (``sqrt``, which kernels call too, is
correctly rounded: compared exactly.)"""


RAN: Counter = Counter()
"""Graphs compiled in this process, and how many of them call C kernels and C programs (the suite's figures)."""


def _counted(compiled):
    RAN["graphs"] += 1
    RAN["graphs with C kernels"] += bool(getattr(compiled, "kernels", ()))
    RAN["graphs with C programs"] += bool(getattr(compiled, "stencils", ()))
    return compiled


def _forced_graph(graph) -> Callable[[dict], list]:
    compiled = _counted(compile_graph(graph, backend="fused", passes="none", options=FORCED))
    return lambda inputs: compiled(**inputs)


class _CompiledForced(_CompiledWith):
    """``compile(fn)`` with each segment's graph through the ``exact`` passes and the fused backend with
    everything forced, its written-back inputs donated as compile() donates them."""

    def __init__(self, fn: Callable, compiler: GraphCompiler):
        CompiledFunction.__init__(self, fn, "codegen")  # (the graph compile() makes first is replaced)
        self.compiler = compiler

    def _capture(self, offset, inputs):
        seg = super(_CompiledWith, self)._capture(offset, inputs)
        self.compiler.ops |= {str(node.op) for node in seg.graph.nodes}
        seg.runner = _counted(compile_captured(seg.graph, backend="fused", passes="exact", verify=False,
                                               options=FORCED, donated=donated_inputs(seg))).run
        return seg


_COMPILE = Frontend("compile", _CompiledForced, keeps_side_effects=True, sees_python_state=True,
                    writes_arguments=True)


_BACKEND = Backend("fused_always", _forced_graph)
FORCED_WAYS = [Way(_COMPILE, PIPELINES["exact"], _BACKEND), Way(FRONTENDS["trace"], PIPELINES["none"], _BACKEND)]
"""compile() and trace with every kernel and C program forced, compared bit for bit (``judge`` re-judges)."""


def judge(program: Program) -> Verdict:
    """Run ``program`` through the forced ways, exactly; a way that differs having compiled an op of
    ``TRANSCENDENTAL`` is judged again by ``within_tolerance``: ``outcome.tolerance`` says by which rule it
    passed, "fused" or "table" (or failed)."""
    calls = default_calls(program)
    verdict = differential(program, FORCED_WAYS, calls)
    if verdict.discarded:
        return verdict
    for outcome in verdict.outcomes:
        if outcome.status == "mismatch" and outcome.ops & TRANSCENDENTAL:
            w = way_named(outcome.way)
            for rule in ("fused", "table"):
                problem = within_tolerance(program, w, calls, rule)
                if problem is None:
                    outcome.status, outcome.detail, outcome.tolerance = "ok", "", rule
                    break
            else:
                outcome.detail = problem
    return verdict


def within_tolerance(program: Program, w: Way, calls, rule: str) -> str | None:
    """Why ``w``'s results or final arguments are not close enough to eager's, or None. ``rule`` "fused": the
    fused backend's documented bound for a whole graph (``GRAPH_ULP["fused"]`` ulps of ``max(|value|, 1)``);
    "table": the per-dtype table (``TOLERANCES``, rtol and atol), for graphs that compose libm functions where
    an input's last bits grow (``cos(exp(x))``). Both in the precision of the program's narrowest float argument
    (a float32 result read as a Python float keeps float32's precision). Printing and state must be equal."""
    narrow = min((a.dtype for c in calls for a in c.args if isinstance(a, np.ndarray) and a.dtype.kind == "f"),
                 key=lambda d: d.itemsize, default=np.dtype(np.float64))
    eager = observe_calls(program.namespace(), calls)
    try:
        got = observe_calls(program.namespace(), calls, w.build)
    except Exception as e:
        return f"{type(e).__name__}: {e}"
    for k, (want, have) in enumerate(zip(eager, got)):
        if want.printed != have.printed or want.state != have.state:
            return f"call {k}: printing or state differ"
        for what, a, b in (("result", want.result, have.result), ("arguments", want.args, have.args)):
            problem = _leaves_within(a, b, narrow, rule)
            if problem:
                return f"call {k}, {what}: {problem}"
    return None


def _leaves_within(want, got, narrow: np.dtype, rule: str) -> str | None:
    if isinstance(want, dict) and isinstance(got, dict) and list(want) == list(got):
        return next((p for k in want if (p := _leaves_within(want[k], got[k], narrow, rule))), None)
    if isinstance(want, (list, tuple)) and type(want) is type(got) and len(want) == len(got):
        return next((p for a, b in zip(want, got) if (p := _leaves_within(a, b, narrow, rule))), None)
    w, g = np.asarray(want), np.asarray(got)  # (a frontend that is not strict may give a 0-d array for a float)
    python = isinstance(want, (bool, int, float, complex)) or isinstance(got, (bool, int, float, complex))
    if w.shape != g.shape or (w.dtype != g.dtype and not python):
        return f"{g.dtype}{list(g.shape)} where eager gives {w.dtype}{list(w.shape)}"
    if w.dtype.kind not in "fc":
        return None if np.array_equal(w, g) else f"{got!r:.80} where eager gives {want!r:.80}"
    precision = narrow if narrow.itemsize < w.dtype.itemsize else w.dtype
    g, w = g.astype(precision), w.astype(precision)
    if rule == "fused":
        return "; ".join(mismatches(g, w, GRAPH_ULP["fused"])) or None
    tol = tolerance_for(precision)
    finite = np.isfinite(w)
    if not np.array_equal(w[~finite], g[~finite], equal_nan=True) or \
            np.any(np.abs(g[finite] - w[finite]) > allowed_error(w[finite], tol)):
        return f"beyond rtol {tol.rtol} / atol {tol.atol} of the {precision} row"
    return None
