"""The ``fused`` backend: ``codegen``, with chains of elementwise ops run as generated C kernels.

    cg = compile_graph(g, backend="fused")
    print(cg.partition.text())      # which nodes went into which kernel, and the cost model's reasons
    print(cg.kernel_source)         # the C
    print(cg.source)                # the Python that calls the kernels: v9 = kernel0(v3)

How a graph becomes kernels: ``partition`` groups the elementwise nodes (a ``softmax``, ``log_softmax`` or
``layer_norm`` over the last axis makes a *row kernel*, see ``c_row_kernels``), ``cost.decide`` keeps the groups whose
kernel is predicted to pay off (measured call overheads and bandwidths, threads), ``c_kernels`` writes each kept
group as a C function, ``toolchain`` compiles them into one library (cached on disk) and loads it with ctypes.
Everything else is ``codegen``'s straight-line NumPy, with its buffer reuse.

A kernel call checks each array it is given (shape, dtype; a non-contiguous or unaligned one is copied first),
allocates its outputs, and runs the loop on one thread or splits it over two (ctypes releases the GIL). Inputs of
other shapes than the graph was compiled for raise ``GraphExecutionError`` instead of reading out of bounds.

Where no C compiler is found, or a kernel fails to compile, the backend says so once (``FusedFallbackWarning``)
and runs as ``codegen``. Results: bit for bit NumPy's for arithmetic, comparisons, selections, fused sums and
means, and ``layer_norm``; within the tolerance documented in ``tolerance.py`` for the transcendental functions
and so for ``softmax`` and ``log_softmax`` (libmvec is not NumPy's libm).
"""

from __future__ import annotations

import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

from .. import logs
from ..errors import GraphExecutionError
from ..ir.builder import GraphBuilder
from ..ir.graph import Graph
from ..ir.source import user_stacklevel
from . import codegen, cost, python_source
from .broadcast_tiles import broadcast_tiles
from .compiled import CodegenGraph
from .inplace import in_place_updates, writes_in_place
from .c_loops import trips
from .c_programs import find_programs, updated_elements
from .kernel_order import regroup
from .kernel_pointers import address
from .options import FusedFallbackWarning, FusedOptions
from .partition import Group, Partition, graph_facts, partition
from .reordering import keep_in_order
from .result_order import keeps_c_order, numpy_calls
from .toolchain import KernelBuildError, KernelCache, find_toolchain


class _Engine:
    """A compiler, its kernel cache and its calibration, shared by every graph compiled with the same options."""

    def __init__(self, options: FusedOptions):
        self.toolchain = find_toolchain(options.compiler)  # (the calibration's kernels need it too)
        self.cache = KernelCache(self.toolchain, options.cache_dir) if self.toolchain else None
        self._calibration = options.calibration

    def calibration(self) -> cost.Calibration:
        if self._calibration is None:
            self._calibration = measure_calibration(self)
            logs.emit("kernels", "cost model calibration:\n" + "\n".join(f"  {k}: {v}"
                                                                        for k, v in self._calibration.rows()))
        return self._calibration


_engines: dict[tuple, _Engine] = {}
_warned: set[str] = set()
_pool: ThreadPoolExecutor | None = None


def _engine(options: FusedOptions) -> _Engine:
    key = (options.compiler, str(options.cache_dir), options.calibration)
    if key not in _engines:
        _engines[key] = _Engine(options)
    return _engines[key]


def _warn_once(cause: str, message: str) -> None:
    if cause not in _warned:
        _warned.add(cause)
        warnings.warn(message, FusedFallbackWarning, stacklevel=user_stacklevel())


def _second_thread() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graph_lab-kernel")
    return _pool


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# --- calling a kernel from Python


def kernel_call(fn, group: Group, graph: Graph, threads: int) -> Callable:
    """A Python function ``kernel(*arrays) -> array or tuple`` running ``fn`` (a loaded kernel) for ``group``."""
    expected = [(v.type.shape, v.type.dtype) for v in group.inputs]
    outputs = [(v.type.shape, v.type.dtype) for v in group.outputs(graph)]
    split = group.split()
    if split is None:
        total, dims = group.elements, ()
    else:
        total, dims = int(np.prod(group.shape[:split])), (int(np.prod(group.shape[split:])),)
    node = group.nodes[-1]
    single = len(outputs) == 1
    zero_d = any(shape == () for shape, _ in outputs)
    pool = _second_thread() if threads > 1 else None
    middle = (total // 2) // 64 * 64 if split is None else total // 2  # whole cache lines for each thread
    in_numpys_order = numpy_calls(group.nodes, group.inputs, group.outputs(graph))

    def call(*arrays, out=None):
        keep, not_c_ordered = [], False
        for a, (shape, dtype) in zip(arrays, expected):
            if type(a) is not np.ndarray:
                a = np.asarray(a)  # a NumPy scalar from a reduction
            if a.shape != shape or a.dtype != dtype:
                raise GraphExecutionError(
                    f"while executing {graph.node_text(node)} (fused kernel {group.index}): an operand is "
                    f"{getattr(a, 'dtype', type(a).__name__)}{list(np.shape(a))}, the kernel was compiled for "
                    f"{dtype}{list(shape)}; compile the graph again for these inputs", node)
            flags = a.flags
            if flags.c_contiguous and flags.aligned:
                keep.append(a)
            elif flags.c_contiguous or keeps_c_order(a):
                keep.append(a.copy())  # (C order; np.require costs 5x)
            else:
                not_c_ordered = True  # NumPy's result would not be C-ordered (see result_order)
        if not_c_ordered:
            return in_numpys_order(*arrays, out=out)
        # (``out``: a C-ordered buffer of the one output's shape and dtype, planned by codegen; for several
        # outputs, a tuple of such buffers or None, each None allocated here)
        if out is None or type(out) is not tuple:
            results = [out] if out is not None else [np.empty(shape, dtype) for shape, dtype in outputs]
        else:
            results = [r if r is not None else np.empty(shape, dtype) for r, (shape, dtype) in zip(out, outputs)]
        pointers = [address(a) for a in keep] + [address(r) for r in results]
        if pool is None or middle == 0:
            fn(0, total, *dims, *pointers)
        else:
            other = pool.submit(fn, middle, total, *dims, *pointers)
            fn(0, middle, *dims, *pointers)
            other.result()
        if zero_d and (out is None or type(out) is tuple):
            # a 0-d result it allocated is a NumPy scalar, as the ufunc or reduction the kernel replaces gives
            given = out or (None,) * len(results)
            results = [r[()] if r.ndim == 0 and o is None else r for r, o in zip(results, given)]
        return results[0] if single else tuple(results)

    return call


# --- the backend


class FusedGraph(CodegenGraph):
    """``codegen`` with some node groups replaced by calls of compiled kernels."""

    def __init__(self, graph: Graph, pipeline, reports, part: Partition | None, calls: dict[int, Callable],
                 options: FusedOptions, note: str = "", straight_static: bool = False,
                 largest_bytes: int | None = None, donated: dict[str, int] | None = None, stencils: tuple = ()):
        self._partition = part
        self.note = note
        """Why this graph runs with no kernel at all, if it does (no compiler, ...)."""
        kernels = [g for g in part.kernels() if g.index in calls] if part is not None else []
        self.kernels = kernels
        self.stencils = list(stencils)
        """The C programs (``c_programs.py``) and stencil kernels (``stencil.py``) the graph calls."""
        if kernels or stencils:
            in_place = in_place_updates(graph, donated, frozenset(id(n) for g in kernels for n in g.nodes),
                                        ufunc_lines=not stencils)  # (as the C programs were found: inplace)
            steps = fused_steps(graph, kernels, in_place, stencils)
            plan = codegen.plan_buffers(graph, steps, options.min_buffer_bytes, donated=donated)
            plain = python_source.generate(graph, _statement(graph, kernels, codegen.BufferPlan(), in_place, stencils),
                                    straight_static=straight_static)
            reusing = (python_source.generate(graph, _statement(graph, kernels, plan, in_place, stencils),
                                       straight_static=straight_static)
                       if plan.out or plan.workspace or plan.outs else plain)
            generated = codegen.Generated(plain, reusing, plan, writes_in_place(in_place))
        else:  # exactly codegen's code
            generated = codegen.generate(graph, options.min_buffer_bytes, straight_static=straight_static,
                                         largest_bytes=largest_bytes, donated=donated)
        extra = {f"kernel{g.index}": calls[g.index] for g in kernels}
        extra.update({st.call_name: calls[st.call_name] for st in self.stencils})
        super().__init__(graph, pipeline, reports, generated=generated, extra=extra, backend="fused",
                         straight_static=straight_static)

    @property
    def partition(self) -> Partition:
        """The groups and the cost model's decision for each (``partition.text()`` shows them). For a graph whose
        results are all too small for a kernel, grouped only when asked (see ``compile_fused``)."""
        if self._partition is None:
            self._partition = partition(self.graph)  # (the module's function)
            _decide_without_measuring(self._partition)
        return self._partition

    @property
    def kernel_source(self) -> str:
        """The C source of this graph's kernels."""
        from .c_kernels import library_source
        kernels = [g.kernel for g in self.kernels] + [st.kernel for st in self.stencils]
        return library_source(kernels) if kernels else ""

    def how_it_runs(self) -> str:
        stencils = program_notes(self.stencils)
        if self.stencils and not self.kernels:
            return super().how_it_runs() + stencils
        if not self.kernels and "in one C call" in super().how_it_runs():
            return super().how_it_runs()
        if not self.kernels:
            why = self.note or _no_kernel_reason(self.partition)
            return f"{super().how_it_runs()}; no C kernel: {why}"
        decided = [g for g in self.partition.kernels()]
        saved = sum(g.decision.numpy_seconds - g.decision.kernel_seconds for g in decided
                    if g.decision.numpy_seconds == g.decision.numpy_seconds)
        return (f"{super().how_it_runs()}; {len(self.kernels)} of {len(self.partition.groups)} elementwise groups "
                f"as C kernels (the cost model predicts {saved * 1e6:.1f} us saved per call){stencils}")

    def _explain_backend(self) -> list[str]:
        lines = super()._explain_backend()
        if self.note:
            lines.append(f"  {self.note}")
        return lines + ["  " + line for line in self.partition.text().splitlines()]


def program_notes(programs: list) -> str:
    """What explain() says of the C programs."""
    return "".join(f"; {p.describe()}" for p in programs)


def _no_kernel_reason(part: Partition) -> str:
    """Why no group of a partition became a kernel, in a few words (the first group's reason)."""
    if not part.groups:
        return "no chain of elementwise ops a kernel can compute"
    if all(g.elements < cost.MIN_ELEMENTS for g in part.groups):
        return f"every group is under {cost.MIN_ELEMENTS} elements, where a kernel call costs what NumPy's calls do"
    return f"no group is predicted to pay for a kernel call ({part.groups[0].decision.reason})"


def fused_steps(graph: Graph, kernels: list[Group], in_place: dict | None = None,
                stencils=()) -> list[codegen.Step]:
    """The lines of a fused graph for the buffer planner: a kernel is one step, where its last node was; a
    stencil kernel one that writes into its base (no new memory)."""
    in_kernel = {id(n): g for g in kernels for n in g.nodes}
    in_stencil = {id(n): st for st in stencils for n in st.taken()}
    steps = []
    for step in codegen.node_steps(graph, in_place):
        st = in_stencil.get(id(step.node))
        if st is not None:
            if step.node is st.call_node:
                steps.append(codegen.Step(step.node, tuple(st.bases), tuple(st.results()), False, None))
            continue
        g = in_kernel.get(id(step.node))
        if g is None:
            steps.append(step)
        elif step.node is g.nodes[-1]:
            outputs = tuple(g.outputs(graph))
            steps.append(codegen.Step(step.node, tuple(g.inputs), outputs, True, "kernel",
                                      same_element=g.reduce is None and g.row is None))
    return steps


def _statement(graph: Graph, kernels: list[Group], plan: codegen.BufferPlan, in_place: dict, stencils=()):
    in_kernel = {id(n): g for g in kernels for n in g.nodes}
    in_stencil = {id(n): st for st in stencils for n in st.taken()}
    with_out = codegen.out_statement(plan, codegen.scalar_operands(graph), in_place)

    def statement(node, ctx):
        st = in_stencil.get(id(node))
        if st is not None:
            return st.statement(node, ctx)
        g = in_kernel.get(id(node))
        if g is None:
            return with_out(node, ctx) if with_out is not None else None
        if node is not g.nodes[-1]:
            return "", ""
        outs = ", ".join(ctx.var(v) for v in g.outputs(graph))
        args = ", ".join(ctx.var(v) for v in g.inputs)
        threads = g.decision.threads if g.decision else 1
        comment = f"kernel {g.index}: {len(g.nodes)} ops fused, {threads} thread{'s' if threads > 1 else ''}"
        if id(node) in plan.workspace:
            args += f", out={codegen.workspace_buffer(plan.workspace[id(node)], ctx)}"
            comment += ", into a buffer kept between calls"
        elif id(node) in plan.out:
            args += f", out={ctx.var(plan.out[id(node)])}"
            comment += f", into the buffer of {ctx.var(plan.out[id(node)])}"
        elif id(node) in plan.outs:
            into = plan.outs[id(node)]
            args += f", out=({', '.join(ctx.var(into[k]) if k in into else 'None' for k in range(len(g.outputs(graph))))})"
            comment += ", some results in the arrays they are copied into"
        return f"{outs} = kernel{g.index}({args})", comment
    return statement


_DEFAULT_OPTIONS = FusedOptions()  # (frozen: one instance serves every compile that passes none)


def compile_fused(graph: Graph, pipeline, reports, options: FusedOptions | None = None,
                  auto: bool = False, straight_static: bool = False,
                  donated: dict[str, int] | None = None) -> CodegenGraph:
    """The fused backend for an optimized graph (see ``compiled.compile_graph``). ``straight_static``: the caller
    checked that ``graph`` has no control-flow region and no symbolic size (``compiled._not_fused_yet``)."""
    options = options or _DEFAULT_OPTIONS
    if options.fuse != "always":
        elements, nbytes = codegen.largest_results(graph) if straight_static else (_largest_result(graph), None)
        if elements < cost.MIN_ELEMENTS and updated_elements(graph) * trips() < cost.MIN_ELEMENTS:
            # A group loops over one of its nodes' results, so no group can be big enough for a kernel: no need to
            # form them now (FusedGraph.partition does if asked). Compile time matters for a graph of small
            # arrays. (The largest result in bytes, asked by the buffer planner, is known as well then.)
            return FusedGraph(graph, pipeline, reports, None, {}, options, straight_static=straight_static,
                              largest_bytes=nbytes, donated=donated)
    broadcast_tiles(graph)  # (np.tile(x, (n, 1)) and its transpose read as x broadcast: a row and a column)
    stencils = _decided_loop_nests(graph, options, donated)
    # (without C programs, elementwise nodes may run before a matmul that does not need them: kernel_order)
    part = partition(graph, {id(n): f"in {st.call_name}" for st in stencils for n in st.taken()},
                     {id(n): st.call_node for st in stencils for n in st.taken()}) if stencils \
        else regroup(graph, partition)
    candidates = [g for g in part.groups if options.fuse == "always" or g.elements >= cost.MIN_ELEMENTS]
    if stencils and not candidates:
        try:
            calls = build_stencil_calls(_engine(options), graph, stencils)
        except KernelBuildError as e:
            _warn_once("build-failed", f"graph_lab fused backend: a kernel did not compile; running as codegen. {e}")
            return FusedGraph(graph, pipeline, reports, None, {}, options, note=f"kernel build failed: {e}",
                              donated=donated)
        _decide_without_measuring(part)
        return FusedGraph(graph, pipeline, reports, part, calls, options, straight_static=straight_static,
                          donated=donated, stencils=stencils)
    if options.fuse == "never" or not candidates:
        _decide_without_measuring(part)
        return FusedGraph(graph, pipeline, reports, part, {}, options, straight_static=straight_static,
                          donated=donated)
    engine = _engine(options)
    if engine.toolchain is None:
        if not auto:  # backend="auto" means "fused where there is a compiler": nothing to warn about
            _warn_once("no-compiler", f"graph_lab fused backend: no C compiler found "
                                      f"({options.compiler or 'gcc or cc'}); running as codegen")
        _decide_without_measuring(part, "no C compiler: codegen")
        return FusedGraph(graph, pipeline, reports, part, {}, options, note="no C compiler found: ran as codegen",
                          donated=donated)
    calibration = engine.calibration() if options.fuse == "auto" else None
    facts = graph_facts(graph, codegen.c_ordered_values(graph, codegen.node_steps(graph)))
    for g in part.groups:
        if options.fuse == "always":
            threads = min(2, options.max_threads or 1, available_cpus())
            g.decision = cost.Decision(True, threads, float("nan"), float("nan"), "fuse='always'")
        else:
            g.decision = cost.decide(g.cost(graph, facts), calibration, options.max_threads)
    chains = not stencils  # (ufunc lines write into a donated input only where no C program was looked for so)
    stencils = keep_in_order(graph, lambda kernels: in_place_updates(graph, donated, kernels, chains), stencils,
                             part.groups)
    try:
        calls = build_calls(engine, graph, part)
        calls.update(build_stencil_calls(engine, graph, stencils))
    except KernelBuildError as e:
        _warn_once("build-failed", f"graph_lab fused backend: a kernel did not compile; running as codegen. {e}")
        return FusedGraph(graph, pipeline, reports, part, {}, options, note=f"kernel build failed: {e}",
                          donated=donated)
    for g in part.kernels():
        logs.emit("kernels", f"{graph.name}: kernel {g.index} ({len(g.nodes)} ops): {g.decision.reason}")
    return FusedGraph(graph, pipeline, reports, part, calls, options, straight_static=straight_static,
                      donated=donated, stencils=stencils)


def _largest_result(graph: Graph) -> int:
    """The number of elements of the graph's largest node result (0 for a graph with no operation)."""
    return codegen.largest_result(graph, lambda t: t.size)


def _decide_without_measuring(part: Partition, reason: str | None = None) -> None:
    for g in part.groups:
        why = reason or (f"{g.elements} elements < {cost.MIN_ELEMENTS}: a kernel call alone costs about what "
                         f"NumPy needs for the whole group")
        g.decision = cost.Decision(False, 1, float("nan"), float("nan"), why)


def build_calls(engine: _Engine, graph: Graph, part: Partition) -> dict[int, Callable]:
    """Generate, compile (one library for all) and wrap the kernels the partition decided to fuse."""
    kernels = part.kernels()
    for g in kernels:
        g.kernel = kernel_for(engine, graph, g)
    functions = engine.cache.functions([g.kernel for g in kernels]) if kernels else {}
    return {g.index: kernel_call(functions[g.kernel.name], g, graph, g.decision.threads) for g in kernels}


def _decided_loop_nests(graph: Graph, options: FusedOptions, donated) -> list:
    """The C programs (``c_programs.py``) that the cost model keeps, each on one thread; none without a
    compiler."""
    if options.fuse == "never":
        return []
    found = [p for p in find_programs(graph, in_place_updates(graph, donated, ufunc_lines=False), trips=trips())
             if options.fuse == "always" or p.worth_a_call()]
    if not found or _engine(options).toolchain is None:
        return []
    calibration = _engine(options).calibration() if options.fuse == "auto" else None
    for st in found:
        st.decision = (cost.Decision(True, 1, float("nan"), float("nan"), "fuse='always'") if calibration is None
                       else cost.decide(st.cost(), calibration, max_threads=1))
    kept = [st for st in found if st.decision.fuse]
    for i, st in enumerate(kept):
        st.index = i
    return kept


def build_stencil_calls(engine: _Engine, graph: Graph, stencils: list) -> dict:
    """Generate, compile (one library) and wrap the C programs and stencil kernels, by call name."""
    if not stencils:
        return {}
    for st in stencils:
        st.kernel = st.make_kernel()
    functions = engine.cache.functions([st.kernel for st in stencils])
    return {st.call_name: st.make_call(functions[st.kernel.name], graph) for st in stencils}


def kernel_for(engine: _Engine, graph: Graph, g: Group):
    from .c_kernels import kernel_source
    from .c_row_kernels import row_kernel_source
    source = row_kernel_source if g.row is not None else kernel_source
    return source(g.spec(graph), engine.toolchain.vector_math)


def precompile(graphs: list[Graph], options: FusedOptions) -> int:
    """Compile the kernels of many graphs as one library (a test suite does this once, then compiles each graph
    and finds its kernels loaded). Returns the number of distinct kernels."""
    engine = _engine(options)
    if engine.toolchain is None:
        return 0
    kernels = {}
    for graph in graphs:
        part = partition(graph)
        for g in part.groups:
            if options.fuse == "always" or g.elements >= cost.MIN_ELEMENTS:
                k = kernel_for(engine, graph, g)
                kernels[k.name] = k
    if kernels:
        engine.cache.functions(list(kernels.values()))
    return len(kernels)


# --- calibration: two tiny graphs through the same path as any other


POLY_OPS = 16


def measure_calibration(engine: _Engine) -> cost.Calibration:
    """Compile the calibration kernels (one pass over memory, a chain of multiply-adds, each libm function) through
    the same path as any graph's, and measure them against NumPy."""
    b = GraphBuilder("calibration")
    x = b.input("x", (1,), "float32")
    poly = x
    for _ in range(POLY_OPS // 2):
        poly = b.add(b.mul(poly, 0.999), 0.5)
    libm = [b.pow(x, x) if f == "pow" else getattr(b, f)(x) for f in cost.LIBM_FUNCTIONS]
    g = b.output(b.add(x, 1.0), poly, *libm)
    part = partition(g)
    by_output = {id(grp.outputs(g)[0]): grp for grp in part.groups}
    names = ["add_one", "poly", *cost.LIBM_FUNCTIONS]
    kernels = {name: kernel_for(engine, g, by_output[id(v)]) for name, v in zip(names, g.outputs)}
    functions = engine.cache.functions(list(kernels.values()))

    def run(kernel, array, threads):
        fn = functions[kernel.name]
        out = np.empty_like(array)
        args = (address(array),) * (2 if kernel.n_inputs == 2 else 1) + (address(out),)
        n = array.size
        if threads == 1:
            fn(0, n, *args)
        else:
            middle = n // 2 // 64 * 64
            other = _second_thread().submit(fn, middle, n, *args)
            fn(0, middle, *args)
            other.result()
        return out

    # (a whole call of the kernel of y = x + 1 through ``kernel_call``, as a graph's code makes it: the checks, the
    # allocation, the pointers and ctypes; measured, it took twice ``run``'s bare call)
    call = kernel_call(functions[kernels["add_one"].name], by_output[id(g.outputs[0])], g, 1)
    return cost.measure({"run": run, "call": call, "poly_ops": POLY_OPS, **kernels}, available_cpus())
