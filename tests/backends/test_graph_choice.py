"""How a whole graph runs, decided by the cost model, and explain() saying which way and why.

Where no kernel pays (small arrays; operands that are strided views, which a kernel call copies first), the
graph runs as the NumPy calls eager code makes, with eager's results bit for bit; explain() says so."""

import numpy as np

import graph_lab as gl
from graph_lab.backends.cost import MIN_ELEMENTS, GroupCost, decide

from tests.support.backend_support import CALIBRATION


def small_program(x, y):
    return np.tanh(x) * y + 1.0


def test_small_arrays_run_as_eagers_numpy_calls_and_explain_says_why():
    x, y = np.linspace(-1, 1, 30), np.arange(30.0)
    report = gl.explain(small_program)(x, y)
    text = str(report)
    assert "graph 0 runs as NumPy calls in generated code" in text
    assert f"every group is under {MIN_ELEMENTS} elements" in text
    np.testing.assert_array_equal(gl.compile(small_program)(x, y), small_program(x, y), strict=True)


def test_copies_of_strided_operands_count_against_a_kernel():
    # two ops over 65536 float64 (NumPy moves 3 arrays for each; the kernel reads two inputs and writes one
    # result): worth a kernel when the operands are in C order, not when both must be copied to C order first
    n = 65536
    plain = GroupCost(n, 2, 6 * n * 8, (), 2, 3, 3 * n * 8)
    copied = GroupCost(n, 2, 6 * n * 8, (), 2, 3, 3 * n * 8, copies=2, copied_bytes=2 * n * 8)
    assert decide(plain, CALIBRATION).fuse
    decision = decide(copied, CALIBRATION)
    assert not decision.fuse and "not worth a kernel" in decision.reason
