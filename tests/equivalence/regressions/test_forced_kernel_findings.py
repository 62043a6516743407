"""What F9 (the fuzzer's programs with every fused kernel and C program forced) found, kept as regressions: the
shrunk program it printed, replayed through the way that failed and through every way of F1.

    1. fused, C programs: ``np.ones_like(x)`` between two slice updates that one C program computes read ``x``
       for its shape only, so the reordering check let the program move past it; the planner then met ``x``
       before the program had made it (KeyError in ``codegen.c_ordered_values``)
    2. compile (every backend): ``np.diag`` of a vector was taken for a read-only view, as ``np.diag`` of a
       matrix is; an ``np.minimum.at`` into it broke the graph and the write was lost (a silently wrong
       result); NumPy makes a new, writable matrix there
    3. fused: a kernel ending in a sum or mean added in C order, where NumPy adds a ufunc's result in its memory
       order, which follows the operands' (a transposed or diagonal view, an F-ordered argument): last bits
       differed; such a call now runs the group's NumPy calls (``backends/result_order.py``)
"""

from __future__ import annotations

import numpy as np
import pytest

from graph_lab.backends.compiled import compile_graph
from graph_lab.frontends.trace import trace
from graph_lab.testing.differential import replay
from graph_lab.testing.forced_kernels import FORCED
from graph_lab.testing.ways import USER_WAYS, WAYS

from tests.support.backend_support import needs_compiler

SHAPE_READ_BETWEEN_UPDATES = """\
def program(x0, x2):
    h3 = x0[::2]
    h3[h3 < 0.0] *= 0.5
    h8 = np.ones_like(x0)
    h13 = x2.copy()
    h13[::2] *= 0.25
    return (h8, h13)
"""

DIAG_OF_A_VECTOR_WRITTEN = """\
def program(x0):
    h2 = np.diag(x0)
    np.minimum.at(h2, np.array([2, 0, 2]), 0.0)
    return (h2,)
"""


def _calls(*shapes, dtype="float64"):
    rng = np.random.default_rng(7)
    return [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(3)]


@needs_compiler
def test_a_shape_read_between_two_updates_of_one_c_program():
    calls = [[a, b.astype(np.float64)] for a, b in _calls((3, 3), (3, 1), dtype="float32")]
    assert replay(SHAPE_READ_BETWEEN_UPDATES, "compile/exact/fused_always", calls) is None


@pytest.mark.parametrize("way_name", [w.name for w in WAYS + USER_WAYS if w.frontend.name in ("compile", "user")])
def test_diag_of_a_vector_is_a_new_array_a_write_reaches(way_name):
    assert replay(DIAG_OF_A_VECTOR_WRITTEN, way_name, _calls((3,))) is None


@needs_compiler
def test_diag_of_a_vector_written_with_forced_kernels():
    for way_name in ("compile/exact/fused_always", "trace/none/fused_always"):
        assert replay(DIAG_OF_A_VECTOR_WRITTEN, way_name, _calls((3,))) is None, way_name


@needs_compiler
def test_a_reducing_kernel_adds_an_f_ordered_operand_in_numpys_order():
    def f(x):
        return np.mean(x * 2.0 + 1.0)
    compiled = compile_graph(trace(f, {"x": ((37, 23), np.float64)}), backend="fused", options=FORCED)
    rng = np.random.default_rng(1)
    for _ in range(50):
        x = np.asfortranarray(rng.standard_normal((37, 23)))
        assert compiled(x)[0] == f(x)
