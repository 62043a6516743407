"""``make_graph(fn, *args)``: capture a function from shapes and dtypes alone, as ``jax.make_jaxpr`` does.

Each ``Spec`` argument is an abstract array: a shape (ints, names, ``Dim``\\ s) and a dtype, no data. The function
runs once on stand-ins and every value in the graph is typed by the op rules, so this is abstract interpretation
in the course note's sense (section 3.3). With no example there is nothing to guess from: a branch on data is a
``TraceError``, and so is a branch on a symbolic size that the sizes' ranges do not decide (give ``Dim`` bounds,
or use ``trace`` with an example).

    g = make_graph(mlp, Spec(("B", 128), "float32"), params)
    print(g)        # %0: f32[B,128] = input "x" ...
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import TraceError
from ..ir.graph import Graph
from ..ir.shape_env import Dim
from ..ir.source import user_location
from . import pytree
from .tensor import Storage, Tensor
from .trace import Tracer, finish, input_type, new_shape_env, parse_spec


@dataclass(frozen=True)
class Spec:
    """An abstract array argument of ``make_graph``: its shape and dtype, no data."""

    shape: tuple
    """Sizes: ints, names (``"B"``) or ``Dim``\\ s; a name stands for ``Dim(name)``."""
    dtype: Any = np.float64
    """Anything ``np.dtype`` accepts."""


def make_graph(fn: Callable, *args: Any) -> Graph:
    """The graph of ``fn(*args)``, captured from shapes and dtypes alone (the ``jax.make_jaxpr`` of graph_lab).

    Parameters:
        fn: the function to capture.
        *args: ``fn``'s positional arguments. Each ``Spec(shape, dtype)`` becomes a typed graph input named after
            ``fn``'s parameter (a size may be a name, making it symbolic); arrays (also inside dicts, lists and
            tuples) become named parameters stored with the graph; anything else (ints, strings, flags) is
            ordinary Python, fixed at capture.

    Returns:
        The captured ``Graph``.

    Raises:
        TraceError: as for ``trace``; no data exists while capturing, so a value needed by Python is an error.
    """
    loc = user_location(1)
    names = _parameter_names(fn, len(args), loc)
    specs = {}
    for name, a in zip(names, args):
        if isinstance(a, Spec):
            try:
                specs[name] = parse_spec(name, (tuple(a.shape), a.dtype))
            except TraceError as e:
                raise TraceError(f"{str(e).replace('shapes[', 'Spec for ')}\n  at {loc.describe() if loc else '?'}") \
                    from None
    graph = Graph(getattr(fn, "__name__", "graph").replace("<lambda>", "lambda"))
    tracer = Tracer(graph, "error", None)
    if any(isinstance(d, Dim) for dims, _ in specs.values() for d in dims):
        tracer.shape_env = new_shape_env(tracer, None, "guard")
    call_args = []
    for name, a in zip(names, args):
        if name in specs:
            value = graph.add_input(name, input_type(tracer, name, *specs[name], loc), loc)
            call_args.append(Tensor(tracer, value, Storage(f"input {name!r}")))
        else:
            call_args.append(pytree.tree_map(_param_maker(tracer, loc), a, name))
    return finish(tracer, fn, call_args)


def _param_maker(tracer: Tracer, loc):
    def make(path: str, leaf):
        if isinstance(leaf, np.ndarray):
            return Tensor(tracer, tracer.graph.add_param(path, leaf, loc), Storage(f"parameter {path}"))
        return leaf
    return make


def _parameter_names(fn: Callable, count: int, loc) -> list[str]:
    """The names of ``fn``'s first ``count`` positional parameters (``arg3`` past a ``*args``)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [f"arg{i}" for i in range(count)]
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(names) < count:
        if not any(p.kind == p.VAR_POSITIONAL for p in params):
            raise TraceError(f"make_graph got {count} arguments but {getattr(fn, '__name__', fn)} takes "
                             f"{len(names)} positional ones ({', '.join(names)})\n  at "
                             f"{loc.describe() if loc else 'unknown location'}")
        names += [f"arg{i}" for i in range(len(names), count)]
    return names[:count]
