"""The fused backend's own promises: the cost model's decisions, the partition report, the kernel cache's
safety, the fallback without a compiler, threads, odd inputs, NaN/inf, and the documented ulp table."""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import warnings

import numpy as np
import pytest

from tests.support.backend_support import ALWAYS, CALIBRATION, KERNEL_CACHE, MODEL, assert_bits, assert_close, needs_compiler
from graph_lab import (F, FusedFallbackWarning, FusedOptions, GraphBuilder, GraphExecutionError, compile_graph,
                       run, trace)
from graph_lab.backends import cost, fused, toolchain
from graph_lab.backends.c_kernels import check_c_source
from graph_lab.backends.tolerance import FUNCTION_ULP
from graph_lab.backends.toolchain import KernelBuildError, KernelCache, find_toolchain, private_dir

RNG = np.random.default_rng(11)


def w3(x):
    return F.gelu(x) * F.sigmoid(x) + x * x


def mlp_block(x, p):
    h = x @ p["w"] + p["b"]  # a bias [C] under [N, C]: a row operand of a 2-D loop
    return np.maximum(h, 0.0) * F.sigmoid(h)


# --- the cost model: deterministic given its calibration


def decision_for(fn, shape, dtype="float32", options=MODEL, params=None):
    g = trace(fn, {"x": (shape, dtype)}, params)
    compiled = compile_graph(g, "fused", options=options)
    return compiled, [grp.decision for grp in compiled.partition.groups]


def test_small_groups_stay_on_codegen_and_the_code_is_codegen_s():
    compiled, (decision,) = decision_for(w3, (16, 32))
    assert not decision.fuse and "512 elements < 1024" in decision.reason
    assert compiled.kernels == [] and "kernel" not in compiled.source
    assert compiled.source == compile_graph(trace(w3, {"x": ((16, 32), "float32")}), "codegen").source


def test_a_graph_of_small_arrays_is_grouped_only_when_asked_and_reads_the_same():
    g = trace(mlp_block, {"x": ((8, 16), "float64")}, {"w": RNG.standard_normal((16, 16)), "b": np.ones(16)})
    compiled = compile_graph(g, "fused", options=MODEL)
    assert compiled._partition is None  # no result reaches cost.MIN_ELEMENTS: no group could become a kernel
    expected = fused.partition(compiled.graph)  # what compile_fused made before it grouped lazily
    fused._decide_without_measuring(expected)
    assert compiled.partition.text() == expected.text() and "group 0" in expected.text()
    assert all(not grp.decision.fuse and "elements < 1024" in grp.decision.reason
               for grp in compiled.partition.groups)
    assert "group 0" in compiled.explain() and compiled.kernels == []
    x = RNG.standard_normal((8, 16))
    params = {"w": g.param_values["p['w']"], "b": g.param_values["p['b']"]}
    assert_bits(compiled(x), [mlp_block(x, params)], "a small mlp block on the fused backend")


@needs_compiler
def test_a_large_elementwise_chain_is_one_kernel_on_two_threads():
    compiled, (decision,) = decision_for(w3, (1 << 22,))
    group = compiled.partition.groups[0]
    expected = cost.decide(group.cost(compiled.graph), CALIBRATION)
    assert decision == expected and decision.fuse and decision.threads == 2
    assert [str(n.op) for n in group.nodes] == ["gelu", "sigmoid", "mul", "mul", "add"]
    c = group.cost(compiled.graph)
    assert (c.numpy_calls, c.libm, c.arithmetic, c.arrays) == (9 + 4 + 3, ("tanh", "exp"), 8 + 3 + 3, 2)
    assert decision.numpy_seconds / decision.kernel_seconds > 5


def test_the_model_needs_a_clear_win_and_prefers_one_thread_when_two_do_not_pay():
    one_add = cost.GroupCost(elements=4096, numpy_calls=1, numpy_bytes=3 * 4 * 4096, libm=(), arithmetic=1,
                             arrays=3, kernel_bytes=3 * 4 * 4096)  # x + y on float32: nothing to fuse with
    d = cost.decide(one_add, CALIBRATION)
    assert not d.fuse and "not worth a kernel" in d.reason
    chain = dataclasses.replace(one_add, numpy_calls=12, numpy_bytes=36 * 4 * 4096, arithmetic=12, arrays=2,
                                kernel_bytes=2 * 4 * 4096)
    d = cost.decide(chain, CALIBRATION)
    assert d.fuse and d.threads == 1  # the work is a few microseconds: a second thread costs more than it saves
    slow_threads = dataclasses.replace(CALIBRATION, thread_speedup=0.9)
    big = dataclasses.replace(chain, elements=1 << 24, numpy_bytes=36 * 4 << 24, kernel_bytes=8 << 24)
    assert cost.decide(big, slow_threads).threads == 1 and cost.decide(big, CALIBRATION).threads == 2
    assert cost.decide(big, CALIBRATION, max_threads=1).threads == 1
    after_matmul = dataclasses.replace(big, after_blas=True)  # BLAS threads still spinning: measured separately
    assert cost.decide(after_matmul, CALIBRATION).threads == 1
    assert cost.decide(after_matmul, dataclasses.replace(CALIBRATION, thread_speedup_after_blas=1.9)).threads == 2


@needs_compiler
def test_partition_text_says_where_each_node_went_and_why():
    params = {"w": RNG.standard_normal((256, 256)).astype(np.float32), "b": RNG.standard_normal(256).astype(np.float32)}

    def model(x, p):
        y = mlp_block(x, p)
        return y, y.argmax(axis=1), (x > 0).astype(np.int32) + 1

    g = trace(model, {"x": ((64, 256), "float32")}, params)
    compiled = compile_graph(g, "fused", options=MODEL)
    text = compiled.partition.text()
    assert "-> codegen: no kernel expression for matmul (linalg)" in text
    assert "-> codegen: no kernel expression for argmax (reduce)" in text
    assert "group 0: 4 ops (add, maximum, sigmoid, mul) on 16384 float32 elements, rows x inner" in text
    assert "%4 add                   -> kernel 0" in text
    # (the integers too: tests/backends/test_integer_kernels.py)
    assert "group 1: 3 ops (gt, cast, add) on 16384 bool,int32 elements, flat loop" in text and "fuse" in text
    assert all(line in compiled.explain() for line in text.splitlines())
    x = RNG.standard_normal((64, 256)).astype(np.float32)
    assert_close(compiled(x), run(g, {"x": x}), "mlp block", "fused")


# --- results


@needs_compiler
def test_nan_and_inf_propagate_as_in_numpy():
    values = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 3.0, -88.0, 89.0] * 200, np.float32)
    g = trace(lambda x: (w3(x), np.exp(x) - np.tanh(x), np.maximum(x, 0.0), F.clip(x, -1.0, 1.0)),
              {"x": ((values.size,), "float32")})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    with np.errstate(all="ignore"):
        expected = run(g, {"x": values})
        got = compiled(values)
    assert_close(got, expected, "special values", "fused")
    assert_bits(got[2:], expected[2:], "maximum and clip are exact")


@needs_compiler
def test_two_threads_give_the_bits_of_one():
    g = trace(w3, {"x": ((1_000_003,), "float32")})
    x = RNG.standard_normal(1_000_003).astype(np.float32)
    one = compile_graph(g, "fused", options=dataclasses.replace(ALWAYS, max_threads=1))
    two = compile_graph(g, "fused", options=dataclasses.replace(ALWAYS, max_threads=2))
    assert one.kernels[0].decision.threads == 1 and two.kernels[0].decision.threads == 2
    assert_bits(two(x), one(x), "two threads")
    params = {"w": RNG.standard_normal((64, 64)), "b": RNG.standard_normal(64)}
    g2 = trace(mlp_block, {"x": (1001, 64)}, params)  # 2-D loop, an odd number of rows
    x2 = RNG.standard_normal((1001, 64))
    assert_bits(compile_graph(g2, "fused", options=dataclasses.replace(ALWAYS, max_threads=2))(x2),
                compile_graph(g2, "fused", options=dataclasses.replace(ALWAYS, max_threads=1))(x2), "2-D, 2 threads")


@needs_compiler
def test_non_contiguous_operands_are_copied_and_wrong_ones_refused():
    g = trace(lambda x: np.tanh(x) * 2.0 + x, {"x": (40, 30)})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    x = np.asfortranarray(RNG.standard_normal((40, 30)))
    assert_close(compiled(x), run(g, {"x": x}), "F-ordered input", "fused")
    with pytest.raises(GraphExecutionError, match="the kernel was compiled for float64\\[40, 30\\]"):
        compiled(np.ones((50, 30)))


@needs_compiler
def test_function_ulp_table_holds():
    """The documented table (graph_lab/backends/tolerance.py), measured again on its sweep."""
    n = 1 << 20
    for dtype, table in FUNCTION_ULP.items():
        sweep = np.concatenate([RNG.uniform(-10, 10, n), RNG.standard_normal(n) * 100,
                                np.exp(RNG.uniform(-80, 80, n)) * RNG.choice([-1, 1], n)]).astype(dtype)
        exponents = RNG.uniform(-3, 3, sweep.size).astype(dtype)
        for name, bound in table.items():
            b = GraphBuilder(name)
            x = b.input("x", sweep.shape, dtype)
            if name == "pow":
                y = b.input("y", sweep.shape, dtype)
                g, args = b.output(b.pow(x, y)), (np.abs(sweep) % 10, exponents)
            else:
                g, args = b.output(getattr(b, name)(x)), (np.abs(sweep) + 1e-30 if name.startswith("log") else sweep,)
            with np.errstate(all="ignore"):
                expected = run(g, dict(zip(g.input_names, args)))[0]
                got = compile_graph(g, "fused", options=ALWAYS)(*args)[0]
            assert np.array_equal(np.isnan(got), np.isnan(expected)), name
            ok = ~np.isnan(expected)
            ints = {4: np.int32, 8: np.int64}[np.dtype(dtype).itemsize]
            a, e = (np.ascontiguousarray(v[ok]).view(ints).astype(np.int64) for v in (got, expected))
            low = np.iinfo(ints).min
            a, e = np.where(a < 0, low - a, a), np.where(e < 0, low - e, e)  # ordered like the floats
            assert np.abs(a - e).max() <= bound, f"{dtype} {name}: {np.abs(a - e).max()} ulp > documented {bound}"


# --- compiling, caching, falling back


@needs_compiler
def test_kernels_are_cached_on_disk_and_loaded_again(tmp_path):
    tools = find_toolchain()
    g = trace(lambda x: np.tanh(x) * x + 1.0, {"x": (4,)})
    from graph_lab.backends.partition import partition
    kernel = fused.kernel_for(type("E", (), {"toolchain": tools})(), g, partition(g).groups[0])
    first = KernelCache(tools, tmp_path / "cache")
    first.functions([kernel])
    assert (first.builds, first.hits) == (1, 0)
    assert stat.S_IMODE(os.lstat(tmp_path / "cache").st_mode) == 0o700
    second = KernelCache(tools, tmp_path / "cache")  # as a new process would
    second.functions([kernel])
    assert (second.builds, second.hits) == (0, 1)

    (so,) = (tmp_path / "cache").glob("*.so")
    tampered = tmp_path / "tampered.so"  # a new file put in its place (the loaded one must stay as it is)
    tampered.write_bytes(so.read_bytes() + b"tampered")
    os.chmod(tampered, 0o600)
    os.replace(tampered, so)  # not what this code wrote: never loaded, rebuilt
    third = KernelCache(tools, tmp_path / "cache")
    third.functions([kernel])
    assert (third.builds, third.hits) == (1, 0)
    os.chmod(so, 0o666)  # writable by others: not trusted either
    fourth = KernelCache(tools, tmp_path / "cache")
    fourth.functions([kernel])
    assert (fourth.builds, fourth.hits) == (1, 0) and stat.S_IMODE(os.lstat(so).st_mode) == 0o600


def test_the_cache_folder_must_be_private(tmp_path):
    opened = tmp_path / "opened"
    opened.mkdir(mode=0o777)
    os.chmod(opened, 0o777)
    assert stat.S_IMODE(os.lstat(private_dir(opened)).st_mode) == 0o700  # ours: closed again
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(KernelBuildError, match="not a folder"):
        private_dir(tmp_path / "link")
    if os.getuid() == 0:  # only root can give a folder away to test this
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 12345, 12345)
        with pytest.raises(KernelBuildError, match="belongs to another user"):
            private_dir(theirs)


def test_without_a_compiler_it_runs_as_codegen_and_says_so_once(monkeypatch):
    monkeypatch.setattr(fused, "_warned", set())
    options = dataclasses.replace(ALWAYS, compiler="/nonexistent/cc")
    g = trace(w3, {"x": ((4096,), "float32")})
    x = RNG.standard_normal(4096).astype(np.float32)
    with pytest.warns(FusedFallbackWarning, match="no C compiler found"):
        compiled = compile_graph(g, "fused", options=options)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = compile_graph(g, "fused", options=options)  # said once
        auto = compile_graph(g, "auto", options=options)  # auto means "fused if it can": no warning
    assert compiled.kernels == [] and again.kernels == [] and auto.kernels == []
    assert "no C compiler found" in compiled.explain()
    assert_bits(compiled(x), run(g, {"x": x}), "fallback is codegen")


@needs_compiler
def test_without_avx2_the_baseline_flags_still_work(monkeypatch, tmp_path):
    monkeypatch.setattr(toolchain, "cpu_flags", lambda: set())
    tools = find_toolchain()
    assert "-mavx2" not in tools.flags and "-ffp-contract=off" in tools.flags
    monkeypatch.setattr(toolchain, "cpu_flags", lambda: {"avx2", "fma", "sse2"})
    assert {"-mavx2", "-mfma"} <= set(find_toolchain().flags) and "-mavx512f" not in find_toolchain().flags
    monkeypatch.setattr(toolchain, "cpu_flags", lambda: {"avx2", "fma", "avx512f", "avx512dq", "avx512vl",
                                                         "avx512bw"})
    assert {"-mavx2", "-mavx512f", "-mprefer-vector-width=512"} <= set(find_toolchain().flags)
    monkeypatch.setattr(toolchain, "cpu_flags", lambda: set())
    options = FusedOptions(cache_dir=tmp_path / "baseline", fuse="always", calibration=CALIBRATION)
    g = trace(w3, {"x": ((300,), "float64")})
    x = RNG.standard_normal(300)
    assert_close(compile_graph(g, "fused", options=options)(x), run(g, {"x": x}), "baseline x86-64", "fused")


@needs_compiler
def test_kernel_source_holds_only_what_the_generator_writes():
    g = trace(w3, {"x": ((2048,), "float32")})
    source = compile_graph(g, "fused", options=ALWAYS).kernel_source
    assert "#pragma omp declare simd notinbranch\nfloat tanhf(float);" in source and "#pragma omp simd" in source
    check_c_source(source)
    with pytest.raises(RuntimeError, match="refusing to compile"):
        check_c_source(source + '\n#include "/etc/passwd"\n')


def test_the_cache_used_by_these_tests_is_private():
    assert stat.S_IMODE(os.lstat(KERNEL_CACHE).st_mode) == 0o700


# --- a sum or mean ending a group: NumPy's pairwise summation, bit for bit


def reductions(x, b):
    return ((x * 2.0 + b) * x).sum(axis=-1), (x * x).mean(axis=-1, keepdims=True), (x - 1.0).sum()


@needs_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_sums_and_means_are_numpy_s_bit_for_bit(dtype):
    lengths = list(range(1, 140, 3)) + [255, 256, 257, 1000, 1024, 4099, 9000]
    for n in lengths:
        rows = 3 if n < 2000 else 2
        g = trace(reductions, {"x": ((rows, n), dtype), "b": ((n,), dtype)})
        x = (RNG.standard_normal((rows, n)) * 10 ** RNG.uniform(-3, 3, (rows, n))).astype(dtype)
        b = RNG.standard_normal(n).astype(dtype)
        for threads in (1, 2):
            compiled = compile_graph(g, "fused", options=dataclasses.replace(ALWAYS, max_threads=threads))
            assert [n_.op for grp in compiled.kernels for n_ in grp.nodes][-1] == "sum"
            assert len(compiled.kernels) == 3 and "pw(" in compiled.kernel_source
            got = compiled(x, b)
            assert_bits(got, run(g, {"x": x, "b": b}), f"{dtype} n={n} threads={threads}")
            assert_bits(got, [np.asarray(r) for r in reductions(x, b)], f"{dtype} n={n} vs eager")


@needs_compiler
def test_fused_reductions_propagate_nan_inf_and_zeros_as_numpy():
    g = trace(reductions, {"x": ((4, 16), "float32"), "b": ((16,), "float32")})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    x = np.zeros((4, 16), np.float32)
    x[0, 3], x[1, 5], x[2, :] = np.nan, np.inf, -0.0
    x[3, 1], x[3, 2] = np.inf, -np.inf
    b = -np.zeros(16, np.float32)
    with np.errstate(all="ignore"):
        assert_bits(compiled(x, b), run(g, {"x": x, "b": b}), "nan, inf, -0.0")


def spreads(x, b):
    h = x * 2.0 + b
    return (h.var(axis=-1), (x - 0.5).std(axis=-1, keepdims=True, ddof=1), (x * 3.0).var(ddof=1),
            (x + 1.0).std())


@needs_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_variances_and_deviations_are_numpy_s_bit_for_bit(dtype):
    # np.var: the mean (pairwise sum / count in double), the squared deviations in the dtype, their pairwise sum,
    # / (count - ddof) in double; np.std its sqrt. Both passes recompute the group's values in the kernel.
    lengths = list(range(2, 140, 3)) + [255, 256, 257, 1000, 1024, 4099, 9000]
    for n in lengths:
        rows = 3 if n < 2000 else 2
        g = trace(spreads, {"x": ((rows, n), dtype), "b": ((n,), dtype)})
        x = (RNG.standard_normal((rows, n)) * 10 ** RNG.uniform(-3, 3, (rows, n)) + 7).astype(dtype)
        b = RNG.standard_normal(n).astype(dtype)
        for threads in (1, 2):
            compiled = compile_graph(g, "fused", options=dataclasses.replace(ALWAYS, max_threads=threads))
            assert sorted(str(grp.reduce.op) for grp in compiled.kernels) == ["std", "std", "var", "var"]
            got = compiled(x, b)
            assert_bits(got, [np.asarray(r) for r in spreads(x, b)], f"{dtype} n={n} threads={threads}")


@needs_compiler
def test_fused_variances_propagate_nan_inf_and_refuse_a_ddof_without_values():
    g = trace(spreads, {"x": ((4, 16), "float32"), "b": ((16,), "float32")})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    x = RNG.standard_normal((4, 16)).astype(np.float32)
    x[0, 3], x[1, 5], x[2, 7], x[2, 8] = np.nan, np.inf, np.inf, -np.inf
    b = RNG.standard_normal(16).astype(np.float32)
    with np.errstate(all="ignore"):
        assert_bits(compiled(x, b), [np.asarray(r) for r in spreads(x, b)], "nan, inf")

    def one_value(x):
        return (x * 2.0).var(axis=-1, ddof=1)  # a count of 1 - ddof 1: NumPy warns and divides by 0

    compiled = compile_graph(trace(one_value, {"x": ((5, 1), "float64")}), "fused", options=ALWAYS)
    assert "its ddof is an int from 0 to the count of values less one" in compiled.partition.text()
    assert not any(grp.reduce is not None for grp in compiled.kernels)


def hand_written_layer_norm(x, w):
    m = x.mean(-1, keepdims=True)
    v = x.var(-1, keepdims=True)  # x is read by three nodes: the var is a kernel of its own, reading x
    h = x @ w
    return (x - m) / np.sqrt(v + 1e-5), h.std(axis=-1, ddof=1), h.var(), x.sum(-1)


@needs_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_variance_of_an_input_or_a_product_is_a_kernel_of_its_own_bit_for_bit(dtype):
    for rows, n in [(3, 1), (5, 7), (4, 130), (2, 1000), (3, 4099)]:
        g = trace(hand_written_layer_norm, {"x": ((rows, n), dtype), "w": ((n, 6), dtype)})
        compiled = compile_graph(g, "fused", options=ALWAYS)
        alone = [grp for grp in compiled.kernels if grp.nodes == [grp.reduce]]
        assert sorted(str(grp.reduce.op) for grp in alone) == ["std", "var", "var"], compiled.partition.text()
        assert re.search(r"%\d+ mean\s+-> codegen", compiled.partition.text()) and not any(
            str(grp.reduce.op) in ("mean", "sum") for grp in alone)  # (one pass in NumPy already: left to it)
        x = (RNG.standard_normal((rows, n)) * 10 ** RNG.uniform(-2, 2, (rows, n)) + 3).astype(dtype)
        w = RNG.standard_normal((n, 6)).astype(dtype)
        with np.errstate(all="ignore"):
            assert_bits(compiled(x, w), [np.asarray(r) for r in hand_written_layer_norm(x, w)], f"{dtype} {n}")


def test_the_cost_model_makes_a_large_variance_a_kernel_and_leaves_a_small_one():
    def variance(x):
        return x.var(axis=-1)

    big, (decision,) = decision_for(variance, (4096, 1024))
    assert decision.fuse and big.kernels[0].reduce is not None
    small, (decision,) = decision_for(variance, (4, 8))
    assert not decision.fuse and not small.kernels


@needs_compiler
def test_every_axis_spelled_as_a_tuple_is_one_reduction_not_one_per_row():
    # Regression: axis=(0, 1) on a 2-D value is normalized to the tuple of every axis, which the kernel treated as
    # "the last axis": one sum per row written into a one-element result, past its end (wrong values, then a
    # crash). Under the cost model too, at a size where it fuses.
    def every_axis(x):
        return ((x * 2.0).sum(axis=(0, 1)), (x - 1.0).mean(axis=(1, 0), keepdims=True),
                (x + 0.5).var(axis=(0, 1), ddof=1), (x * x).std(axis=(-2, -1)))

    for shape, options in [((64, 32), ALWAYS), ((3, 5), ALWAYS), ((1024, 512), MODEL)]:
        g = trace(every_axis, {"x": (shape, "float64")})
        compiled = compile_graph(g, "fused", options=options)
        assert [grp.split() for grp in compiled.kernels if grp.reduce is not None] == [0] * (
            4 if options is ALWAYS else len(compiled.kernels))
        x = RNG.standard_normal(shape)
        assert_bits(compiled(x), [np.asarray(r) for r in every_axis(x)], f"{shape}")


@needs_compiler
def test_a_comparison_that_numpy_makes_in_int64_gives_numpys_bools():
    # Regression (found by running the fuzzer's programs with fuse="always"): a bool array compared with a Python
    # int, or with an int64 array, compares in int64; making its kernel raised KeyError when kernels computed in
    # floats and bools only.
    def fn(b, i):
        return np.greater_equal(b, 1), np.less(b, i), (b | b) == 0

    g = trace(fn, {"b": ((64,), "bool"), "i": ((), "int64")})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    assert "compares in int64" not in compiled.partition.text() and compiled.kernels  # (kernels compute in int64 now)
    b = RNG.uniform(size=64) < 0.5
    i = np.asarray(1, np.int64)
    assert_bits(compiled(b, i), [np.asarray(r) for r in fn(b, i)], "bool against int")


@needs_compiler
def test_reductions_that_are_not_fused_say_why():
    def fn(x):
        h = x * 2.0
        return h.sum(axis=0), (x + 1.0).sum(axis=-1), h  # h is read twice; axis 0 is not the inner loop

    g = trace(fn, {"x": ((8, 32), "float32")})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    text = compiled.partition.text()
    assert text.count("only if nothing else reads the value it reduces") == 1
    assert re.search(r"%\d+ sum\s+-> kernel \d", text)  # (x + 1).sum(-1)
    x = RNG.standard_normal((8, 32)).astype(np.float32)
    assert_bits(compiled(x), run(g, {"x": x}), "mixed")

    def last_axis_of_a_column_group(x, c):
        return (x * c).sum(axis=0)  # c is [N, 1]: lines up with rows, not with the reduced axis 0

    g = trace(last_axis_of_a_column_group, {"x": ((8, 32), "float64"), "c": ((8, 1), "float64")})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    assert "it reduces the last axis or all axes" in compiled.partition.text()


@needs_compiler
def test_a_fused_reduction_with_libm_is_within_the_ulp_table():
    def softmax_denominator(x):
        return np.exp(x - 1.0).sum(axis=-1)

    g = trace(softmax_denominator, {"x": ((64, 300), "float32")})
    compiled = compile_graph(g, "fused", options=ALWAYS)
    x = RNG.standard_normal((64, 300)).astype(np.float32)
    want = softmax_denominator(x)
    # each term within the exp row of the ulp table, all positive: the sum is within as many ulps of itself
    np.testing.assert_allclose(compiled(x)[0], want, rtol=FUNCTION_ULP["float32"]["exp"] * np.finfo(np.float32).eps)


@needs_compiler
def test_the_cost_model_fuses_a_large_row_reduction_and_not_a_small_one():
    def sum_of_squares(x):
        return (x * x).sum(axis=-1)

    big, (decision,) = decision_for(sum_of_squares, (4096, 1024))
    assert decision.fuse and big.kernels and big.kernels[0].reduce is not None
    small, (decision,) = decision_for(sum_of_squares, (4, 8))
    assert not decision.fuse and not small.kernels


@needs_compiler
def test_operands_repeating_along_leading_axes_are_read_modulo_their_rows_bit_for_bit():
    # t [6, 32] under x [4, 6, 32] with c [4, 6, 1]: the only split that fits c is before the last axis, where t
    # is a "tile" (loop row i reads t's row i % 6); then the same with a sum over the last axis ending the group.
    t = RNG.standard_normal((6, 32)).astype(np.float32)
    c = RNG.standard_normal((4, 6, 1)).astype(np.float32)
    x = RNG.standard_normal((4, 6, 32)).astype(np.float32)

    def scaled(x, p):
        return x * p["t"] + p["c"]

    def summed(x, p):
        return (x * p["t"] - p["c"]).sum(axis=-1)

    for fn in (scaled, summed):
        g = trace(fn, {"x": ((4, 6, 32), "float32")}, {"t": t, "c": c})
        compiled = compile_graph(g, "fused", options=ALWAYS)
        (grp,) = compiled.kernels
        assert grp.split() == 2 and "(i % 6) * inner + j" in compiled.kernel_source
        assert_bits(compiled(x), [fn(x, {"t": t, "c": c})], fn.__name__)



@needs_compiler
def test_every_way_an_operand_can_repeat_along_the_loop_computes_numpy_s_values():
    # For loops of 3 and 4 axes, operands of every shape that broadcasts to the loop by leading 1s and by 1s
    # inside (whole, row, column, single value, tile, or none of these: then the node stays outside the kernel),
    # in an elementwise group ending with a sum over the last axis, and alone: NumPy's values bit for bit.
    import itertools

    rng = np.random.default_rng(23)
    for loop in [(3, 4, 5), (2, 3, 4, 6)]:
        x = rng.standard_normal(loop).astype(np.float32)
        for keep in itertools.product([False, True], repeat=len(loop)):
            shape = tuple(d if k else 1 for d, k in zip(loop, keep))
            for drop in range(len(shape)):
                if any(d != 1 for d in shape[:drop]):
                    break
                t_shape = shape[drop:]  # (leading 1s dropped: the same broadcast)
                t = rng.standard_normal(t_shape).astype(np.float32)

                def scaled(x, p):
                    return x * p["t"] - 0.5

                def summed(x, p):
                    return (x * p["t"] - 0.5).sum(axis=-1)

                for fn in (scaled, summed):
                    g = trace(fn, {"x": (loop, "float32")}, {"t": t})
                    compiled = compile_graph(g, "fused", options=ALWAYS)
                    assert_bits(compiled(x), [np.asarray(fn(x, {"t": t}))], f"{fn.__name__} {loop} {t_shape}")



@needs_compiler
@pytest.mark.parametrize("make", [lambda x: (x * 2.0).sum(), lambda x: np.tanh(x).mean(), lambda x: (x - 1.0).var()],
                         ids=["sum", "mean", "var"])
def test_a_kernel_ending_in_a_full_reduction_gives_a_numpy_scalar(make):
    """NumPy's reductions to 0-d give a scalar (np.float64), not a 0-d array, and compile() hands back what the
    graph's code computes: a kernel must give the scalar too."""
    x = np.linspace(-1.0, 1.0, 5_000)
    compiled = compile_graph(trace(make, {"x": x.shape}), backend="fused", options=ALWAYS)
    assert compiled.kernels, "the reduction ran as a kernel"
    (got,) = compiled._forward((x,), compiled._params)  # the raw outputs, before the wrapper makes arrays of them
    expected = make(x)
    assert type(got) is type(expected)
    assert_close([np.asarray(got)], [np.asarray(expected)], "full reduction", "fused")
