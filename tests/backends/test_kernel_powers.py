"""Powers with a constant exponent in fused kernels: ``x ** 2``, ``x ** -1`` and ``x ** 0.5`` give NumPy's bits (it
runs square, reciprocal and sqrt for them); ``x ** -1.5`` from a square root and ``x ** 3`` by multiplying are
within ``POWER_ULP``, special values exactly; no libm ``pow`` call for them, which every other exponent keeps."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.backend_support import ALWAYS, assert_bits, needs_compiler
from graph_lab import compile_graph, run, trace
from graph_lab.backends.kernel_powers import ARRAY_FAST_POWERS
from graph_lab.backends.tolerance import POWER_ULP

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -7.25, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 1e300, 1e-300, 2.0 ** 600]


def values(dtype) -> np.ndarray:
    rng = np.random.default_rng(5)
    with np.errstate(over="ignore"):
        x = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-30, 30, 2000), SPECIAL])
        return x.astype(dtype).reshape(-1, 1) * np.ones((1, 3), dtype)


class UfuncSpy(np.ndarray):
    """An array that records which ufunc NumPy calls on it."""

    calls: list[str] = []

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        UfuncSpy.calls.append(ufunc.__name__)
        inputs = tuple(np.asarray(i) if isinstance(i, UfuncSpy) else i for i in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [2, -1, 0.5, 2.0, -1.0, 1, 0, 3, -1.5])
def test_numpy_runs_the_table_s_ufunc_for_exactly_its_exponents(dtype, exponent):
    UfuncSpy.calls = []
    np.ones(3, dtype).view(UfuncSpy) ** exponent
    want = str(ARRAY_FAST_POWERS.get((type(exponent), exponent), "power"))
    assert UfuncSpy.calls == [want]


@needs_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [2, -1, 0.5])
def test_a_kernel_computes_them_as_numpy_does_bit_for_bit(dtype, exponent):
    def fn(x):
        return (x * 1.0) ** exponent * 1.0

    x = values(dtype)
    g = trace(fn, {"x": (x.shape, dtype)})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    assert len(compiled.kernels) == 1 and "pow" not in compiled.kernel_source
    with np.errstate(all="ignore"):
        assert_bits(compiled(x), [fn(x)], f"x ** {exponent!r}")
        assert_bits(compiled(x), run(g, {"x": x}), f"x ** {exponent!r}")


@needs_compiler
@pytest.mark.parametrize("spelling", [lambda x: x ** 2.0, lambda x: np.power(x, 2), lambda x: x ** 5,
                                      lambda x: x ** 1.5, lambda x: x ** -0.5])
def test_other_exponents_and_np_power_keep_pow(spelling):
    g = trace(lambda x: spelling(x * 1.0), {"x": ((64, 32), "float64")})
    source = compile_graph(g, "fused", options=ALWAYS).kernel_source
    assert "pow(" in source


def ulps_apart(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """How many floats of the dtype lie between each pair (NaN pairs left out)."""
    ints = {4: np.int32, 8: np.int64}[got.dtype.itemsize]
    ok = ~np.isnan(want)
    a, e = (np.ascontiguousarray(v[ok]).view(ints).astype(np.int64) for v in (got, want))
    low = np.iinfo(ints).min
    a, e = np.where(a < 0, low - a, a), np.where(e < 0, low - e, e)  # ordered as the floats are
    return np.abs(a - e)


@needs_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("spelling", ["operator", "np.power"])
@pytest.mark.parametrize("exponent", [-1.5, 3])
def test_arithmetic_powers_are_within_the_documented_ulps(dtype, spelling, exponent):
    rng = np.random.default_rng(8)
    n = 1 << 18
    span = {"float32": 200, "float64": 1700}[dtype]
    with np.errstate(all="ignore"):
        x = np.concatenate([rng.uniform(0, 10, n), np.abs(rng.standard_normal(n)) * 100,
                            np.exp(rng.uniform(-80, 80, n)), np.exp(rng.uniform(-span, span, n)), SPECIAL,
                            [-np.inf, 5e-324, 1.7e308, 1e-45, 3.4e38]])
        x = (x * (rng.choice([-1, 1], x.size) if exponent == 3 else 1)).astype(dtype)
    fn = (lambda x: (x * 1.0) ** exponent) if spelling == "operator" else (lambda x: np.power(x * 1.0, exponent))
    g = trace(fn, {"x": (x.shape, dtype)})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    assert "pow(" not in compiled.kernel_source and "powf(" not in compiled.kernel_source
    with np.errstate(all="ignore"):
        got, want = compiled(x)[0], fn(x)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    special = ~np.isfinite(want) | (want == 0)
    assert_bits([got[special]], [want[special]], "infinities and zeros")  # -0.0 ** -1.5 is +inf, inf ** -1.5 +0.0
    worst = ulps_apart(got, want).max()
    print(f"{dtype} x ** {exponent}: {worst} ulps from NumPy's power")
    assert worst <= POWER_ULP[dtype][exponent]
