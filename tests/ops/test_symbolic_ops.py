"""Every op's shape rule on symbolic sizes: the OpInfo table traced with each size >= 2 made a symbol.

Each sample is traced with its inputs' sizes named (``s0, s1, ...``, one per dimension) and its arrays as the
example, so that a rule which must decide something about a size (a slice bound, a static reshape target) takes
the example's answer and guards it. The symbolic graph must verify, print and parse back, predict NumPy's output
shapes for the example's sizes, and compute what NumPy computes, bit for bit.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from graph_lab import TraceError, check_guards, parse, run, trace
from graph_lab.ir.symbolic import evaluate
from tests.support.opinfo import SAMPLES, Sample
from tests.ops.test_ops import assert_same, leaves


def symbolic_shapes(sample: Sample) -> tuple[dict, dict, list[str]]:
    """``({name: (shape with symbols, dtype)}, {name: array}, names)`` for the sample's inputs."""
    names = [p.name for p in inspect.signature(sample.fn).parameters.values()
             if p.kind == p.POSITIONAL_OR_KEYWORD][:len(sample.inputs)]
    if len(names) < len(sample.inputs):
        names = [f"x{i}" for i in range(len(sample.inputs))]
    shapes, count = {}, 0
    for name, x in zip(names, sample.inputs):
        dims = []
        for d in x.shape:
            dims.append(f"s{count}" if d >= 2 else d)
            count += d >= 2
        shapes[name] = (tuple(dims), x.dtype)
    return shapes, dict(zip(names, sample.inputs)), names


# Samples refused on symbolic sizes, on purpose: the refusal says why, and nothing is computed wrong.
REFUSED = {
    # x (s0, s1) reshaped to (2, 2, 3): only s0*s1 == 12 is known, so whether the reshape splits a dimension (a
    # view NumPy writes through) or merges them (maybe a copy) is not; the write into it is refused.
    "index_update-write-through-reshape": "in-place write into the result of a reshape",
}
SYMBOLIC = [s for s in SAMPLES if any(d >= 2 for x in s.inputs for d in x.shape) and s.id not in REFUSED]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("sample", SYMBOLIC, ids=[s.id for s in SYMBOLIC])
def test_op_sample_with_symbolic_sizes(sample: Sample):
    shapes, example, names = symbolic_shapes(sample)
    with np.errstate(all="ignore"):
        expected = leaves(sample.ref(*[x.copy() for x in sample.inputs]))
        g = trace(sample.fn, shapes, example={k: v.copy() for k, v in example.items()})
        results = run(g, {k: v.copy() for k, v in example.items()})
    g.verify()
    assert check_guards(g, example)
    assert str(parse(str(g))) == str(g)
    sizes = {d: x.shape[i] for name, x in example.items() for i, d in enumerate(shapes[name][0]) if type(d) is str}
    for i, (value, result, want) in enumerate(zip(g.outputs, results, expected)):
        predicted = tuple(evaluate(d, sizes) for d in value.type.shape)
        assert (value.type.dtype, predicted) == (want.dtype, want.shape), f"output {i}: the graph says {value.type}"
        assert_same(result, want, f"output {i} of the symbolic graph")


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.id in REFUSED], ids=lambda s: s.id)
def test_refused_samples_say_why(sample: Sample):
    shapes, example, _ = symbolic_shapes(sample)
    with pytest.raises(TraceError, match=REFUSED[sample.id]):
        trace(sample.fn, shapes, example=example)
