"""The reference interpreter: the living definition of every op. Every other backend is tested against it."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..errors import GraphExecutionError, GraphInputError
from ..ir.types import dtype_name
from ..ops import Op, opdef


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
    for k, v in inputs.items():
        if not isinstance(v, (np.ndarray, np.generic)):
            raise GraphInputError(f"input {k!r} must be a NumPy array, got {type(v).__name__}. {_expected(graph)}")
    return dict(inputs)


def _expected(graph) -> str:
    shown = ", ".join(f"{name}: {t}" for name, t in graph.input_types().items())
    return f"The graph takes ({shown})" + (f" and optionally its parameters {sorted(graph.param_values)}"
                                           if graph.param_values else "")


def execute(graph, inputs: Mapping[str, object]) -> dict:
    """Run every node in order; return the environment mapping each value to its array."""
    env: dict = {}
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
            try:
                result = opdef(op).impl(*[env[v] for v in node.inputs], **node.attrs)
            except Exception as e:
                raise GraphExecutionError(f"while executing {graph.node_text(node)}: {type(e).__name__}: {e}",
                                          node) from e
            # a multi-output op returns a tuple even when it has one output (np.split(x, 1))
            outs = result if opdef(op).multi_output else (result,)
            for v, r in zip(node.outputs, outs):
                env[v] = r
    return env


def run(graph, inputs: Mapping[str, object]) -> list[np.ndarray]:
    """Execute ``graph`` on ``inputs`` (name -> array) and return its outputs as arrays, in order."""
    bound = bind_inputs(graph, inputs)
    try:
        env = execute(graph, bound)
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


def prepare(graph):
    """The interpreter with its bookkeeping done once: a function ``inputs -> outputs`` for repeated calls.

    Values live in a list indexed by position instead of a dict, and each step's implementation, operand
    positions and attributes are looked up once. It runs the same NumPy calls in the same order as ``run``.
    """
    slot: dict = {}
    loads, steps = [], []
    for node in graph.nodes:
        for v in node.outputs:
            slot[v] = len(slot)
        if node.op == Op.INPUT:
            loads.append((slot[node.outputs[0]], node.attrs["name"], None))
        elif node.op == Op.PARAM:
            loads.append((slot[node.outputs[0]], node.attrs["name"], graph.param_values[node.attrs["name"]]))
        elif node.op == Op.CONST:
            loads.append((slot[node.outputs[0]], None, node.attrs["value"]))
        else:
            steps.append((opdef(node.op).impl, tuple(slot[v] for v in node.inputs), node.attrs,
                          tuple(slot[v] for v in node.outputs), opdef(node.op).multi_output, node))
    outputs = [slot[v] for v in graph.outputs]
    size = len(slot)

    def run_prepared(inputs):
        env = [None] * size
        for i, name, value in loads:
            env[i] = inputs[name] if name is not None and (value is None or name in inputs) else value
        for impl, ins, attrs, outs, multi_output, node in steps:
            try:
                result = impl(*[env[j] for j in ins], **attrs)
            except Exception as e:
                raise GraphExecutionError(f"while executing {graph.node_text(node)}: {type(e).__name__}: {e}",
                                          node) from e
            if not multi_output:  # (a multi-output op returns a tuple even for one output: np.split(x, 1))
                env[outs[0]] = result
            else:
                for j, r in zip(outs, result):
                    env[j] = r
        return [env[j] for j in outputs]

    return run_prepared
