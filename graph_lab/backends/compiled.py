"""``compile_graph(g, backend=..., passes=...)``: a graph, optimized by a pass pipeline, made into a callable.

    cg = graph_lab.compile_graph(g, backend="codegen", passes="exact")
    y, = cg(x)                    # positional, in the graph's input order, or cg(x=x); a list like run()'s
    print(cg.source)              # the generated code
    print(cg.explain())           # passes, buffer reuse, and (fused) the partition with the cost model's reasons

Backends: ``interpret`` (the prepared reference interpreter), ``codegen`` (straight-line NumPy source with buffer
reuse), ``fused`` (codegen plus generated C kernels for elementwise chains, chosen by a cost model) and ``auto``
(``fused`` where a C compiler is found, else ``codegen``). Graphs from ``trace``, from ``LazyRunner.executed``,
built by hand or parsed from text all compile the same way; ``compile()`` runs its graphs through here.

``g`` is never changed: the pipeline works on a copy. Parameters may be passed by name to replace their stored
values, except after the ``inference`` pipeline, which freezes them into the code.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from ..errors import GraphExecutionError, GraphInputError
from ..ir.graph import Graph
from ..ops import SOURCE_OPS, Op
from ..passes.change_check import run_pipeline_on
from ..passes.manager import PassReport, run_pipeline
from ..ir.sizes import checked_sizes, is_symbolic_graph
from . import codegen, loop_bodies, python_source
from .options import MIN_BUFFER_BYTES, FusedOptions
from .prepared import prepare
from .reference import bind_inputs

BACKENDS = ("interpret", "codegen", "fused", "auto")


class CompiledGraph:
    """A callable made from a graph by a backend. Returns a list of arrays, as ``run`` does."""

    def __init__(self, graph: Graph, backend: str, pipeline, reports: list[PassReport]):
        self.graph = graph
        """The graph after the pass pipeline (what runs)."""
        self.backend = backend
        """The backend that made the code: interpret, codegen or fused."""
        self.pipeline = pipeline
        """The pass pipeline that ran, by name or as a list of passes."""
        self.reports = reports
        """One ``PassReport`` per pass."""
        input_nodes, param_nodes = python_source._source_nodes(graph)  # (graph.input_nodes, graph.param_nodes)
        self.input_names = [n.attrs["name"] for n in input_nodes]  # (graph.input_names)
        self.param_names = [n.attrs["name"] for n in param_nodes]
        values = graph.param_values
        self._params = tuple([values[n] for n in self.param_names])
        # (``type.shape`` is empty exactly when ``type.ndim == 0``)
        self._array_inputs = [i for i, n in enumerate(input_nodes) if n.outputs[0].type.shape]
        # outputs that may come back as NumPy scalars or as the caller's own objects: made arrays like run's
        self._wrap = [i for i, v in enumerate(graph.outputs) if not v.type.shape or v.node.op in SOURCE_OPS]
        self._forward: Callable[[tuple, tuple], list] = None  # type: ignore[assignment]
        self._codes: dict[Any, python_source.PyCode] = {}  # the generated functions' code objects -> their PyCode

    # --- calling

    def __call__(self, *args, **named) -> list[np.ndarray]:
        if named or len(args) != len(self.input_names):
            return self._call_bound(args, named)
        for a in args:
            if type(a) is not np.ndarray:
                return self._call_bound(args, named)
        try:
            outputs = self._forward(args, self._params)
        except Exception as e:
            raise self._named_error(e)
        for i in self._wrap:
            outputs[i] = np.asarray(outputs[i])
        return outputs

    def _call_bound(self, args: tuple, named: dict) -> list[np.ndarray]:
        inputs, params = self._bind(args, dict(named))
        outputs = self._run(inputs, params)
        return [np.asarray(v) for v in outputs]

    def run(self, inputs: Mapping[str, Any]) -> list:
        """Inputs by name, with no checks (as ``prepared.prepare``'s function): the fast path of ``compile()``."""
        return self._run(tuple(inputs[name] for name in self.input_names), self._params)

    def _bind(self, args: tuple, named: dict) -> tuple[tuple, tuple]:
        if len(args) > len(self.input_names):
            raise GraphInputError(f"{self.graph.name} takes {len(self.input_names)} inputs "
                                  f"({', '.join(self.input_names)}), got {len(args)} positional arguments")
        for name, value in zip(self.input_names, args):
            if name in named:
                raise GraphInputError(f"input {name!r} given twice (by position and by name)")
            named[name] = value
        bound = bind_inputs(self.graph, named)
        inputs = tuple(bound[name] for name in self.input_names)
        params = tuple(bound.get(name, value) for name, value in zip(self.param_names, self._params))
        return inputs, params

    def _run(self, inputs: tuple, params: tuple) -> list:
        try:
            return self._forward(inputs, params)
        except Exception as e:
            raise self._named_error(e)

    def _named_error(self, e: Exception) -> Exception:
        """A failure inside generated code, re-raised naming the node it happened in (as ``run`` does)."""
        if isinstance(e, GraphExecutionError):
            return e
        node = python_source.failing_node(e.__traceback__, self._codes)
        if node is None:
            return e
        error = GraphExecutionError(f"while executing {self.graph.node_text(node)}: {type(e).__name__}: {e}", node)
        error.__cause__ = e
        return error

    # --- looking at it

    @property
    def source(self) -> str:
        """The code that runs (Python; the C kernels of ``fused`` are in ``kernel_source``)."""
        return str(self.graph)

    def explain(self) -> str:
        """What the passes did and how the backend runs the graph."""
        lines = [f"compiled {self.graph.name} with backend={self.backend}, passes={self.pipeline!r}: "
                 f"{self.graph.count()} ops"]
        lines += [f"  {r}" for r in self.reports]
        return "\n".join(lines + self._explain_backend())

    def _explain_backend(self) -> list[str]:
        return [f"kept on the reference interpreter: {self.why}"] if getattr(self, "why", "") else []

    def how_it_runs(self) -> str:
        """One line for ``graph_lab.explain``: which way the graph runs, and why that way."""
        return f"reference interpreter{': ' + self.why if getattr(self, 'why', '') else ''}"

    def __repr__(self) -> str:
        return f"<CompiledGraph {self.graph.name} backend={self.backend} ops={self.graph.count()}>"


class InterpretedGraph(CompiledGraph):
    """The reference interpreter, prepared once."""

    def __init__(self, graph: Graph, pipeline, reports, why: str = ""):
        super().__init__(graph, "interpret", pipeline, reports)
        self.why = why
        """Why another requested backend left this graph to the interpreter ('' when it was asked for)."""
        prepared = prepare(graph)
        names = self.input_names + self.param_names

        def forward(inputs, params):
            return prepared(dict(zip(names, inputs + params)))
        self._forward = forward


class CodegenGraph(CompiledGraph):
    """Straight-line NumPy source with ``out=`` buffer reuse (see ``codegen``)."""

    def __init__(self, graph: Graph, pipeline, reports, min_bytes: int = MIN_BUFFER_BYTES,
                 generated: codegen.Generated | None = None, extra: dict | None = None, backend: str = "codegen",
                 why: str = "", straight_static: bool = False, donated: dict[str, int] | None = None):
        # (``straight_static``: the caller checked that the graph has no region and no symbolic size; ``donated``:
        # see ``compile_captured``)
        super().__init__(graph, backend, pipeline, reports)
        self.why = why
        """Why another requested backend left this graph to codegen ('' when it was asked for)."""
        symbolic = not straight_static and is_symbolic_graph(graph)
        self.generated = generated or codegen.generate(graph, min_bytes, straight_static=straight_static,
                                                       donated=donated)
        plain = codegen.compile_source(self.generated.plain, extra)
        reusing = (plain if self.generated.reusing is self.generated.plain
                   else codegen.compile_source(self.generated.reusing, extra))
        self._codes = {plain.__code__: self.generated.plain, reusing.__code__: self.generated.reusing}
        consts_plain, consts_reusing = self.generated.plain.consts, self.generated.reusing.consts
        array_inputs = self._array_inputs
        params_c = all(p.flags.c_contiguous for p in self._params if isinstance(p, np.ndarray))
        default_params = self._params
        self.direct = (plain, consts_plain) if reusing is plain or symbolic else None
        """``(function, consts)`` when no line reuses a buffer: ``function(inputs, params, consts)`` is the whole
        run, for any inputs of the graph's types (compile()'s fast path calls it directly). For a symbolic graph it
        checks neither the shapes nor the shape guards, which ``forward`` checks: its caller has (compile()'s
        guards check both before a segment runs)."""

        if symbolic:  # the sizes are bound, and the shape guards checked, on every call (as run does)
            names = self.input_names

            def forward(inputs, params):
                checked_sizes(graph, dict(zip(names, inputs)))
                return plain(inputs, params, consts_plain)
            self._forward = forward
            return

        kept = self.generated.plan.workspace
        lock = threading.Lock()  # buffers kept between calls serve one call at a time

        def forward(inputs, params):
            for i in array_inputs:
                if not inputs[i].flags.c_contiguous:
                    return plain(inputs, params, consts_plain)
            if params is not default_params or not params_c:
                if not all(p.flags.c_contiguous for p in params if isinstance(p, np.ndarray)):
                    return plain(inputs, params, consts_plain)
            if not kept:
                return reusing(inputs, params, consts_reusing)
            if not lock.acquire(blocking=False):  # another thread is in a call: this one allocates its own
                return plain(inputs, params, consts_plain)
            try:
                return reusing(inputs, params, consts_reusing)
            finally:
                lock.release()
        self._forward = forward

    @property
    def source(self) -> str:
        return self.generated.reusing.source

    def how_it_runs(self) -> str:
        plan, generated = self.generated.plan, self.generated
        parts = [f"NumPy calls in generated code{' (' + self.why + ')' if self.why else ''}"]
        if generated.in_place:
            parts.append(f"{generated.in_place} writes in place, as eager code makes them")
        if plan.out or plan.workspace or plan.outs:
            parts.append(f"{len(plan.out) + len(plan.outs)} lines write into buffers no longer read and "
                         f"{len(plan.workspace)} into buffers kept between calls, when the inputs are C-ordered")
        return "; ".join(parts + loop_bodies.loop_notes([*generated.plain.consts, *generated.reusing.consts]))

    def _explain_backend(self) -> list[str]:
        plan = self.generated.plan
        if self.why:
            return [f"  ran as codegen: {self.why}"]
        lines = [f"  buffer reuse: {len(plan.out)} lines write into dead buffers "
                 f"({plan.reused_bytes / 1e6:.2f} MB of allocation saved per call), {len(plan.workspace)} into "
                 f"buffers kept between calls ({plan.workspace_bytes / 1e6:.2f} MB held)"]
        return lines + [f"    {line}" for line in plan.describe(self.graph)]


def _not_fused_yet(graph: Graph, symbolic: bool | None = None) -> str:
    """Why fused kernels are not made for ``graph`` (it then runs as codegen), or ''. (``symbolic``:
    ``is_symbolic_graph(graph)`` when the caller knows it.)"""
    if is_symbolic_graph(graph) if symbolic is None else symbolic:
        return "its sizes are symbolic (fused kernels are written for static shapes)"
    if any(node.regions and node.op != Op.FORI_LOOP for node in graph.nodes):
        return "it has control-flow regions (fused kernels are made for straight-line graphs and loops)"
    return ""


def compile_graph(graph: Graph, backend: str = "auto", passes: str | Iterable[str] = "exact", *,
                  verify: bool = True, log: bool = False, options: FusedOptions | None = None) -> CompiledGraph:
    """Run the pass pipeline ``passes`` on a copy of ``graph`` and make the result callable with ``backend``.

    The callable takes the inputs positionally or by name and returns a list of arrays, as ``run`` does;
    ``.source`` is its generated code and ``.explain()`` says what each pass did and what ran where.

    Parameters:
        graph: a graph from any frontend, ``GraphBuilder`` or ``parse``; it is not changed.
        backend: ``"interpret"`` (the reference interpreter), ``"codegen"`` (straight-line NumPy source, bit for
            bit ``run``'s results), ``"fused"`` (codegen with elementwise chains as C kernels where the cost
            model says they pay) or ``"auto"`` (``fused`` where a C compiler is found, else ``codegen``).
        passes: a pipeline name (``"none"``, ``"exact"``, ``"fast_math"``, ``"inference"``) or a list of pass
            names; see ``run_pipeline``.
        verify: check the IR after every pass.
        log: print each pass's report.
        options: a ``FusedOptions``: the buffer-reuse threshold, the kernel cache folder, the compiler, threads
            and the cost model's inputs. ``None``: the defaults.

    Returns:
        The ``CompiledGraph``.

    Raises:
        ValueError: an unknown backend, pipeline or pass name.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    optimized, reports = run_pipeline(graph, passes, verify=verify, log=log)
    return _compile_optimized(optimized, backend, passes, reports, options)


def compile_captured(graph: Graph, backend: str = "auto", passes: str | Iterable[str] = "exact", *,
                     verify: bool = True, log: bool = False, options=None, symbolic: bool | None = None,
                     donated: dict[str, int] | None = None) -> CompiledGraph:
    """``compile_graph`` for a caller that hands ``graph`` over and never edits it afterwards, as ``compile()``
    does with each graph it captures: when no pass changes the graph (the usual case), the compiled graph keeps
    ``graph`` itself as its ``graph`` rather than a copy (see ``run_pipeline_on``). ``graph`` is not changed.
    ``symbolic``: ``is_symbolic_graph(graph)``, when the caller knows it (no pass changes an input's type).
    ``donated``: input name -> output index, for the inputs whose arrays the caller overwrites with that output
    when the graph has run (``compile()``'s write-backs): the graph may update them in place (``inplace.py``)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    optimized, reports = run_pipeline_on(graph, passes, verify=verify, log=log)
    return _compile_optimized(optimized, backend, passes, reports, options, symbolic, donated)


def _compile_optimized(optimized: Graph, backend: str, passes, reports: list[PassReport], options,
                       symbolic: bool | None = None, donated: dict[str, int] | None = None) -> CompiledGraph:
    with loop_bodies.compiled_by(backend):  # a fori_loop's body is compiled by this backend too
        return _compile_by_backend(optimized, backend, passes, reports, options, symbolic, donated)


def _compile_by_backend(optimized: Graph, backend: str, passes, reports: list[PassReport], options,
                        symbolic: bool | None, donated: dict[str, int] | None) -> CompiledGraph:
    if backend == "interpret":
        return InterpretedGraph(optimized, passes, reports)
    min_bytes = options.min_buffer_bytes if options else MIN_BUFFER_BYTES
    if backend == "codegen":
        return CodegenGraph(optimized, passes, reports, min_bytes, donated=donated)
    unsupported = _not_fused_yet(optimized, symbolic)
    if unsupported:  # fused kernels are made for static, region-free graphs (so far): the rest is codegen's
        return CodegenGraph(optimized, passes, reports, min_bytes, why=unsupported, donated=donated)
    from .fused import compile_fused  # (here: fused.py imports this module)
    return compile_fused(optimized, passes, reports, options, auto=backend == "auto",
                         straight_static=not optimized.has_regions(), donated=donated)

