"""Every backend x each pass pipeline equals the reference interpreter on every op-table sample and on every traced
model of the suite: bit for bit for interpret and codegen after the exact pipelines; within the documented
tolerance (graph_lab/backends/tolerance.py) for fused kernels and the fast-math and inference pipelines.

The kernels of all cases are compiled up front as one library (``precompile``), into this session's private
cache folder; each case then finds its kernels loaded."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.backend_support import ALWAYS, assert_bits, assert_close, cases, copies, needs_compiler, reference
from graph_lab import compile_graph, run_pipeline
from graph_lab.backends.fused import precompile

# (backend, pipeline, how the result is compared)
COMBINATIONS = [
    ("interpret", "exact", "bits"),
    ("codegen", "none", "bits"),
    ("codegen", "exact", "bits"),
    ("codegen", "fast_math", "fast_math"),
    ("codegen", "inference", "inference"),
    ("fused", "exact", "fused"),
    ("fused", "fast_math", "fast_math"),
]
CASES = cases()


@pytest.fixture(scope="module", autouse=True)
def kernels_compiled_once():
    graphs = [run_pipeline(g, p, verify=False)[0] for _, g, _ in CASES for p in ("exact", "fast_math")]
    compiled = precompile(graphs, ALWAYS)
    assert compiled > 100 or compiled == 0  # 0: no C compiler, and fused runs as codegen


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_backend_and_pipeline_equal_the_reference(case):
    name, graph, inputs = case
    expected = reference(graph, inputs)
    before = str(graph)
    for backend, pipeline, compare in COMBINATIONS:
        compiled = compile_graph(graph, backend, pipeline, options=ALWAYS)
        with np.errstate(all="ignore"):
            by_name = compiled(**copies(inputs))
            by_position = compiled(*copies(inputs).values())
        what = f"{name}: {backend} after {pipeline}"
        if compare == "bits":
            assert_bits(by_name, expected, what)
        else:
            assert_close(by_name, expected, what, compare)
        assert_bits(by_position, by_name, f"{what} (called positionally)")
    assert str(graph) == before, "compile_graph changed the graph it was given"


@needs_compiler
def test_the_cases_cover_fused_kernels_of_every_kernel_op():
    from graph_lab.backends.c_kernels import C_OPS
    from graph_lab.backends.c_integers import INTEGER_OPS
    from graph_lab.backends.partition import SPREADS
    from graph_lab.backends.c_row_kernels import ROW_OPS
    fused_ops = set()
    for _, graph, _ in CASES:
        compiled = compile_graph(graph, "fused", "exact", options=ALWAYS)
        if not hasattr(compiled, "kernels"):  # symbolic sizes or regions: run as codegen, said so
            assert compiled.backend == "codegen" and "ran as codegen" in compiled.explain()
            continue
        fused_ops |= {node.op for g in compiled.kernels for node in g.nodes}
    # (+ var and std: an op-table sample reduces its input, which is a kernel of its own for them; sums and means
    # join a kernel only after an elementwise op, which tests/backends/test_fused.py covers)
    # (and the integer ops the op-table samples compute on integer arrays: tests/backends/test_integer_kernels.py
    # has every one on every integer dtype)
    integer_ops = fused_ops & set(INTEGER_OPS) - set(C_OPS)
    assert integer_ops and fused_ops - integer_ops == set(C_OPS) | ROW_OPS | SPREADS
