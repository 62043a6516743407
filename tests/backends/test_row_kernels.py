"""Row kernels of the fused backend (``graph_lab/backends/c_row_kernels.py``): ``softmax``, ``log_softmax`` and
``layer_norm`` over the last axis, compared with eager ``F.softmax`` / ``F.log_softmax`` / ``F.layer_norm`` on
plain arrays.

What is promised, and checked here: ``layer_norm`` is NumPy's bit for bit (float32 and float64, with and without
weight and bias, every row length, 1 or 2 threads, NaN and infinities); ``softmax`` and ``log_softmax`` are
within the fused tolerance (``GRAPH_ULP["fused"]``) with NaN exactly where NumPy has it.

Without a C compiler the backend runs as codegen; the same comparisons then check that fallback (and the
assertions about kernels expect none)."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

from tests.support.backend_support import ALWAYS, MODEL, assert_bits, assert_close
from graph_lab import F, FusedFallbackWarning, compile_graph, trace
from graph_lab.backends import fused
from graph_lab.backends.tolerance import GRAPH_ULP, ulp_of
from graph_lab.backends.toolchain import find_toolchain

RNG = np.random.default_rng(12)
HAVE_COMPILER = find_toolchain() is not None
DTYPES = ["float32", "float64"]
SOFTMAX_LIKE = {"softmax": F.softmax, "log_softmax": F.log_softmax}


def shape_for(n: int, k: int) -> tuple[int, ...]:
    """Rows of length ``n`` as a 1-D, 2-D or 3-D array (by ``k``), so every length meets every rank."""
    return [(n,), (3, n), (2, 3, n)][k % 3]


def options(threads: int):
    return dataclasses.replace(ALWAYS, max_threads=threads)


def layer_norm_fn(has_weight: bool, has_bias: bool, eps: float = 1e-5):
    def fn(x, w, b):
        return F.layer_norm(x, w if has_weight else None, b if has_bias else None, eps=eps)
    return fn


def compiled_layer_norm(shape, dtype, has_weight, has_bias, threads, affine_shape=None, eps=1e-5):
    affine_shape = affine_shape or shape[-1:]
    g = trace(layer_norm_fn(has_weight, has_bias, eps),
              {"x": (shape, dtype), "w": (affine_shape, dtype), "b": (affine_shape, dtype)})
    return compile_graph(g, "fused", options=options(threads))


def assert_one_row_kernel(compiled) -> None:
    assert [g.row is not None for g in compiled.kernels] == ([True] if HAVE_COMPILER else [])


def max_error_in_ulps(actual: np.ndarray, expected: np.ndarray) -> float:
    """The largest difference in ulps of max(|expected|, 1), the measure of ``tolerance.mismatches``."""
    finite = np.isfinite(expected)
    if not finite.any():
        return 0.0
    return float(np.max(np.abs(actual[finite] - expected[finite]) / ulp_of(expected[finite])))


def scaled_normal(shape, dtype) -> np.ndarray:
    """Values over many magnitudes (and an offset, so means are not near 0), where rounding shows."""
    return (RNG.standard_normal(shape) * 10 ** RNG.uniform(-3, 3, shape) + 3.0).astype(dtype)


# --- layer_norm: bit for bit


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_is_numpy_s_bit_for_bit_for_every_row_length(dtype):
    lengths = list(range(1, 141)) + [255, 256, 257, 1000, 1023, 4096, 5003]
    for k, n in enumerate(lengths):
        has_weight, has_bias = [(True, True), (False, False), (True, False), (False, True)][k % 4]
        threads = 1 + k % 2
        shape = shape_for(n, k)
        compiled = compiled_layer_norm(shape, dtype, has_weight, has_bias, threads)
        assert_one_row_kernel(compiled)
        x = scaled_normal(shape, dtype)
        w, b = RNG.standard_normal(n).astype(dtype), RNG.standard_normal(n).astype(dtype)
        expected = F.layer_norm(x, w if has_weight else None, b if has_bias else None)
        assert_bits(compiled(x, w, b), [expected], f"{dtype} {shape} weight={has_weight} bias={has_bias} "
                                                   f"threads={threads}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_two_threads_give_the_bits_of_one_on_many_rows(dtype):
    shape = (1001, 96)  # an odd number of rows: the second thread gets one more
    x, w, b = scaled_normal(shape, dtype), RNG.standard_normal(96).astype(dtype), RNG.standard_normal(96).astype(dtype)
    one, two = (compiled_layer_norm(shape, dtype, True, True, t) for t in (1, 2))
    if HAVE_COMPILER:
        assert (one.kernels[0].decision.threads, two.kernels[0].decision.threads) == (1, 2)
    assert_bits(two(x, w, b), one(x, w, b), "2 threads")
    assert_bits(two(x, w, b), [F.layer_norm(x, w, b)], "vs eager")


def test_layer_norm_weight_and_bias_of_other_shapes():
    shape = (4, 5, 48)
    x = scaled_normal(shape, "float32")
    for affine_shape in [(48,), (1, 48), (5, 48), shape, (4, 5, 1), (1,)]:
        w = RNG.standard_normal(affine_shape).astype(np.float32)
        b = RNG.standard_normal(affine_shape).astype(np.float32)
        compiled = compiled_layer_norm(shape, "float32", True, True, 2, affine_shape)
        assert_bits(compiled(x, w, b), [F.layer_norm(x, w, b)], f"weight and bias {affine_shape}")
    w, b = RNG.standard_normal(48).astype(np.float32), RNG.standard_normal(48).astype(np.float32)
    compiled = compiled_layer_norm(shape, "float32", True, True, 1, (48,), eps=0.25)
    assert_bits(compiled(x, w, b), [F.layer_norm(x, w, b, eps=0.25)], "eps 0.25")


def test_one_array_as_weight_and_bias():
    g = trace(lambda x, w: F.layer_norm(x, w, w), {"x": ((6, 40), "float64"), "w": ((40,), "float64")})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    x, w = scaled_normal((6, 40), "float64"), RNG.standard_normal(40)
    assert_bits(compiled(x, w), [F.layer_norm(x, w, w)], "weight is bias")


def special_rows(n: int, dtype) -> np.ndarray:
    """Rows of length ``n``: ordinary, one NaN, one +inf, one -inf, all -inf, +inf and -inf, all NaN, huge values,
    negative zeros, all equal."""
    rows = np.tile(RNG.standard_normal(n).astype(dtype), (10, 1))
    rows[1, n // 2] = np.nan
    rows[2, n // 3] = np.inf
    rows[3, n - 1] = -np.inf
    rows[4, :] = -np.inf
    rows[5, 0], rows[5, n - 1] = np.inf, -np.inf
    rows[6, :] = np.nan
    rows[7, :] = np.finfo(dtype).max * np.sign(rows[7])
    rows[8, :] = -0.0
    rows[9, :] = 1.5
    return rows


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_nan_and_inf_rows_are_numpy_s(dtype):
    for n in (1, 2, 9, 200):
        x = special_rows(n, dtype)
        w, b = RNG.standard_normal(n).astype(dtype), RNG.standard_normal(n).astype(dtype)
        for threads in (1, 2):
            compiled = compiled_layer_norm(x.shape, dtype, True, True, threads)
            with np.errstate(all="ignore"):
                expected = F.layer_norm(x, w, b)
                got = compiled(x, w, b)
            assert np.isnan(expected[1]).all() and np.isnan(expected[4]).all()  # (the rows do test something)
            assert_bits(got, [expected], f"{dtype} n={n} threads={threads}")


# --- softmax and log_softmax: within the tolerance


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(SOFTMAX_LIKE))
def test_softmax_is_within_the_fused_tolerance_for_every_row_length(name, dtype):
    fn = SOFTMAX_LIKE[name]
    worst = 0.0
    lengths = list(range(1, 141)) + [255, 256, 257, 1000, 1023, 4096, 5003]
    for k, n in enumerate(lengths):
        shape = shape_for(n, k)
        threads = 1 + k % 2
        g = trace(lambda x: fn(x, axis=-1), {"x": (shape, dtype)})
        compiled = compile_graph(g, "fused", options=options(threads))
        assert_one_row_kernel(compiled)
        x = (RNG.standard_normal(shape) * 10 ** RNG.uniform(-1, 1.5, shape)).astype(dtype)
        expected = fn(x)
        got = compiled(x)
        assert_close(got, [expected], f"{name} {dtype} {shape} threads={threads}", "fused")
        worst = max(worst, max_error_in_ulps(got[0], expected))
    print(f"{name} {dtype}: at most {worst:.2f} ulps of max(|value|, 1) from NumPy "
          f"(allowed {GRAPH_ULP['fused']})")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(SOFTMAX_LIKE))
def test_softmax_nan_and_inf_rows_have_numpy_s_nan_pattern(name, dtype):
    fn = SOFTMAX_LIKE[name]
    for n in (1, 2, 9, 200):
        x = special_rows(n, dtype)
        for threads in (1, 2):
            g = trace(lambda x: fn(x), {"x": (x.shape, dtype)})
            compiled = compile_graph(g, "fused", options=options(threads))
            with np.errstate(all="ignore"):
                expected = fn(x)
                got = compiled(x)
            assert np.isnan(expected[[1, 2, 4, 5, 6]]).all()  # NaN, +inf, all -inf, +-inf, all NaN: all NaN
            if n > 1:  # one -inf among numbers: its weight is 0 (log: -inf), the others are numbers
                assert not np.isnan(expected[3]).any() and expected[3, n - 1] in (0.0, -np.inf)
            assert_close(got, [expected], f"{name} {dtype} n={n} threads={threads}", "fused")


def test_softmax_over_another_axis_is_not_a_row_kernel_and_says_why():
    g = trace(lambda x: (F.softmax(x, axis=0), F.log_softmax(x, axis=1)), {"x": ((3, 64, 32), "float32")})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    text = compiled.partition.text()
    assert "softmax over axis 0 of 3: a row kernel runs over the last (contiguous) axis" in text
    assert "log_softmax over axis 1 of 3" in text
    x = RNG.standard_normal((3, 64, 32)).astype(np.float32)
    assert_bits(compiled(x), [F.softmax(x, axis=0), F.log_softmax(x, axis=1)], "codegen path")


def test_mixed_dtypes_and_integer_inputs_stay_on_codegen():
    g = trace(lambda x, w: F.layer_norm(x, w), {"x": ((8, 128), "float32"), "w": ((128,), "float64")})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    assert not compiled.kernels and "a row kernel reads arrays of its result's dtype" in compiled.partition.text()
    x, w = scaled_normal((8, 128), "float32"), RNG.standard_normal(128)
    assert_bits(compiled(x, w), [F.layer_norm(x, w)], "mixed dtypes")


# --- elementwise ops before a row op: one kernel


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_residual_add_and_layer_norm_are_one_kernel_bit_for_bit(dtype):
    def block(x, r, w, b):
        h = x + r * 0.5 + b  # a residual and a bias [C]; h is also returned: the kernel writes it too
        return h, F.layer_norm(h, w, b)

    for k, n in enumerate([1, 7, 64, 129, 512, 1000]):
        shape = shape_for(n, k + 1)
        g = trace(block, {"x": (shape, dtype), "r": (shape, dtype), "w": ((n,), dtype), "b": ((n,), dtype)})
        compiled = compile_graph(g, "fused", options=options(1 + k % 2))
        if HAVE_COMPILER:
            (group,) = compiled.kernels
            assert [str(node.op) for node in group.nodes] == ["mul", "add", "add", "layer_norm"]
            assert len(group.outputs(compiled.graph)) == 2 and f"row kernel ({int(np.prod(shape[:-1]))} row" in \
                compiled.partition.text()
        x, r = special_rows(n, dtype)[: int(np.prod(shape[:-1]))].reshape(shape), scaled_normal(shape, dtype)
        w, b = RNG.standard_normal(n).astype(dtype), RNG.standard_normal(n).astype(dtype)
        with np.errstate(all="ignore"):
            expected = [np.asarray(v) for v in block(x, r, w, b)]
            got = compiled(x, r, w, b)
        assert_bits(got, expected, f"{dtype} {shape}")


@pytest.mark.parametrize("name", sorted(SOFTMAX_LIKE))
def test_a_masked_softmax_is_one_kernel_with_numpy_s_nan_pattern(name):
    fn = SOFTMAX_LIKE[name]

    def masked(x, mask):
        return fn(np.where(mask, x * 0.125, -np.inf))

    for k, n in enumerate([1, 5, 128, 300]):
        shape = shape_for(n, k)
        g = trace(masked, {"x": (shape, "float32"), "mask": (shape, "bool")})
        compiled = compile_graph(g, "fused", options=options(2))
        if HAVE_COMPILER:
            assert [[str(node.op) for node in grp.nodes] for grp in compiled.kernels] == [["mul", "where", name]]
        x = scaled_normal(shape, "float32")
        mask = RNG.uniform(size=shape) < 0.7
        mask.reshape(-1, n)[0] = False  # a row all masked: all -inf, all NaN
        with np.errstate(all="ignore"):
            expected = masked(x, mask)
            got = compiled(x, mask)
        assert np.isnan(expected.reshape(-1, n)[0]).all()
        assert_close(got, [expected], f"{name} {shape}", "fused")


@pytest.mark.parametrize("name", sorted(SOFTMAX_LIKE))
def test_a_mask_shared_by_every_head_is_read_in_the_same_kernel(name):
    # scores [heads, q, k] and a causal mask [q, k]: the mask lines up with the rows only modulo q (row i of the
    # loop reads mask row i % q), a "tile" operand; before, the where stayed outside the softmax kernel.
    fn = SOFTMAX_LIKE[name]

    def masked(x, p):
        return fn(np.where(p["mask"], x * 0.125, -np.inf))

    for heads, q, k in [(8, 128, 128), (3, 5, 7), (2, 1, 9), (4, 6, 300)]:
        mask = np.tril(np.ones((q, k), bool))
        mask[RNG.uniform(size=(q, k)) < 0.2] = False  # also rows masked entirely: NaN rows in every head
        g = trace(masked, {"x": ((heads, q, k), "float32")}, {"mask": mask})
        compiled = compile_graph(g, "fused", options=options(2))
        if HAVE_COMPILER:
            assert [[str(node.op) for node in grp.nodes] for grp in compiled.kernels] == [["mul", "where", name]]
            tiled = "(i % " + str(q) + ") * inner + j" in compiled.kernel_source
            assert tiled == (q > 1)  # (one row of mask: the same row for every row of the loop, a "row" operand)
        x = scaled_normal((heads, q, k), "float32")
        with np.errstate(all="ignore"):
            expected = masked(x, {"mask": mask})
            got = compiled(x)
        assert_close(got, [expected], f"{name} {heads}x{q}x{k}", "fused")


def test_a_value_read_before_the_row_op_keeps_the_row_op_in_a_group_of_its_own():
    def fn(x, w):
        h = x * 2.0
        return (h @ w).sum(), F.softmax(h)  # the matmul needs h before the softmax runs

    g = trace(fn, {"x": ((32, 64), "float64"), "w": ((64, 3), "float64")})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    assert [[str(n.op) for n in grp.nodes] for grp in compiled.partition.groups] == [["mul"], ["softmax"]]
    x, w = RNG.standard_normal((32, 64)), RNG.standard_normal((64, 3))
    assert_close(compiled(x, w), [np.asarray(v) for v in fn(x, w)], "separate groups", "fused")


def test_a_chain_of_row_kernels_writing_into_reused_buffers():
    def chain(x, w, b):
        a = F.layer_norm(x @ w, b, b)
        t = F.layer_norm(F.log_softmax(a) + x)
        return F.softmax(t) @ w, a

    g = trace(chain, {"x": ((64, 32), "float32"), "w": ((32, 32), "float32"), "b": ((32,), "float32")})
    compiled = compile_graph(g, "fused", options=ALWAYS)  # (min_buffer_bytes=0: every dead buffer is reused)
    if HAVE_COMPILER:
        assert len(compiled.kernels) == 4 and "into the buffer of" in compiled.source
    x, w, b = (RNG.standard_normal(s).astype(np.float32) for s in [(64, 32), (32, 32), (32,)])
    for _ in range(2):  # the second call finds the buffers of the first
        got = compiled(x, w, b)
        expected = chain(x, w, b)
        assert_close(got, list(expected), "chain", "fused")
        assert_bits(got[1:], [expected[1]], "the first layer_norm")


# --- the cost model and the partition text


def test_small_inputs_stay_on_codegen_and_large_ones_get_a_row_kernel():
    for fn in (lambda x: F.softmax(x), lambda x: F.log_softmax(x), lambda x: F.layer_norm(x)):
        small = compile_graph(trace(fn, {"x": ((4, 8), "float32")}), "fused", options=MODEL)
        (decision,) = [g.decision for g in small.partition.groups]
        assert not decision.fuse and "32 elements < 1024" in decision.reason and not small.kernels
        assert "row kernel (4 rows of 8)" in small.partition.text()
        big = compile_graph(trace(fn, {"x": ((4096, 1024), "float32")}), "fused", options=MODEL)
        (group,) = big.partition.groups
        if HAVE_COMPILER:
            assert group.decision.fuse and big.kernels == [group] and "fuse (" in group.decision.reason
            assert "row kernel (4096 rows of 1024)" in big.partition.text()
            assert "row kernel" in big.explain()
        x = RNG.standard_normal((4096, 1024)).astype(np.float32)
        assert_close(big(x), [fn(x)], "large", "fused")


def test_the_row_cost_counts_numpy_s_calls_and_passes():
    g = trace(lambda x, w, b: F.layer_norm(x, w, b), {"x": ((256, 512), "float32"), "w": ((512,), "float32"),
                                                     "b": ((512,), "float32")})
    compiled = compile_graph(g, "fused", options=MODEL)
    (group,) = compiled.partition.groups
    c = group.cost(compiled.graph)
    x_bytes, w_bytes = 256 * 512 * 4, 512 * 4
    assert c.kernel_bytes == 2 * x_bytes + 2 * w_bytes and c.arrays == 4 and c.libm == ()
    assert c.numpy_bytes == 12 * x_bytes + 2 * w_bytes  # 8 passes of layer_norm, 2 each for * weight, + bias
    softmax = compile_graph(trace(lambda x: F.softmax(x), {"x": ((256, 512), "float32")}), "fused", options=MODEL)
    assert softmax.partition.groups[0].cost(softmax.graph).libm == ("exp",)


def test_without_a_compiler_row_ops_run_as_codegen(monkeypatch):
    monkeypatch.setattr(fused, "_warned", set())
    g = trace(lambda x: (F.softmax(x), F.layer_norm(x)), {"x": ((64, 128), "float32")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FusedFallbackWarning)
        compiled = compile_graph(g, "fused", options=dataclasses.replace(ALWAYS, compiler="/nonexistent/cc"))
    assert compiled.kernels == [] and "no C compiler found" in compiled.explain()
    x = RNG.standard_normal((64, 128)).astype(np.float32)
    assert_bits(compiled(x), [F.softmax(x), F.layer_norm(x)], "fallback")
