"""The one table of tolerances: how close a result that is not bit for bit must be to eager NumPy's. It has two
parts, for two questions; ``equivalence/tolerance.py`` (the float64 judge) and the tests import both from here.

**Is a captured result close enough?** (``equivalence.check``, ``compare``), per dtype:

    dtype        rule                                          where the numbers come from
    bool, ints   exact                                         integer arithmetic has one right answer
    float64      |got - want| <= atol + rtol * |want|,         a few hundred ulps: room for a different but
                 rtol = atol = 1e-7                            sound order of a handful of operations
    float32      rtol = 1.3e-6, atol = 1e-5                    PyTorch's and JAX's testing defaults
    float16      rtol = 1e-3, atol = 1e-5                      PyTorch's testing defaults
    complex      the row of its real type, on both parts

An *exact* comparison (a way that runs the same NumPy calls in the same order) is bit for bit instead: values,
NaN positions and the sign of zero. A float32 or float16 result of an op that adds up many terms
(``ACCUMULATING_OPS``) that fails its row is judged against a float64 reference (``MULTIPLIER``; see
``equivalence/tolerance.py``). Shape, dtype and the positions of NaN and of each infinity are always compared
exactly, before any value.

**How far may a backend or pipeline that is not bit for bit go?** The fused backend's transcendental functions
and the ``fast_math`` and ``inference`` pipelines, in ulps (used by the tests, the lecture and
docs/passes_backends.md):

``FUNCTION_ULP``: the largest difference, in units in the last place, between a kernel's libmvec function and
NumPy's, measured on this course's machine (glibc 2.36 libmvec, NumPy 2.4.6; 3 x 2^20 values: uniform in
[-10, 10], normal x 100, and +-e^u with u uniform in [-80, 80]); ``tests/backends/test_fused.py`` measures it again and
fails if a function does worse; ``POWER_ULP``, the same for the powers a kernel computes from a square root
(``x ** -1.5``) or by multiplying (``x ** 3``). Everything else a kernel computes (+ - * /, sqrt, comparisons,
min/max, where, floor, casts) is bit for bit NumPy's, and so are the sums, means, variances and standard
deviations that end a group and the ``layer_norm`` row kernel (they follow NumPy's pairwise summation tree).

The ``softmax`` and ``log_softmax`` row kernels (``c_row_kernels``) call libmvec's ``exp`` on ``x - max(row)``, which is
NumPy's bit for bit, sum in NumPy's order, then divide (or subtract libm's ``log`` of the sum). Their results
are within ``GRAPH_ULP["fused"]``: measured over row lengths 1..140, 255..5003, both dtypes, at most 1 ulp of
``max(|value|, 1)`` for ``softmax`` and 2 for ``log_softmax`` (``tests/backends/test_row_kernels.py`` prints the
figure).

A graph composes functions, and a difference of one ulp in ``tanh`` near -1 becomes a large *relative*
difference in ``1 + tanh(...)``; so whole graphs are compared relative to ``max(|NumPy's value|, 1)``: at most
``GRAPH_ULP[pipeline]`` ulps of that, with NaN and +-inf exactly where NumPy has them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    """Relative part: the error allowed grows with ``|want|``."""
    atol: float
    """Absolute part: the error allowed near zero."""


EXACT = Tolerance(0.0, 0.0)

TOLERANCES: dict[np.dtype, Tolerance] = {
    np.dtype(np.float64): Tolerance(rtol=1e-7, atol=1e-7),
    np.dtype(np.float32): Tolerance(rtol=1.3e-6, atol=1e-5),
    np.dtype(np.float16): Tolerance(rtol=1e-3, atol=1e-5),
}

MULTIPLIER = {np.dtype(np.float32): 2.0, np.dtype(np.float16): 3.0}
"""How much worse than eager (against float64) a reordered float result may be (PyTorch: 2x, 3x for float16)."""

ACCUMULATING_OPS = frozenset({"sum", "mean", "var", "std", "prod", "matmul", "einsum", "outer", "linear",
                              "layer_norm", "softmax", "log_softmax"})
"""Ops that add up many terms, whose float results may be judged against a float64 reference."""

_REAL_PART = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}


def tolerance_for(dtype: np.dtype) -> Tolerance:
    """The row of the table for ``dtype`` (complex types use their real type's row)."""
    dtype = np.dtype(dtype)
    dtype = _REAL_PART.get(dtype, dtype)
    if dtype.kind != "f":
        return EXACT
    return TOLERANCES.get(dtype, TOLERANCES[np.dtype(np.float64)])


def allowed_error(want: np.ndarray, tol: Tolerance) -> np.ndarray:
    return tol.atol + tol.rtol * np.abs(want)


# --- backends and pipelines that are not bit for bit, in ulps

FUNCTION_ULP = {
    "float32": {"exp": 4, "log": 6, "log1p": 1, "expm1": 3, "tanh": 1, "sin": 2, "cos": 2, "pow": 1, "sigmoid": 4},
    "float64": {"exp": 3, "log": 2, "log1p": 2, "expm1": 3, "tanh": 2, "sin": 3, "cos": 3, "pow": 1, "sigmoid": 4},
}

POWER_ULP = {"float32": {-1.5: 2, 3: 2}, "float64": {-1.5: 3, 3: 1}}
"""``x ** -1.5`` and ``x ** 3`` in a kernel, from a square root and by multiplying (``kernel_powers``): the
largest difference in ulps from NumPy's ``power``, measured on 6 x 2^20 values (uniform in [0, 10], |normal| x
100, e^u with u uniform in [-80, 80] and over the dtype's whole range, the last two with negative copies for the
cube) and the special values, NumPy 2.4.6 and 2.5.5; ``tests/backends/test_kernel_powers.py`` measures it again."""

GRAPH_ULP = {"fused": 16, "fast_math": 64, "inference": 1024}
"""Whole graphs: ulps of ``max(|expected|, 1)`` (the ``inference`` pipeline folds batch norm into convolution
weights, which rounds every weight once more before the sums)."""


def ulp_of(x: np.ndarray) -> np.ndarray:
    """The spacing of floating-point numbers at ``max(|x|, 1)``."""
    scale = np.maximum(np.abs(x), 1).astype(x.dtype)
    return np.spacing(scale)


def mismatches(actual, expected, ulps: int) -> list[str]:
    """Why ``actual`` is not within ``ulps`` of ``expected`` (empty when it is). Non-float dtypes must be equal."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return [f"{actual.dtype}{list(actual.shape)} where NumPy gives {expected.dtype}{list(expected.shape)}"]
    if expected.dtype.kind not in "fc":
        return [] if np.array_equal(actual, expected) else ["values differ (an exact dtype)"]
    if expected.dtype.kind == "c":  # a complex number is two floats, each held to the tolerance
        return mismatches(actual.real, expected.real, ulps) + mismatches(actual.imag, expected.imag, ulps)
    problems = []
    if not np.array_equal(np.isnan(actual), np.isnan(expected)):
        problems.append("NaN in other places than NumPy's")
    finite = np.isfinite(expected) & np.isfinite(actual)
    if not np.array_equal(actual[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)]):
        problems.append("an infinity where NumPy has another value")
    with np.errstate(all="ignore"):
        error = np.abs(actual[finite] - expected[finite]) / ulp_of(expected[finite])
    if error.size and error.max() > ulps:
        problems.append(f"{error.max():.0f} ulps of max(|value|, 1) from NumPy (allowed {ulps})")
    return problems
