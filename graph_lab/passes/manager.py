"""The pass manager: runs a pipeline of passes and reports what each did.

    g2, reports = run_pipeline(g, "exact")        # g is left as it was; g2 is a transformed copy
    for r in reports: print(r)                     # "cse: 14 -> 12 ops, 2 changes (0.1 ms)"

A pass is a function ``Graph -> list[str]`` that edits the graph in place and returns one line per change (an
empty list: nothing changed). The passes and pipelines by name are ``pipelines.py``. ``run_pipeline`` copies the
graph (before the first pass that would change it, see ``run_pipeline_on``), runs each pass in order, checks the
graph's invariants after each (``verify``) and records a ``PassReport``. ``GRAPH_LAB_LOGS=passes`` (or
``set_logs("passes")``) prints every report and change as it happens.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterable

from .. import logs
from ..ir.graph import Graph
from ..ir.subgraphs import copy_graph
from .fresh_outputs import keep_outputs_apart
from .pipelines import ANSWERED_BY, PASSES, WOULD_CHANGE, pipeline_passes


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
