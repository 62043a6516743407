"""The reference interpreter: the living definition of every op. Every other backend is tested against it."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..errors import GraphExecutionError, GraphInputError
from ..ops import Op, opdef


def bind_inputs(graph, inputs: Mapping[str, object]) -> dict[str, object]:
    """Check input names (not shapes: see ``check_guards``) and that each value is an array.

    Parameters may be given too, by name, to replace their stored values for this run."""
    if not isinstance(inputs, Mapping):
        raise GraphInputError(f"inputs must be a dict of name -> array; {_expected(graph)}")
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
            outs = result if opdef(op).multi_output else (result,)  # split into one piece is still a tuple
            for v, r in zip(node.outputs, outs):
                env[v] = r
    return env


def run(graph, inputs: Mapping[str, object]) -> list[np.ndarray]:
    """Execute ``graph`` on ``inputs`` (name -> array) and return its outputs as arrays, in order."""
    env = execute(graph, bind_inputs(graph, inputs))
    return [np.asarray(env[v]) for v in graph.outputs]
