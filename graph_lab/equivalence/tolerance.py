"""The float64 judge for reordered sums: a float32 or float16 result of an op that adds up many terms, which fails
its row of the tolerance table, passes when it is no further from a float64 reference than eager NumPy's own result
is, as PyTorch's accuracy checker judges. The table itself is ``backends/tolerance.py`` (the one table of
tolerances), re-exported here."""

from __future__ import annotations

import numpy as np

from ..backends.tolerance import (ACCUMULATING_OPS, EXACT, MULTIPLIER, TOLERANCES, Tolerance,  # noqa: F401
                                  allowed_error, tolerance_for)


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
