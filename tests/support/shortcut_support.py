"""Graphs for the speed-up property tests (``test_shortcuts_*.py``): seeded random programs of the fuzzer's
generator (``graph_lab.testing``), traced, with an input set each. Deterministic from the seeds."""

from __future__ import annotations

from graph_lab import trace
from graph_lab.testing.generator import Options, generate

STRAIGHT = Options(data_ifs=False, side_effects=False, probes=False, python=False)
"""Programs trace() can capture whole: ops, loops and ``if`` on shapes, no Python values taken from data."""


def random_programs(seeds, options: Options = STRAIGHT) -> list:
    """``(name, function, arrays by argument name)`` for each seed whose program takes arrays only."""
    out = []
    for seed in seeds:
        program = generate(seed, options)
        if program.python_arg:
            continue
        arrays = dict(zip([a.name for a in program.args], program.inputs(0)))
        out.append((f"program {seed}", program.namespace()["program"], arrays))
    return out


def shapes_of(arrays: dict) -> dict:
    return {name: (a.shape, a.dtype) for name, a in arrays.items()}


def random_graphs(seeds, options: Options = STRAIGHT) -> list:
    """``(name, graph, inputs)``: each program traced for its arrays (as ``backend_support.cases`` gives them)."""
    return [(name, trace(fn, shapes_of(arrays), mode="guard", example=arrays), arrays)
            for name, fn, arrays in random_programs(seeds, options)]
