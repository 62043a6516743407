"""The pass manager: named passes, named pipelines, and a report of what each pass did.

    g2, reports = run_pipeline(g, "exact")        # g is left as it was; g2 is a transformed copy
    for r in reports: print(r)                     # "cse: 14 -> 12 ops, 2 changes (0.1 ms)"

A pass is a function ``Graph -> list[str]`` that edits the graph in place and returns one line per change (an
empty list: nothing changed). ``run_pipeline`` copies the graph (before the first pass that would change it, see
``run_pipeline_on``), runs each pass in order, checks the graph's invariants after each (``verify``) and records
a ``PassReport``. ``GRAPH_LAB_LOGS=passes`` (or
``set_logs("passes")``) prints every report and change as it happens.

Pipelines:

- ``none``: no pass.
- ``exact``: algebraic simplification, constant folding, CSE and DCE. Bit for bit: the graph computes exactly
  what it computed before, for every input.
- ``fast_math``: ``exact`` plus rewrites true of real numbers only (``x / c -> x * (1/c)``, reassociation of
  constants, ``x + 0.0 -> x``); within a documented tolerance.
- ``inference``: parameters frozen into constants, then conv + batch-norm folding and everything ``exact`` does,
  so weight arithmetic is computed once. Within a tolerance (the folded weights are rounded); a compiled graph
  from it no longer accepts parameter overrides.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .. import logs
from ..ir.graph import Graph, Node
from . import cse as _cse, dce as _dce, fold as _fold, simplify as _simplify
from .conv_bn import fold_conv_bn
from .cse import cse
from .dce import dce
from .fast_math import simplify_fast_math
from .fold import fold_constants, freeze_params
from .fresh_outputs import keep_outputs_apart
from .simplify import simplify

Pass = Callable[[Graph], list[str]]

PASSES: dict[str, Pass] = {
    "simplify": simplify,              # exact algebraic rules (x * 1, --x, transpose/reshape chains, ...)
    "fold": fold_constants,            # run constant subgraphs once
    "cse": cse,                        # one node per distinct computation
    "dce": dce,                        # drop what no output needs
    "fast_math": simplify_fast_math,   # not bit-exact: x / c -> x * (1/c), reassociation, x + 0.0
    "freeze_params": freeze_params,    # parameters become constants (no overrides afterwards)
    "conv_bn": fold_conv_bn,           # batch norm folded into the convolution before it
}

WOULD_CHANGE: dict[Pass, Callable[[Graph], bool]] = {
    simplify: _simplify.would_change,
    fold_constants: _fold.would_change,
    cse: _cse.would_change,
    dce: _dce.would_change,
}
"""For a pass (the function), a check that the pass would leave a graph as it is and report nothing when it says
False; it looks without changing anything. The pipeline asks it before copying the graph (see ``run_pipeline``)."""

ANSWERED_BY: dict[Pass, Pass] = {dce: simplify}
"""A pass whose check need not run on a graph that the other pass's check found unchanged: simplify's check says
True for any dead node (``remove_dead_code`` would drop it), and dce removes dead nodes only."""

PIPELINES: dict[str, list[str]] = {
    "none": [],
    "exact": ["simplify", "fold", "cse", "dce"],
    "fast_math": ["simplify", "fast_math", "fold", "cse", "dce"],
    "inference": ["freeze_params", "simplify", "conv_bn", "fold", "cse", "dce"],
}

EXACT_PIPELINES = frozenset({"none", "exact"})
"""Pipelines after which a graph computes the same bits as before."""


@dataclass
class PassReport:
    """What one pass did to the graph."""

    name: str
    """The pass's name in ``PASSES``."""
    ops_before: int
    """``Graph.count()`` before the pass."""
    ops_after: int
    """``Graph.count()`` after it."""
    changes: list[str] = field(default_factory=list)
    """One line per change, as the pass reported it."""
    seconds: float = 0.0
    """Time the pass took (verification not included)."""

    def __str__(self) -> str:
        what = f"{len(self.changes)} change{'s' if len(self.changes) != 1 else ''}" if self.changes else "no change"
        return (f"{self.name}: {self.ops_before} -> {self.ops_after} ops, {what} "
                f"({self.seconds * 1e3:.2f} ms)")


def pipeline_passes(pipeline: str | Iterable[str]) -> list[str]:
    """The pass names of a pipeline given by name or as a list of pass names."""
    names = PIPELINES.get(pipeline) if isinstance(pipeline, str) else list(pipeline)
    if names is None:
        raise ValueError(f"unknown pipeline {pipeline!r}; known: {', '.join(PIPELINES)} (or a list of passes "
                         f"from {', '.join(PASSES)})")
    unknown = [n for n in names if n not in PASSES]
    if unknown:
        raise ValueError(f"unknown passes {unknown}; known: {', '.join(PASSES)}")
    return names


def run_pipeline(graph: Graph, pipeline: str | Iterable[str] = "exact", *, verify: bool = True,
                 log: bool = False) -> tuple[Graph, list[PassReport]]:
    """Run a pass pipeline on a copy of ``graph``; ``graph`` itself is not changed.

    Parameters:
        graph: the graph to transform.
        pipeline: a pipeline name from ``PIPELINES`` (``"none"``, ``"exact"``, ``"fast_math"``,
            ``"inference"``) or a list of pass names.
        verify: check the IR after every pass (a pass that breaks it raises ``VerifyError`` naming the node).
        log: print each pass's report and its changes (as ``GRAPH_LAB_LOGS=passes`` does).

    Returns:
        The transformed copy and one ``PassReport`` per pass.

    Raises:
        ValueError: an unknown pipeline or pass name.
    """
    work, reports = run_pipeline_on(graph, pipeline, verify=verify, log=log)
    return (copy_graph(graph) if work is graph else work), reports


def run_pipeline_on(graph: Graph, pipeline: str | Iterable[str] = "exact", *, verify: bool = True,
                    log: bool = False) -> tuple[Graph, list[PassReport]]:
    """``run_pipeline``, but returning ``graph`` itself when no pass changes it (most graphs: nothing to fold,
    merge or remove). ``graph`` is never changed: it is copied before the first pass that may change it.

    Copying a graph costs as much as a pass over it, so the pipeline first asks each pass whether it would change
    the graph (``WOULD_CHANGE``; a pass without a check is taken to change it): while none would, the passes are
    reported as having found nothing, which they would have. For a caller that owns ``graph`` and will not edit
    it afterwards (compile() with the graphs it captures); ``run_pipeline`` copies the result in that case."""
    names = pipeline_passes(pipeline)
    work = graph
    reports = []
    count = graph.count()
    cleared = set()  # the passes whose check found ``graph`` unchanged
    logged = log or logs.on("passes")  # (asked once: no pass turns logging on or off)
    clock = time.perf_counter
    for name in names:
        before = count
        start = clock()
        apply = PASSES[name]
        if work is graph:
            unchanged = WOULD_CHANGE.get(apply)
            if unchanged is not None and (ANSWERED_BY.get(apply) in cleared or not unchanged(graph)):
                cleared.add(apply)
                changes = []
            else:
                work = copy_graph(graph)
                start = clock()  # (the copy is not the pass's time)
        if work is not graph:
            changes = apply(work)
        if changes:  # (a pass that reports no change changed nothing: the count stands)
            count = work.count()
        report = PassReport(name, before, count, changes, clock() - start)
        if verify:
            work.verify()
        reports.append(report)
        if logged:
            _log(report, log)
    if work is not graph:
        _keep_outputs_apart(graph, work, reports, verify, logged and log)
    return work, reports


def _keep_outputs_apart(graph: Graph, work: Graph, reports: list[PassReport], verify: bool, log: bool) -> None:
    """After the passes, outputs that now share memory they did not share before get a copy (see
    ``fresh_outputs``); reported as one more pass when it copied anything."""
    start = time.perf_counter()
    before = work.count()
    changes = keep_outputs_apart(graph, work)
    if changes:
        report = PassReport("fresh_outputs", before, work.count(), changes, time.perf_counter() - start)
        if verify:
            work.verify()
        reports.append(report)
        if log or logs.on("passes"):
            _log(report, log)


def _log(report: PassReport, to_stdout: bool) -> None:
    if not to_stdout and not logs.on("passes"):
        return
    text = "\n".join([str(report)] + [f"  {line}" for line in report.changes])
    if to_stdout:
        print(text)
    logs.emit("passes", text)


def copy_graph(graph: Graph) -> Graph:
    """An independent copy: new nodes and values, the same attributes, inputs, parameters and guards."""
    new = Graph(graph.name)
    mapping = {}
    nodes = new.nodes
    for node in graph.nodes:
        outputs = node.outputs
        # (tuples made here, as Node takes them without another copy; one output is the common case)
        copy = Node(node.op, tuple([mapping[v] for v in node.inputs]), dict(node.attrs),
                    (outputs[0].type,) if len(outputs) == 1 else tuple([v.type for v in outputs]), node.loc)
        nodes.append(copy)
        if len(outputs) == 1:
            mapping[outputs[0]] = copy.outputs[0]
        else:
            mapping.update(zip(outputs, copy.outputs))
    new.outputs = [mapping[v] for v in graph.outputs]
    new.out_tree = graph.out_tree
    new.param_values = dict(graph.param_values)
    new.guards = list(graph.guards)
    return new
