"""Every way graph_lab can run a program: a frontend, a pass pipeline and a backend, each one line in a table.

    FRONTENDS   how graphs are captured from a Python function: trace, script, lazy, compile
    PIPELINES   which passes edit each captured graph: none, exact, fast_math (the pass manager's)
    BACKENDS    how one graph runs: the reference interpreter, prepare(), generated Python, codegen, fused

``WAYS`` is every combination; ``way("compile/simplify/to_python").build(fn)`` gives a function with ``fn``'s
signature that runs ``fn`` that way. The differential fuzzer, the suites and the reproducers all read these
tables, so a new frontend, pass or backend is tested everywhere once it has its line here.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..backends.compiled import compile_graph
from ..backends.options import FusedOptions
from ..backends.prepared import prepare
from ..backends.reference import run
from ..backends.python_source import to_python
from ..frontends import pytree
from ..frontends.dynamo.runtime import CompiledFunction
from ..frontends.dynamo.runtime import compile as compile_function
from ..frontends.lazy import LazyRunner
from ..frontends.script import script
from ..frontends.tensor import Tensor
from ..frontends.trace import trace
from ..guards import check_guards
from ..ir.graph import Graph
from ..ir.subgraphs import copy_graph
from ..passes.fresh_outputs import keep_outputs_apart
from ..passes.pipelines import PASSES, pipeline_passes

Runner = Callable[[dict], list]
"""A graph made runnable: inputs by name -> outputs in order."""


@dataclass(frozen=True)
class Backend:
    name: str
    make: Callable[[Graph], Runner]
    """Prepares one graph to run."""
    exact: bool = True
    """It runs the same NumPy calls in the same order as eager code, so results must agree bit for bit."""


@dataclass(frozen=True)
class Pipeline:
    name: str
    apply: Callable[[Graph], list[str]]
    """Edits a graph in place and returns one line per change it made (as ``simplify`` reports)."""
    exact: bool = True
    """Every rewrite keeps the bits of every result (no reassociation)."""


@dataclass(frozen=True)
class Frontend:
    name: str
    make: Callable[[Callable, "GraphCompiler"], Callable]
    """``make(fn, compiler)`` -> a function with ``fn``'s signature; each graph it captures goes to ``compiler``."""
    keeps_side_effects: bool
    """Prints, appends and attribute writes happen on every call, as in eager code."""
    sees_python_state: bool
    """A changed global, closure cell, attribute or Python argument is noticed (a guard or a rerun)."""
    writes_arguments: bool = False
    """A write into an argument array reaches the caller's array, as in eager code (compile's write-back).
    trace and script refuse such a write (TraceError, ScriptError); a lazy tensor holds a copy."""
    strict: bool = False
    """What it returns is what the user's call returns, so types and aliasing are compared too
    (``testing/strict.py``): a 0-d array where eager gives a NumPy scalar is a mismatch."""


class GraphCompiler:
    """A pipeline, then a backend, for each graph a frontend captures; remembers what the passes changed."""

    def __init__(self, pipeline: Pipeline, backend: Backend):
        self.pipeline = pipeline
        self.backend = backend
        self.changes: list[str] = []
        """Every line the pipeline reported, over every graph compiled."""
        self.ops: set[str] = set()
        """The ops of every graph compiled (after the pipeline)."""

    def __call__(self, graph: Graph) -> Runner:
        self.changes += self.pipeline.apply(graph)
        self.ops |= {str(node.op) for node in graph.nodes}
        return self.backend.make(graph)


# --- frontends

class _PerSignature:
    """A graph per input signature, reused while ``check_guards`` holds: how a tracing or scripting JIT uses its
    graphs. Arguments that are not arrays are baked in as the Python values they had (``sees_python_state`` is
    False)."""

    def __init__(self, fn: Callable, compiler: GraphCompiler):
        self.fn = fn
        self.compiler = compiler
        self.names = [p.name for p in inspect.signature(fn).parameters.values()]
        self.entries: list[tuple[Graph, Runner]] = []
        self.last_graphs: list[Graph] = []

    def __call__(self, *args):
        arrays = {n: a for n, a in zip(self.names, args) if isinstance(a, np.ndarray)}
        for graph, runner in self.entries:
            if check_guards(graph, arrays):
                break
        else:
            graph = self.capture(args, arrays)
            runner = self.compiler(graph)
            self.entries.append((graph, runner))
        self.last_graphs = [graph]
        outputs = runner(arrays)
        return pytree.unflatten(graph.out_tree, [np.asarray(o) for o in outputs])

    def capture(self, args: tuple, arrays: dict) -> Graph:
        raise NotImplementedError


class TracedFunction(_PerSignature):
    """``trace(fn, mode="guard")`` with the call's arrays as the example."""

    def capture(self, args, arrays) -> Graph:
        fixed = {i: a for i, a in enumerate(args) if not isinstance(a, np.ndarray)}
        tensor_names = list(arrays)

        def bound(*tensors):
            it = iter(tensors)
            return self.fn(*(fixed[i] if i in fixed else next(it) for i in range(len(args))))

        bound.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in tensor_names])
        bound.__name__ = getattr(self.fn, "__name__", "program")
        shapes = {n: (a.shape, a.dtype) for n, a in arrays.items()}
        return trace(bound, shapes, mode="guard", example=arrays)


class ScriptedFunction(_PerSignature):
    """``script(fn)``: the source converted, control flow on data kept as cond/while_loop nodes. A last
    argument that is not an array goes in as ``params`` (script reads it as the value it is now)."""

    def capture(self, args, arrays) -> Graph:
        extra = [a for a in args if not isinstance(a, np.ndarray)]
        shapes = {n: (a.shape, a.dtype) for n, a in arrays.items()}
        return script(self.fn, shapes, extra[0] if extra else None)


class _CompilingLazyRunner(LazyRunner):
    """A LazyRunner whose cut-out graphs go through a pipeline and a backend (once per cached graph)."""

    def __init__(self, compiler: GraphCompiler):
        super().__init__()
        self._compiler = compiler
        self._runners: dict[int, tuple[Graph, Runner]] = {}

    def _execute(self, graph: Graph, inputs: dict) -> list:
        entry = self._runners.get(id(graph))
        if entry is None:
            entry = self._runners[id(graph)] = (graph, self._compiler(graph))
        return entry[1](inputs)


class LazyFunction:
    """Each call wraps the array arguments as lazy tensors of one ``LazyRunner`` (its graph cache lives across
    calls), runs ``fn`` on them, and materializes the tensors in the result."""

    def __init__(self, fn: Callable, compiler: GraphCompiler):
        self.fn = fn
        self.runner = _CompilingLazyRunner(compiler)
        self.last_graphs: list[Graph] = []

    def __call__(self, *args):
        start = len(self.runner.executed)
        lazy = [self.runner.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        result = self.fn(*lazy)
        leaves, tree = pytree.flatten(result)
        tensors = [leaf for _, leaf in leaves if isinstance(leaf, Tensor)]
        values = iter(self.runner.materialize(tensors) if tensors else [])
        out = pytree.unflatten(tree, [next(values) if isinstance(leaf, Tensor) else leaf for _, leaf in leaves])
        self.last_graphs = self.runner.executed[start:]
        return out


class _CompiledWith(CompiledFunction):
    """``compile(fn)`` with each segment's graph sent through the way's pipeline and backend."""

    def __init__(self, fn: Callable, compiler: GraphCompiler):
        super().__init__(fn)
        self.compiler = compiler

    def _capture(self, offset, inputs):
        seg = super()._capture(offset, inputs)
        seg.runner = self.compiler(seg.graph)
        return seg

    def _compile_callee(self, fn):
        """A function called at a graph break runs compiled the same way."""
        if fn is self.fn:
            return None
        if fn not in self.nested:
            self.nested[fn] = _CompiledWith(fn, self.compiler)
        return self.nested[fn]


def _as_user_calls(backend: str) -> Callable[[Callable, GraphCompiler], Callable]:
    """``graph_lab.compile(fn, backend=backend)`` itself, as a user calls it: its own passes and backend, and
    what its call returns handed back untouched (the way's pipeline and backend only name what it runs)."""
    def make(fn: Callable, compiler: GraphCompiler) -> Callable:
        return compile_function(fn, backend=backend)
    return make


# --- backends and pipelines

def _interpret(graph: Graph) -> Runner:
    return lambda inputs: run(graph, inputs)


def _generated_python(graph: Graph) -> Runner:
    forward = to_python(graph)
    return lambda inputs: forward(**inputs)


def _compiled(backend: str) -> Callable[[Graph], Runner]:
    """compile_graph's backend, with no passes of its own (the way's pipeline has run). Buffers are planned
    for arrays of every size (``min_buffer_bytes=0``; by default only from 32 KiB), so that the small programs
    of the fuzzer go through buffer reuse and buffers kept between calls too; kernels stay the cost model's
    choice (compiling C for every random program would take hours)."""
    options = FusedOptions(min_buffer_bytes=0)

    def make(graph: Graph) -> Runner:
        compiled = compile_graph(graph, backend=backend, passes="none", options=options)
        return lambda inputs: compiled(**inputs)
    return make


def _pass_pipeline(name: str) -> Callable[[Graph], list[str]]:
    """A pipeline of the pass manager, run in place; each change reported as ``pass: change``. As the pass
    manager does, outputs the passes made share memory get a copy (``fresh_outputs``): compile() hands them
    to Python at a break, where one may be written in place."""
    def apply(graph: Graph) -> list[str]:
        before = copy_graph(graph)
        changes: list[str] = []
        for pass_name in pipeline_passes(name):
            changes += [f"{pass_name}: {line}" for line in PASSES[pass_name](graph)]
        return changes + [f"fresh_outputs: {line}" for line in keep_outputs_apart(before, graph)]
    return apply


# --- the tables: one line per frontend, pipeline and backend

FRONTENDS = {f.name: f for f in [
    Frontend("trace", TracedFunction, keeps_side_effects=False, sees_python_state=False),
    Frontend("script", ScriptedFunction, keeps_side_effects=False, sees_python_state=False),
    Frontend("lazy", LazyFunction, keeps_side_effects=True, sees_python_state=True),
    Frontend("compile", _CompiledWith, keeps_side_effects=True, sees_python_state=True, writes_arguments=True),
]}
PIPELINES = {p.name: p for p in [
    Pipeline("none", lambda graph: []),
    Pipeline("exact", _pass_pipeline("exact")),                    # simplify, fold, cse, dce: bit for bit
    Pipeline("fast_math", _pass_pipeline("fast_math"), exact=False),  # x / c -> x * (1/c), reassociation...
]}
BACKENDS = {b.name: b for b in [
    Backend("interpret", _interpret),          # run(): the reference interpreter, node by node
    Backend("prepare", prepare),               # the interpreter with its bookkeeping done once
    Backend("to_python", _generated_python),   # graph.to_python(): generated NumPy source
    Backend("codegen", _compiled("codegen")),  # straight-line NumPy source with buffer reuse
    Backend("fused", _compiled("fused"), exact=False),  # C kernels for elementwise chains (libmvec functions)
]}


@dataclass(frozen=True)
class Way:
    frontend: Frontend
    pipeline: Pipeline
    backend: Backend

    @property
    def name(self) -> str:
        return f"{self.frontend.name}/{self.pipeline.name}/{self.backend.name}"

    @property
    def exact(self) -> bool:
        """Results must agree with eager code bit for bit."""
        return self.pipeline.exact and self.backend.exact

    def build(self, fn: Callable) -> Callable:
        """``fn`` run this way; the result has ``.compiler`` (with the passes' ``changes``)."""
        compiler = GraphCompiler(self.pipeline, self.backend)
        runnable = self.frontend.make(fn, compiler)
        runnable.compiler = compiler
        return runnable


WAYS = [Way(f, p, b) for f in FRONTENDS.values() for p in PIPELINES.values() for b in BACKENDS.values()]

USER_WAYS = [Way(Frontend("user", _as_user_calls(backend), keeps_side_effects=True, sees_python_state=True,
                          writes_arguments=True, strict=True), PIPELINES["exact"], Backend(backend, _compiled(backend)))
             for backend in ("auto", "interpret")]
"""``graph_lab.compile(fn)`` and ``graph_lab.compile(fn, backend="interpret")`` called as a user calls them, and
compared strictly: what the caller gets back, not just its values. (``auto`` runs a fused C kernel only on
groups of at least ``cost.MIN_ELEMENTS`` elements, larger than the generator's arrays: it is exact here.)"""


def way(name: str) -> Way:
    """The way named ``frontend/pipeline/backend``."""
    for w in WAYS + USER_WAYS:
        if w.name == name:
            return w
    from .forced_kernels import FORCED_WAYS  # (F9's ways: every kernel and C program forced)
    for w in FORCED_WAYS:
        if w.name == name:
            return w
    raise KeyError(f"no way named {name!r}; the ways are {[w.name for w in WAYS]}")
