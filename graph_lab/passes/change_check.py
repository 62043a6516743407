"""A speed-up of the pass pipeline, for compile(): ask each pass whether it would change a graph before copying it.

Most graphs compile() captures have nothing to fold, merge or remove, and copying a graph costs as much as a pass
over it. ``run_pipeline_on`` therefore asks each pass's check (``WOULD_CHANGE``: it looks without changing anything)
and, while none would change the graph, reports the pass as having found nothing, which it would have; at the
first pass that would (or that has no check) it copies the graph and runs the rest as ``run_pipeline`` does. The
result is ``run_pipeline``'s, without the copy when nothing changes: the graph itself is returned then, so it is
for a caller that owns ``graph`` and will not edit it afterwards (compile() with the graphs it captures).

Measured reason (instructions, so the machine's load does not matter: ``PYTHONPATH=. python3
benchmarks/shortcut_instructions.py passes``): a compile() first call of the W2 chain (capture, passes, code
generation) takes 7.05M instructions with it and 8.26M with ``run_pipeline`` at 8 layers, 14.6% less; 14.5% at
1 layer and 15.4% at 64. ``tests/passes/test_shortcuts_passes.py`` checks the checks and this driver against the
passes and ``run_pipeline`` on every graph of the test suite's cases and on random programs.
"""

from __future__ import annotations

import time
from typing import Callable, Iterable

from ..ir.graph import Graph
from ..ir.subgraphs import copy_graph
from .cse import cse, node_key
from .dce import dce, dead_nodes
from .fold import fold_constants, may_fold
from .manager import PassReport, log_report, run_passes
from .pipelines import PASSES, Pass, pipeline_passes
from .simplify import simplify
from .simplify_check import would_change as simplify_would_change


def fold_would_change(graph: Graph) -> bool:
    """Whether ``fold_constants(graph)`` would try to fold a node (then it may change the graph)."""
    return any(may_fold(node) for node in graph.nodes)


def cse_would_change(graph: Graph) -> bool:
    """Whether ``cse(graph)`` would merge two nodes (two with the same key)."""
    seen: set[tuple] = set()
    for node in graph.nodes:
        key = node_key(node)
        if key is None:
            continue
        if key in seen:
            return True
        seen.add(key)
    return False


def dce_would_change(graph: Graph) -> bool:
    """Whether ``dce(graph)`` would remove a node."""
    return bool(dead_nodes(graph))


WOULD_CHANGE: dict[Pass, Callable[[Graph], bool]] = {
    simplify: simplify_would_change,
    fold_constants: fold_would_change,
    cse: cse_would_change,
    dce: dce_would_change,
}
"""For a pass (the function), a check that the pass would leave a graph as it is and report nothing when it says
False. A pass without a check is taken to change the graph."""

ANSWERED_BY: dict[Pass, Pass] = {dce: simplify}
"""A pass whose check need not run on a graph that the other pass's check found unchanged: simplify's check says
True for any dead node (``remove_dead_code`` would drop it), and dce removes dead nodes only."""


def run_pipeline_on(graph: Graph, pipeline: str | Iterable[str] = "exact", *, verify: bool = True,
                    log: bool = False) -> tuple[Graph, list[PassReport]]:
    """``run_pipeline``, but returning ``graph`` itself when no pass changes it. ``graph`` is never changed: it
    is copied before the first pass that may change it."""
    names = pipeline_passes(pipeline)
    reports: list[PassReport] = []
    cleared: set[Pass] = set()  # the passes whose check found ``graph`` unchanged
    count = graph.count()
    for i, name in enumerate(names):
        apply = PASSES[name]
        start = time.perf_counter()
        if not _finds_nothing(apply, graph, cleared):
            work = copy_graph(graph)
            return work, reports + run_passes(graph, work, names[i:], verify=verify, log=log)
        cleared.add(apply)
        report = PassReport(name, count, count, [], time.perf_counter() - start)
        reports.append(report)
        log_report(report, log)
    if verify and names:
        graph.verify()
    return graph, reports


def _finds_nothing(apply: Pass, graph: Graph, cleared: set[Pass]) -> bool:
    check = WOULD_CHANGE.get(apply)
    if check is None:
        return False
    return ANSWERED_BY.get(apply) in cleared or not check(graph)
