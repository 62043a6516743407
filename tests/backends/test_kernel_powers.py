"""``x ** 2``, ``x ** -1`` and ``x ** 0.5`` in fused kernels: NumPy's bits (it runs square, reciprocal and sqrt for
them), with no libm ``pow`` call; every other exponent and ``np.power`` keep ``pow``."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.backend_support import ALWAYS, assert_bits, needs_compiler
from graph_lab import compile_graph, run, trace
from graph_lab.backends.kernel_powers import ARRAY_FAST_POWERS

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
@pytest.mark.parametrize("spelling", [lambda x: x ** 2.0, lambda x: np.power(x, 2), lambda x: x ** 3,
                                      lambda x: x ** -1.5])
def test_other_exponents_and_np_power_keep_pow(spelling):
    g = trace(lambda x: spelling(x * 1.0), {"x": ((64, 32), "float64")})
    source = compile_graph(g, "fused", options=ALWAYS).kernel_source
    assert "pow(" in source
