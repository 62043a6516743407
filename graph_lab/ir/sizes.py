"""Running a symbolic graph: each size symbol bound from the inputs' shapes, the shape guards checked, and the
attributes that hold sizes (``reshape shape=(T, 2, d//2)``, ``size 1.0/d**0.5``) made concrete for one run.

This is the one mechanism by which sizes reach run time: attributes may hold symbolic expressions, and every
backend evaluates them with the sizes bound here before calling the op's implementation (the ``size`` op's
implementation just returns its bound attribute). No op reads shapes on its own.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .guard_records import ShapeGuard
from .symbolic import Expr, FloatExpr, evaluate, free_symbols, symbol_name


def is_symbolic_graph(graph) -> bool:
    """True when an input's shape holds a size symbol."""
    return any(type(d) is not int for n in graph.input_nodes for d in n.attrs["type"].shape)


def has_symbols(value) -> bool:
    """True when an attribute value holds a symbolic expression (also inside tuples and slices)."""
    if isinstance(value, (Expr, FloatExpr)):
        return True
    if isinstance(value, tuple):
        return any(has_symbols(v) for v in value)
    if isinstance(value, dict):
        return any(has_symbols(v) for v in value.values())
    return False


def bind_attrs(attrs: dict, sizes: Mapping[str, int]) -> dict:
    """``attrs`` with every symbolic expression replaced by its value for ``sizes``."""
    return {k: _bind(v, sizes) for k, v in attrs.items()}


def _bind(value, sizes):
    if isinstance(value, (Expr, FloatExpr)):
        return evaluate(value, sizes)
    if isinstance(value, tuple) and has_symbols(value):
        items = [_bind(v, sizes) for v in value]
        return type(value)._make(items) if hasattr(type(value), "_make") else tuple(items)
    return value


def symbol_sources(graph) -> dict[str, tuple[str, int]]:
    """Where each symbol is read from: ``{"T": ("x", 0)}``, the first input dimension that is exactly it."""
    out: dict[str, tuple[str, int]] = {}
    for node in graph.input_nodes:
        for axis, d in enumerate(node.attrs["type"].shape):
            name = symbol_name(d)
            if name is not None and name not in out:
                out[name] = (node.attrs["name"], axis)
    return out


def bind_sizes(graph, inputs: Mapping[str, object]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The value of each symbol for these inputs, and the ``(what, why)`` of every shape that does not conform
    (a wrong number of dimensions, a static size that differs, a symbol with two different sizes)."""
    sources = symbol_sources(graph)
    sizes: dict[str, int] = {}
    problems: list[tuple[str, str]] = []
    shapes = {name: np.shape(inputs[name]) for name in graph.input_names if name in inputs}
    for sym, (name, axis) in sources.items():
        if name in shapes and len(shapes[name]) > axis:
            sizes[sym] = shapes[name][axis]
    for node in graph.input_nodes:
        name, t = node.attrs["name"], node.attrs["type"]
        if name not in shapes:
            continue
        got = shapes[name]
        if len(got) != t.ndim:
            problems.append((f"{name}.shape", f"is {got}, the graph takes {t} ({t.ndim} dimensions)"))
            continue
        for axis, (want, size) in enumerate(zip(t.shape, got)):
            if type(want) is int:
                if size != want:
                    problems.append((f"{name}.shape[{axis}]", f"is {size}, the graph was built for {want}"))
                continue
            missing = free_symbols(want) - set(sizes)
            if missing:
                problems.append((f"{name}.shape[{axis}]", f"{want} cannot be computed: no input dimension is "
                                                          f"exactly {', '.join(sorted(missing))}"))
                continue
            expected = evaluate(want, sizes)
            if size != expected:
                origin = sources.get(symbol_name(want) or "", None)
                read = f" (read from {origin[0]}.shape[{origin[1]}])" if origin else ""
                problems.append((f"{name}.shape[{axis}]", f"is {size}, but {want} is {expected}{read}"))
    return sizes, problems


def failing_shape_guards(graph, sizes: Mapping[str, int]) -> list:
    """The ``(index, guard)`` of each shape guard of ``graph`` that ``sizes`` break."""
    return [(i, g) for i, g in enumerate(graph.guards) if isinstance(g, ShapeGuard) and not g.check(sizes)]


def sizes_text(names, sizes: Mapping[str, int]) -> str:
    """``d = 7, T = 5``: the sizes a message refers to."""
    return ", ".join(f"{n} = {sizes[n]}" for n in sorted(names) if n in sizes)


def checked_sizes(graph, inputs: Mapping[str, object]) -> dict[str, int]:
    """The sizes bound from ``inputs``, after every shape and shape guard was checked; ``GraphInputError``
    names each one that fails, with the user's line it came from."""
    from ..errors import GraphInputError
    sizes, problems = bind_sizes(graph, inputs)
    lines = [f"{what} {why}" for what, why in problems]
    if not problems:
        for i, g in failing_shape_guards(graph, sizes):
            lines.append(f"shape guard #{i} {g.describe()} fails: {sizes_text(free_symbols(g.fact), sizes)}")
    if lines:
        raise GraphInputError(f"inputs do not conform to the symbolic shapes of graph {graph.name}: "
                              + "; ".join(lines) + ". Capture again for these shapes, or give inputs that meet "
                                                   "the guards (graph_lab.failing_guards lists them)")
    return sizes
