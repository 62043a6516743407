"""``replace_pattern``: pattern and replacement written as ordinary functions, as in torch.fx::

    def pattern(h):
        return 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))

    def replacement(h):
        return F.gelu(h)

    matches = replace_pattern(g, pattern, replacement)   # edits g in place; g stays valid

Both functions are traced with ``trace``, and the graphs go to the pass ``passes/rewrite.py``, which says what a
match is.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping

from ..errors import GraphEditError, TraceError
from ..ir.graph import Graph
from ..passes.rewrite import Match, replace_matches
from .trace import trace


def replace_pattern(graph: Graph, pattern: Callable, replacement: Callable,
                    shapes: Mapping[str, Any] | None = None) -> list[Match]:
    """Replace every non-overlapping match of ``pattern`` in ``graph`` by ``replacement``, in place.

    Patterns and replacements are ordinary functions, traced, as in torch.fx. Works on the top-level graph, not
    inside regions.

    Parameters:
        graph: the graph to edit; it stays valid.
        pattern: a function of tensors whose traced graph is searched for.
        replacement: a function with the same arguments and outputs, traced and spliced in for each match.
        shapes: argument name -> shape, what the two functions are traced with (default: a scalar per
            argument); it matters only where an attribute depends on rank, as a negative axis does.

    Returns:
        The matches replaced.
    """
    return replace_matches(graph, _trace(pattern, shapes), _trace(replacement, shapes))


def _trace(fn: Callable, shapes: Mapping[str, Any] | None) -> Graph:
    if shapes is None:
        shapes = {name: () for name in inspect.signature(fn).parameters}
    try:
        return trace(fn, shapes)
    except TraceError as e:
        raise GraphEditError(f"could not trace {getattr(fn, '__name__', fn)} with shapes {dict(shapes)}: {e}\n"
                             f"Pass shapes={{argument: shape}} of the rank the pattern is written for") from None
