"""The one table of tolerances: how close a captured result must be to eager NumPy's, per dtype.

    dtype        rule                                          where the numbers come from
    bool, ints   exact                                         integer arithmetic has one right answer
    float64      |got - want| <= atol + rtol * |want|,         a few hundred ulps: room for a different but
                 rtol = atol = 1e-7                            sound order of a handful of operations
    float32      rtol = 1.3e-6, atol = 1e-5                    PyTorch's and JAX's testing defaults
    float16      rtol = 1e-3, atol = 1e-5                      PyTorch's testing defaults
    complex      the row of its real type, on both parts

Two more rules sit on top of the table:

- An *exact* comparison (a way that runs the same NumPy calls in the same order, as every backend on main
  does) is bit for bit: values, NaN positions and the sign of zero.
- Reductions, matmul and fused kernels add up many terms, and any order of the additions is as right as eager's.
  A float32 or float16 result that fails the row above is then judged against a float64 reference, as PyTorch's
  accuracy checker does: it passes when its root-mean-square error from the float64 result is at most
  ``MULTIPLIER`` times eager's own error from it, plus ``atol / 10``.

Shape, dtype and the positions of NaN and of each infinity are always compared exactly, before any value.
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


def rmse(a: np.ndarray, b: np.ndarray) -> float:
    """Root-mean-square difference over the finite elements of both, computed in float64."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    finite = np.isfinite(a64) & np.isfinite(b64)
    if not finite.any():
        return 0.0
    return float(np.sqrt(np.mean((a64[finite] - b64[finite]) ** 2)))


def passes_float64_judge(want: np.ndarray, got: np.ndarray, ref64: np.ndarray) -> tuple[bool, str]:
    """PyTorch's accuracy rule: ``rmse(got, ref64) <= multiplier * rmse(want, ref64) + atol / 10``."""
    dtype = np.asarray(got).dtype
    multiplier = MULTIPLIER.get(dtype, 2.0)
    eager_error, got_error = rmse(want, ref64), rmse(got, ref64)
    limit = multiplier * eager_error + tolerance_for(dtype).atol / 10
    verdict = (f"against float64: captured rmse {got_error:.3g}, eager rmse {eager_error:.3g}, "
               f"limit {multiplier:g} x eager + atol/10 = {limit:.3g}")
    return got_error <= limit, verdict
