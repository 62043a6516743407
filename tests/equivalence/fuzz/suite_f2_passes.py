"""F2 passes: each pass on vs off on the same traced graph: differences, and how often each pass fired.

Programs are random programs with identities wrapped around some of their expressions (metamorphic.py), so the
rewrite rules have something to do. Every pass pipeline of the ways registry is a pass here, and so is every
rule of ``simplify`` alone (a rule is the unit that can be wrong). A pass must leave a valid graph (it
verifies) that computes the same bits on every input its guards accept.
"""

from __future__ import annotations

import random
import warnings
from collections import Counter

import numpy as np

from tests.equivalence.fuzz.fuzz_report import Figure, Timer
from graph_lab import GraphLabError, check_guards, trace
from graph_lab import run as run_graph
from graph_lab.equivalence import compare
from graph_lab.passes.simplify import simplify
from graph_lab.passes.simplify_rules import RULES
from graph_lab.testing.generator import generate
from graph_lab.testing.metamorphic import rewrite
from graph_lab.passes.pipelines import PASSES
from graph_lab.testing.ways import PIPELINES


NOT_EXACT = {"fast_math", "conv_bn"}
"""Passes that change results within a documented tolerance (backends/tolerance.py), not bit for bit."""


def passes() -> dict[str, tuple]:
    """name -> (pass: Graph -> report lines, exact): every registered pipeline, every pass of the pass manager
    alone, and every rule of ``simplify`` alone."""
    out = {f"pipeline {name}": (p.apply, p.exact) for name, p in PIPELINES.items() if name != "none"}
    out.update({name: (apply, name not in NOT_EXACT) for name, apply in PASSES.items()})
    for rule in RULES:
        out[f"rule {rule.name}"] = (lambda g, rule=rule: simplify(g, [rule]), True)
    return out


def traced(program, inputs):
    namespace = program.namespace()
    names = [a.name for a in program.args]
    example = dict(zip(names, inputs))
    return trace(namespace["program"], {n: (x.shape, x.dtype) for n, x in example.items()}, mode="guard",
                 example=example)


def copy_graph(g):
    """A copy with the same inputs (even unused ones), nodes and outputs."""
    new = g.extract(list(g.outputs), name=g.name, cut={n.output: n.attrs["name"] for n in g.input_nodes})
    new.out_tree = g.out_tree
    return new


def run(count: int, seed: int = 0) -> Figure:
    figure = Figure("F2 passes on vs off")
    rng = random.Random(seed)
    fired, graphs_changed, differences, invalid = Counter(), Counter(), Counter(), Counter()
    graphs = compared = 0
    all_passes = passes()
    with Timer() as timer, np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(seed, seed + count):
            program, _ = rewrite(generate(s), rng, how_many=4)
            calls = [program.inputs(k) for k in range(3)]
            try:
                g = traced(program, calls[0])
            except GraphLabError:
                continue
            graphs += 1
            names = [a.name for a in program.args]
            valid = [dict(zip(names, c)) for c in calls if check_guards(g, dict(zip(names, c)))]
            expected = [run_graph(g, x) for x in valid]
            for name, (apply, exact) in all_passes.items():
                h = copy_graph(g)
                report = apply(h)
                fired[name] += len(report)
                graphs_changed[name] += bool(report)
                try:
                    h.verify()
                except GraphLabError as e:
                    invalid[name] += 1
                    figure.failures.append(f"{name} left an invalid graph (program seed {s}): {e}")
                    continue
                for x, want in zip(valid, expected):
                    compared += 1
                    mismatch = compare(want, run_graph(h, x), exact=exact)
                    if mismatch:
                        differences[name] += 1
                        figure.failures.append(f"{name} changed a result (program seed {s}): {mismatch}")
                        break
    figure.seconds = timer.seconds
    figure.add("graphs traced", graphs)
    figure.add("pass x graph x input comparisons", compared)
    figure.add("differences", sum(differences.values()))
    figure.add("invalid graphs after a pass", sum(invalid.values()))
    for name in all_passes:
        figure.add(f"{name}: changes / graphs changed", f"{fired[name]} / {graphs_changed[name]}")
    return figure
