"""The reference interpreter: the living definition of every op. Every other backend is tested against it.

A graph with symbolic sizes first binds each size from the inputs and checks its shape guards
(``ir/sizes.py``); symbolic attributes are then evaluated for those sizes before each op's implementation runs.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Mapping

import numpy as np

from ..errors import GraphExecutionError, GraphInputError
from ..ir.sizes import bind_attrs, bind_sizes, checked_sizes, is_symbolic_graph
from ..ir.symbolic import evaluate
from ..ir.types import TensorType, dtype_name
from ..ops import Op, opdef
from ..ops.control import RegionFn

if TYPE_CHECKING:  # (for annotations only)
    from ..ir.graph import Graph


def bind_inputs(graph, inputs: Mapping[str, object]) -> dict[str, object]:
    """Check input names (not shapes: see ``check_guards``) and that each value is an array.

    Parameters may be given too, by name, to replace their stored values for this run."""
    if not isinstance(inputs, Mapping):
        raise GraphInputError(f"inputs must be a dict of name -> array, got {type(inputs).__name__}. "
                              f"{_expected(graph)}")
    names = graph.input_names
    params = set(graph.param_values)
    missing = [n for n in names if n not in inputs]
    unexpected = [k for k in inputs if k not in names and k not in params]
    if missing or unexpected:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(map(repr, missing))}")
        if unexpected:
            parts.append(f"unexpected {', '.join(map(repr, unexpected))}")
        raise GraphInputError(f"wrong inputs for graph {graph.name}: {'; '.join(parts)}. {_expected(graph)}")
    types = graph.input_types()
    for k, v in inputs.items():
        if not is_input_value(v, types.get(k)):
            raise GraphInputError(f"input {k!r} must be a NumPy array, got {type(v).__name__}. {_expected(graph)}")
    return dict(inputs)


def is_input_value(value, declared) -> bool:
    """An array, or a Python number for an input typed as one (compile() makes those: ``global G: float``)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return True
    return declared is not None and declared.weak is not None and isinstance(value, (bool, int, float, complex))


def _expected(graph) -> str:
    shown = ", ".join(f"{name}: {t}" for name, t in graph.input_types().items())
    return f"The graph takes ({shown})" + (f" and optionally its parameters {sorted(graph.param_values)}"
                                           if graph.param_values else "")


def execute(graph, inputs: Mapping[str, object], sizes: Mapping[str, int] | None = None) -> dict:
    """Run every node in order; return the environment mapping each value to its array. A symbolic graph's
    sizes are bound from ``inputs`` unless given (nothing is checked here: ``run`` checks)."""
    env: dict = {}
    if sizes is None and is_symbolic_graph(graph):
        sizes = bind_sizes(graph, inputs)[0]
    for node in graph.nodes:
        op = node.op
        if op == Op.INPUT:
            env[node.outputs[0]] = inputs[node.attrs["name"]]
        elif op == Op.PARAM:
            name = node.attrs["name"]
            env[node.outputs[0]] = inputs[name] if name in inputs else graph.param_values[name]
        elif op == Op.CONST:
            env[node.outputs[0]] = node.attrs["value"]
        else:
            definition = opdef(op)
            attrs = bind_attrs(node.attrs, sizes) if sizes else node.attrs
            if definition.regions:
                attrs = impl_attrs(node, region_runner, attrs)
            try:
                result = definition.impl(*[env[v] for v in node.inputs], **attrs)
            except Exception as e:
                raise GraphExecutionError(f"while executing {graph.node_text(node)}: {type(e).__name__}: {e}",
                                          node) from e
            if definition.multi_output:  # a tuple even when it has one output (np.split(x, 1))
                for v, r in zip(node.outputs, result):
                    env[v] = r
            else:
                env[node.outputs[0]] = result
    return env


def impl_attrs(node, runner, attrs: dict | None = None) -> dict:
    """The attributes (``node.attrs`` unless given, e.g. with sizes bound) as the op's implementation takes them:
    each region graph replaced by a ``RegionFn`` that runs it (``runner(region)`` makes the function). Nodes
    without regions keep their attributes as they are."""
    attrs = node.attrs if attrs is None else attrs
    keys = opdef(node.op).regions
    if not keys:
        return attrs
    attrs = dict(attrs)
    for key in keys:
        region = node.attrs[key]
        attrs[key] = RegionFn(_named(runner(region), key), partial(result_types, region))
    return attrs


def result_types(region, *values) -> tuple:
    """The types of ``region``'s outputs for inputs like ``values``: its symbolic sizes bound from their shapes."""
    types = tuple(v.type for v in region.outputs)
    if not is_symbolic_graph(region):
        return types
    sizes = bind_sizes(region, dict(zip(region.input_names, values)))[0]
    return tuple(TensorType(t.dtype, tuple(evaluate(d, sizes) if type(d) is not int else d for d in t.shape))
                 for t in types)


def _named(fn, key: str):
    """``fn``, with a failure inside it saying which region it happened in."""
    def run_region(*values):
        try:
            return fn(*values)
        except GraphExecutionError as e:
            raise GraphExecutionError(f"in region {key}: {e}", e.node) from e
    return run_region


def region_runner(region):
    """A function running ``region`` with the reference interpreter: its inputs in order -> its outputs."""
    names = region.input_names

    def run_region(*values):
        env = execute(region, dict(zip(names, values)))
        return [env[v] for v in region.outputs]
    return run_region


def run(graph: Graph, inputs: Mapping[str, object]) -> list[np.ndarray]:
    """Execute ``graph`` with the reference interpreter and return its outputs as arrays, in order.

    It runs the graph as recorded: static shapes and value guards are not re-checked (that is
    ``check_guards``'s job); a graph with symbolic sizes binds them from the inputs and checks its shape guards.

    Parameters:
        graph: the graph to run.
        inputs: input name -> array (a Python number for a number-typed input).

    Returns:
        One array per graph output.

    Raises:
        GraphInputError: wrong input names, or a value that is not an array.
        GraphExecutionError: an op failed; the message starts with ``while executing %N = op(...)`` and the
            user's source line, and ``.node`` is the node.
    """
    bound = bind_inputs(graph, inputs)
    sizes = checked_sizes(graph, bound) if is_symbolic_graph(graph) else {}
    try:
        env = execute(graph, bound, sizes)
    except GraphExecutionError as e:
        mismatches = _type_mismatches(graph, bound)
        if not mismatches:
            raise
        # The usual cause: a graph traced for one shape run on another. Say so, after the failing node.
        raise GraphExecutionError(f"{e}. The inputs differ from the types the graph was traced for "
                                  f"({'; '.join(mismatches)}): trace again for these inputs "
                                  f"(check_guards(graph, inputs) tells before running)", e.node) from e.__cause__
    return [np.asarray(env[v]) for v in graph.outputs]


def _type_mismatches(graph, inputs: Mapping[str, object]) -> list[str]:
    """``"x is f64[5,8], traced as f64[4,8]"`` for each input or given parameter whose type differs."""
    out = []
    for node in graph.nodes:
        if node.op in (Op.INPUT, Op.PARAM) and node.attrs["name"] in inputs:
            name, traced = node.attrs["name"], node.output.type
            x = np.asarray(inputs[name])
            if x.shape != traced.shape or x.dtype != traced.dtype:
                out.append(f"{name} is {dtype_name(x.dtype)}[{','.join(map(str, x.shape))}], traced as {traced}")
    return out
