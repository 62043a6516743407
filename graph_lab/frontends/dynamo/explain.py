"""``explain(fn)(*args)``: compile ``fn``, call it once, and report what capture did and why.

The report lists each graph with its op count, each graph break with its reason, line, bytecode instruction
and a hint, every guard with the line it came from, the compile time, and the stitching code: readable Python
showing the order in which graphs, guards and the Python at the breaks run (TorchDynamo keeps this in bytecode).
"""

from __future__ import annotations

import types
from typing import Any, Callable
from dataclasses import dataclass, field

from .loop_regions import loop_notes
from .runtime import CompiledFunction


@dataclass
class BreakInfo:
    reason: str
    line: str
    instruction: str
    hint: str
    code: str


@dataclass
class ExplainReport:
    function: str
    graph_count: int
    graph_break_count: int
    breaks: list[BreakInfo]
    ops_per_graph: list[int]
    guards: list[str]
    compile_seconds: float
    """Seconds spent capturing (bytecode into graphs and guards), all segments together."""
    code: str
    graphs: list = field(default_factory=list)
    backend_seconds: float = 0.0
    """Seconds ``compile_graph`` took to make the graphs runnable (passes, code generation, kernels)."""
    fast_path: str = ""
    """The generated function a cache hit runs (guards, graph call and result in one), or why there is none."""
    eager_fallback: str = ""
    """Why compile() could not interpret the function at all (so it ran eagerly), or "" when it could."""
    backends: list = field(default_factory=list)
    """For each graph, how the backend runs it and why (``CompiledGraph.how_it_runs``)."""
    way: str = ""
    """Which way cache hits run, the graphs or the original function, and why (``way_choice``): the prediction
    for this call, and for a compiled function passed to explain() that has run, what its measurement chose."""
    loops: list = field(default_factory=list)
    """For each loop of at least ``loop_regions.MIN_TRIPS`` iterations: kept as a ``fori_loop`` region, or why
    it was unrolled."""

    def __str__(self) -> str:
        lines = [f"explain({self.function}): runs eagerly, not compiled: {self.eager_fallback}"] \
            if self.eager_fallback else []
        lines += [f"explain({self.function}): {self.graph_count} graph(s), {self.graph_break_count} graph break(s), "
                 f"ops per graph {self.ops_per_graph}, captured in {self.compile_seconds * 1e3:.1f} ms, "
                 f"backend {self.backend_seconds * 1e3:.1f} ms"]
        for i, b in enumerate(self.breaks, 1):
            lines.append(f"  break {i} at {b.line} ({b.instruction}): {b.reason}")
            if b.code:
                lines.append(f"      `{b.code}`")
            if b.hint:
                lines.append(f"      hint: {b.hint}")
        for i, how in enumerate(self.backends):
            lines.append(f"  graph {i} runs as {how}")
        lines += [f"  {line}" for line in self.way.splitlines()]
        lines += [f"  {note}" for note in self.loops]
        lines.append(f"  guards ({len(self.guards)}):")
        lines += [f"    {g}" for g in self.guards]
        lines.append("  stitching code:")
        lines += ["    " + line for line in self.code.splitlines()]
        if self.fast_path.startswith("def "):
            lines.append("  cache hits run one generated function: guards, graph and result (report.fast_path)")
        elif self.fast_path:
            lines.append(f"  cache hits take the general path: {self.fast_path}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """A notebook shows the report with each graph drawn (the viewer's drawing, inline, loading nothing)."""
        from ...viewer.notebook import explain_html  # the viewer is a higher layer, imported when a notebook asks
        return explain_html(self)


def explain(fn: Callable[..., Any]) -> Callable[..., ExplainReport]:
    """``explain(fn)(*args, **kwargs)``: compile a fresh copy of ``fn``, call it once, and report what happened.

    Parameters:
        fn: anything ``compile`` takes, or what it returned (the function it wraps is compiled afresh, so the
            report does not depend on that object's cache).

    Returns:
        A function that takes ``fn``'s arguments, calls it once compiled and returns an ``ExplainReport``: the
        graphs and their op counts, each graph break with its reason, line and hint, every guard with the line it
        came from, and the code that stitches the pieces together. ``str(report)`` prints all of it.
    """
    bound = ()
    if isinstance(fn, types.MethodType):  # a bound method, or what compile() made of one or of a callable object
        fn, bound = fn.__func__, (fn.__self__,)
    elif not isinstance(fn, (types.FunctionType, CompiledFunction, type)) and \
            isinstance(getattr(type(fn), "__call__", None), types.FunctionType):
        fn, bound = type(fn).__call__, (fn,)
    target = fn.fn if isinstance(fn, CompiledFunction) else fn
    # (what compile() returned is explained with its settings: its backend, its graph size limit...)
    settings = (fn.backend, False, fn.dynamic, fn.recompile_limit, fn.max_graph_nodes) \
        if isinstance(fn, CompiledFunction) else ()

    def run(*args, **kwargs) -> ExplainReport:
        cf = CompiledFunction(target, *settings)
        cf(*bound, *args, **kwargs)
        segments = [e.segment for e in cf.last_events]
        report = _report(target, segments)
        report.fast_path = cf.fast_path_source
        report.eager_fallback = cf.eager_fallback or ""
        if not report.eager_fallback:
            report.way = cf.ways.explain(cf)
            if isinstance(fn, CompiledFunction) and fn.ways.samples["graphs"]:
                report.way += f"\nthis compiled function's {fn.ways.describe()}"
        return report

    return run


def _report(fn, segments) -> ExplainReport:
    breaks, guards, graphs, backends, loops = [], [], [], [], []
    for seg in segments:
        loops += loop_notes(seg.graph)
        if seg.graph.count():
            graphs.append(seg.graph)
            compiled = getattr(seg.runner, "__self__", None)
            backends.append(compiled.how_it_runs() if hasattr(compiled, "how_it_runs") else "the reference interpreter")
        guards += [g.describe() for g in seg.guards.guards]
        if seg.end == "break":
            code = seg.break_loc.text() if seg.break_loc else ""
            breaks.append(BreakInfo(seg.break_reason, str(seg.break_loc), seg.break_instruction, seg.break_hint, code))
    return ExplainReport(fn.__qualname__, len(graphs), len(breaks), breaks, [g.count() for g in graphs], guards,
                         sum(s.compile_seconds for s in segments), stitching_code(fn, segments), graphs,
                         backend_seconds=sum(s.backend_seconds for s in segments), backends=backends,
                         loops=loops)


def stitching_code(fn, segments) -> str:
    """Readable Python for one call: which graph runs when, under which guards, and the Python between them."""
    params = ", ".join(fn.__code__.co_varnames[:fn.__code__.co_argcount])
    lines = [f"def {fn.__name__}({params}):  # as run by graph_lab.compile"]
    n_graph = 0
    for seg in segments:
        lines.append(f"    # segment from bytecode offset {seg.start}: {len(seg.guards.guards)} guard(s)")
        lines.append(f"    if not guards_{seg.start}({', '.join(sorted(_roots(seg)))}):")
        lines.append("        recompile()")
        if seg.graph.count():
            ins = ", ".join(n.attrs["name"] for n in seg.graph.input_nodes)
            outs = len(seg.graph.outputs)
            lines.append(f"    outputs = graph_{n_graph}({ins})  # {seg.graph.count()} ops, {outs} output(s)")
            n_graph += 1
        if seg.end == "return":
            lines.append("    return <rebuilt from the outputs>")
        else:
            code = seg.break_loc.text() if seg.break_loc else ""
            lines.append(f"    # graph break ({seg.break_reason})")
            lines.append(f"    run_as_python({seg.break_instruction!r})  # {seg.break_loc}: {code}")
    return "\n".join(lines)


def _roots(seg) -> set[str]:
    roots = set()
    for g in seg.guards.guards:
        text = g.source.describe()
        roots.add(text.split(".")[0].split("[")[0].replace("global ", "").replace("closure ", ""))
    return roots
