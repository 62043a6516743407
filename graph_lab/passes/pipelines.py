"""The passes and pipelines by name: what ``run_pipeline`` (``manager.py``) runs.

Pipelines:

- ``none``: no pass.
- ``exact``: algebraic simplification, constant folding, CSE and DCE. Bit for bit: the graph computes exactly
  what it computed before, for every input.
- ``fast_math``: ``exact`` plus rewrites true of real numbers only (``x / c -> x * (1/c)``, reassociation of
  constants); within a documented tolerance, every zero keeping its sign.
- ``inference``: parameters frozen into constants, then conv + batch-norm folding and everything ``exact`` does,
  so weight arithmetic is computed once. Within a tolerance (the folded weights are rounded); a compiled graph
  from it no longer accepts parameter overrides.
"""

from __future__ import annotations

from typing import Callable, Iterable

from ..ir.graph import Graph
from .conv_bn import fold_conv_bn
from .cse import cse
from .dce import dce
from .fast_math import simplify_fast_math
from .fold import fold_constants, freeze_params
from .simplify import simplify

Pass = Callable[[Graph], list[str]]

PASSES: dict[str, Pass] = {
    "simplify": simplify,              # exact algebraic rules (x * 1, --x, transpose/reshape chains, ...)
    "fold": fold_constants,            # run constant subgraphs once
    "cse": cse,                        # one node per distinct computation
    "dce": dce,                        # drop what no output needs
    "fast_math": simplify_fast_math,   # not bit-exact: x / c -> x * (1/c), reassociation
    "freeze_params": freeze_params,    # parameters become constants (no overrides afterwards)
    "conv_bn": fold_conv_bn,           # batch norm folded into the convolution before it
}

PIPELINES: dict[str, list[str]] = {
    "none": [],
    "exact": ["simplify", "fold", "cse", "dce"],
    "fast_math": ["simplify", "fast_math", "fold", "cse", "dce"],
    "inference": ["freeze_params", "simplify", "conv_bn", "fold", "cse", "dce"],
}

EXACT_PIPELINES = frozenset({"none", "exact"})
"""Pipelines after which a graph computes the same bits as before."""


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
