"""The pass manager: runs a pipeline of passes and reports what each did.

    g2, reports = run_pipeline(g, "exact")        # g is left as it was; g2 is a transformed copy
    for r in reports: print(r)                     # "cse: 14 -> 12 ops, 2 changes (0.1 ms)"

A pass is a function ``Graph -> list[str]`` that edits the graph in place and returns one line per change (an
empty list: nothing changed). The passes and pipelines by name are ``pipelines.py``. ``run_pipeline`` copies the
graph, runs each pass in order, checks the graph's invariants after each (``verify``) and records a
``PassReport``. ``GRAPH_LAB_LOGS=passes`` (or ``set_logs("passes")``) prints every report and change as it
happens. (``change_check.py`` is the same pipeline for compile(), which skips the copy when no pass would change
the graph.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterable

from .. import logs
from ..ir.graph import Graph
from ..ir.subgraphs import copy_graph
from .fresh_outputs import keep_outputs_apart
from .pipelines import PASSES, pipeline_passes


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
    names = pipeline_passes(pipeline)
    work = copy_graph(graph)
    return work, run_passes(graph, work, names, verify=verify, log=log)


def run_passes(original: Graph, work: Graph, names: list[str], *, verify: bool, log: bool) -> list[PassReport]:
    """Run the passes ``names`` in order on ``work`` (a copy of ``original``), one report each, then keep apart
    the outputs the passes made share memory (``fresh_outputs``)."""
    reports = []
    for name in names:
        before = work.count()
        start = time.perf_counter()
        changes = PASSES[name](work)
        report = PassReport(name, before, work.count(), changes, time.perf_counter() - start)
        if verify:
            work.verify()
        reports.append(report)
        log_report(report, log)
    _keep_outputs_apart(original, work, reports, verify, log)
    return reports


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
        log_report(report, log)


def log_report(report: PassReport, to_stdout: bool) -> None:
    """Print the report and its changes when asked (``log``), and emit them when ``passes`` logging is on."""
    if not to_stdout and not logs.on("passes"):
        return
    text = "\n".join([str(report)] + [f"  {line}" for line in report.changes])
    if to_stdout:
        print(text)
    logs.emit("passes", text)
