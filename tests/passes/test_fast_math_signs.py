"""The fast_math pipeline keeps the sign of every zero and never makes a NaN eager NumPy does not make.

A zero's sign is not a "last bit": ``np.angle``, ``arctan2`` and ``1 / x`` turn -0.0 vs +0.0 into
pi vs 0 or -inf vs inf, so a rule that changes it (``x + 0.0 -> x``: ``-0.0 + 0.0`` is ``+0.0``) breaks any ulps
tolerance. The reference is eager NumPy on inputs holding both zeros.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.backend_support import assert_bits, assert_close
from graph_lab import compile_graph, run, trace
from graph_lab.passes.fast_math import simplify_fast_math
from graph_lab.testing.differential import replay

BOTH_ZEROS = np.array([[-0.0, 0.0, -1.5], [2.0, -0.0, 0.0]])


def sign_sensitive(x):
    """Each output tells -0.0 from +0.0 after an addition of a zero that NumPy turns into +0.0."""
    return (np.angle(np.flip(x) + 0), 1 / (x + 0.0), 1 / (x - (-0.0)), np.arctan2(x + 0.0, -1.0),
            x + 0.0)


@pytest.mark.parametrize("backend", ["interpret", "codegen", "fused"])
def test_adding_a_zero_keeps_numpys_zero_signs(backend):
    g = trace(sign_sensitive, {"x": BOTH_ZEROS.shape})
    expected = list(sign_sensitive(BOTH_ZEROS.copy()))
    got = compile_graph(g, backend=backend, passes="fast_math")(BOTH_ZEROS.copy())
    assert_close(got, expected, f"fast_math/{backend}", "fast_math")
    assert np.array_equal(np.signbit(got[-1]), np.signbit(expected[-1]))  # -0.0 + 0.0 came out +0.0
    assert np.all(got[0][np.flip(BOTH_ZEROS) == 0] == 0.0)  # not pi


# seed 57 of the F1 generator (Options(mutation=True)), reduced: -0.0 kept through clip and prod, then angle
FUZZED = """\
def program(x0):
    h5 = (np.flip(x0) + 0)
    h7 = np.clip(h5, -1.0, 1.0).prod(axis=-2)
    return (np.angle(h7), h5)
"""


@pytest.mark.parametrize("backend", ["interpret", "prepare", "to_python", "codegen", "fused"])
def test_the_fuzzers_program_agrees_with_eager_under_its_oracle(backend):
    x0 = np.array([[-0.0, 0.5, 0.0], [0.25, -0.0, -0.0]])
    assert replay(FUZZED, f"compile/fast_math/{backend}", [[x0]]) is None


@pytest.mark.parametrize("divisor, dtype", [(5e-324, "float64"), (1e-39, "float32"),
                                            (np.array([5e-324, 2.0, 4.0]), "float64")])
def test_no_reciprocal_that_overflows(divisor, dtype):
    """``0 / c`` is 0 for a subnormal ``c``; ``0 * (1 / c)`` would be ``0 * inf``, NaN."""
    g = trace(lambda x: x / divisor, {"x": ((3,), dtype)})
    x = np.array([0.0, -0.0, 1e-300 if dtype == "float64" else 1e-40], dtype)
    with np.errstate(all="ignore"):
        expected = [x / divisor]
    assert simplify_fast_math(g) == []
    assert_bits(run(g, {"x": x}), expected, f"x / {divisor!r}")


def test_a_reciprocal_that_fits_is_still_used():
    g = trace(lambda x: x / np.array([3.0, -4.0, np.inf]), {"x": (3,)})
    x = np.array([-0.0, 0.0, -2.0])
    expected = [x / np.array([3.0, -4.0, np.inf])]
    assert simplify_fast_math(g)[0].startswith("x / c -> x * (1/c)")
    got = run(g, {"x": x})
    assert_close(got, expected, "x * (1/c)", "fast_math")
    assert np.array_equal(np.signbit(got[0]), np.signbit(expected[0]))  # 1/c has c's sign; 1/inf is +0.0
