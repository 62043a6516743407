"""The codegen backend and compile_graph: viewable source, buffer reuse that never changes a result (views,
outputs, non-contiguous inputs), parameters, errors, no user text in the source, and every frontend's graphs."""

from __future__ import annotations

import re

import numpy as np
import pytest

import graph_lab
from tests.support.backend_support import ALWAYS, assert_bits, cases, copies, reference
from graph_lab import (F, GraphBuilder, GraphExecutionError, GraphInputError, LazyRunner, compile_graph, run,
                       run_pipeline, trace)
from graph_lab.backends import codegen
from graph_lab.backends.reference import execute
from graph_lab.ops import SOURCE_OPS

RNG = np.random.default_rng(3)


def chain(x):
    return np.tanh(x * 0.5 + 1.0) * x - x * x


def test_source_is_viewable_and_reuses_dead_buffers():
    g = trace(chain, {"x": (64, 128)})  # 64 KiB per value: above the reuse threshold
    cg = compile_graph(g, "codegen")
    assert "def forward(inputs, params, consts):" in cg.source and "out=" in cg.source
    # x * 0.5 starts the buffer the result ends in: new memory each call; x * x only ever holds an intermediate,
    # so it is written into a buffer kept between calls
    assert len(cg.generated.plan.out) == 4 and len(cg.generated.plan.workspace) == 1 and "reuses" in cg.source
    assert "buffer reuse: 4 lines write into dead buffers" in cg.explain() and "1 into buffers kept" in cg.explain()
    x = RNG.standard_normal((64, 128))
    assert_bits(cg(x), run(g, {"x": x}), "codegen with out=")


def test_small_arrays_are_not_given_buffers():
    g = trace(chain, {"x": (4, 8)})
    assert "out=" not in compile_graph(g, "codegen").source
    # generate() does not even plan when no result reaches the threshold: the planner would give the same nothing
    assert codegen.largest_result_bytes(g) == 4 * 8 * 8 < codegen.MIN_BUFFER_BYTES
    assert codegen.generate(g).plan == codegen.plan_buffers(g, codegen.node_steps(g)) == codegen.BufferPlan()
    big = trace(chain, {"x": (64, 128)})
    assert codegen.generate(big).plan == codegen.plan_buffers(big, codegen.node_steps(big)) != codegen.BufferPlan()


def test_a_buffer_is_not_reused_while_a_view_of_it_lives():
    def fn(x):
        a = x * 2.0
        t = a.T  # a view of a: a's memory is live as long as t is
        b = np.exp(x)  # same shape and dtype as a: would take a's buffer if views were ignored
        return t + b

    g = trace(fn, {"x": (4, 4)})
    cg = compile_graph(g, "codegen", "none", options=ALWAYS)
    by_id = {id(n): n for n in cg.graph.nodes}
    written = {by_id[i].op: v.node.op for i, v in cg.generated.plan.out.items()}
    assert "exp" not in written  # exp gets a fresh array
    x = RNG.standard_normal((4, 4))
    assert_bits(cg(x), run(g, {"x": x}), "view kept alive")


def test_outputs_and_inputs_are_never_written():
    def fn(x):
        a = x + 1.0
        return a, np.tanh(a) * 3.0

    g = trace(fn, {"x": (4, 4)})
    cg = compile_graph(g, "codegen", "none", options=ALWAYS)
    x = RNG.standard_normal((4, 4))
    x_before = x.copy()
    a, b = cg(x)
    np.testing.assert_array_equal(x, x_before)
    assert_bits([a, b], run(g, {"x": x}), "outputs")
    assert not np.shares_memory(a, b)


def test_non_contiguous_inputs_take_the_plain_path_and_give_the_same_bits():
    def fn(x):
        return (x * 2.0 + 1.0).sum(axis=1)  # a reduction: its summation order follows memory order

    g = trace(fn, {"x": (64, 96)})
    cg = compile_graph(g, "codegen", options=ALWAYS)
    x = np.asfortranarray(RNG.standard_normal((64, 96)))
    assert not x.flags.c_contiguous
    assert_bits(cg(x), run(g, {"x": x}), "F-ordered input")
    assert_bits(cg(x[:, ::1].copy()), run(g, {"x": x.copy()}), "C-ordered input")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # empty slices and NaN samples warn, as in NumPy
def test_the_planner_only_assumes_c_order_where_numpy_gives_it():
    """Every value the buffer planner treats as C-contiguous is C-contiguous when the graph runs."""
    checked = 0
    for name, graph, inputs in cases():
        steps = codegen.node_steps(graph)
        with np.errstate(all="ignore"):
            env = execute(graph, copies(inputs))
        c_order = codegen.c_ordered_values(graph, steps)
        for v, claimed in c_order.items():
            value = env[v]
            if claimed and isinstance(value, np.ndarray) and value.ndim and v.node.op not in SOURCE_OPS:
                assert value.flags.c_contiguous, f"{name}: {v.node.op} result is not C-contiguous"
                checked += 1
    assert checked > 1000


def test_parameters_can_be_replaced_by_name_except_after_freezing():
    g = trace(lambda x, p: np.tanh(x @ p["w"]), {"x": (2, 3)}, {"w": RNG.standard_normal((3, 4))})
    x, w2 = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    cg = compile_graph(g, "codegen")
    assert_bits(cg(x, **{"p['w']": w2}), run(g, {"x": x, "p['w']": w2}), "parameter replaced")
    frozen = compile_graph(g, "codegen", "inference")
    with pytest.raises(GraphInputError, match="unexpected \"p\\['w'\\]\"|unexpected 'p\\[.w.\\]'"):
        frozen(x, **{"p['w']": w2})


def test_wrong_inputs_are_named_like_run_names_them():
    g = trace(lambda x: x @ x, {"x": (3, 3)})
    cg = compile_graph(g, "codegen")
    with pytest.raises(GraphInputError, match="missing 'x'"):
        cg(y=np.ones((3, 3)))
    with pytest.raises(GraphInputError, match="takes 1 inputs"):
        cg(np.ones((3, 3)), np.ones(3))
    with pytest.raises(GraphExecutionError, match=r"while executing %1 = matmul\(%0, %0\)"):
        cg(np.ones((3, 4)))


def test_generated_code_embeds_no_user_text():
    b = GraphBuilder("evil")
    x = b.input("x'); __import__('os').system('echo pwned') #", (3,))
    w = b.param("w\"\n", np.ones(3))
    g = b.output(b.add(b.tanh(x), w))
    for backend in ("codegen", "fused"):
        cg = compile_graph(g, backend, options=ALWAYS)
        assert "__import__" not in cg.source and "pwned" not in cg.source and "'" not in cg.source
        assert_bits(cg(np.ones(3)), run(g, {g.input_names[0]: np.ones(3)}), backend)


def test_graphs_from_trace_lazy_and_builder_all_compile():
    x = RNG.standard_normal((3, 4))
    lr = LazyRunner()
    t = lr.tensor(x)
    y = F.relu(t * 2.0 - 1.0).sum(axis=0)
    expected = lr.materialize(y)
    (lazy_graph,) = lr.executed
    compiled = compile_graph(lazy_graph, "codegen")
    assert_bits([compiled(in0=x)[0]], [expected], "LazyRunner graph")
    traced = trace(lambda x: F.relu(x * 2.0 - 1.0).sum(axis=0), {"x": (3, 4)})
    assert_bits(compile_graph(traced, "auto")(x), [expected], "trace graph")


def test_unknown_backends_are_refused():
    with pytest.raises(ValueError, match="unknown backend 'tvm'"):
        compile_graph(trace(lambda x: x + 1, {"x": (2,)}), "tvm")


def test_compile_runs_its_graphs_through_compile_graph():
    def model(x, w):
        return np.tanh(x @ w) * 2.0

    x, w = RNG.standard_normal((4, 8)), RNG.standard_normal((8, 8))
    for backend, kind in (("auto", "fused"), ("codegen", "codegen"), ("interpret", None)):
        cf = graph_lab.compile(model, backend=backend)
        assert_bits([cf(x, w)], [model(x, w)], f"compile(backend={backend!r})")
        runner = cf.cache[0][0].runner
        owner = getattr(runner, "__self__", None)
        assert (owner.backend if owner is not None else None) == kind


def test_passes_never_change_an_exact_result_on_the_models():
    for name, graph, inputs in [c for c in cases() if c[0].startswith("model-")]:
        optimized, _ = run_pipeline(graph, "exact")
        assert_bits(run(optimized, copies(inputs)), reference(graph, inputs), name)


SCALARS = [0.5, 0.1, -0.0, 1e-45, 3.4e38, 1e300, float("inf"), float("nan"), 3, -7, 2**31 - 1, 2**40]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "float16", "uint8"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_python_numbers_passed_as_0d_arrays_give_numpy_s_bits(op, dtype):
    fns = {"add": lambda x, c: [x + c, c + x], "sub": lambda x, c: [x - c, c - x],
           "mul": lambda x, c: [x * c, c * x], "div": lambda x, c: [x / c, c / x]}
    rng = np.random.default_rng(7)
    x = (rng.standard_normal(12) * 100).astype(dtype) if dtype[0] == "f" else rng.integers(1, 50, 12).astype(dtype)
    for c in SCALARS:
        with np.errstate(all="ignore"):
            try:
                eager = fns[op](x, c)
            except OverflowError:  # NumPy refuses the number for this dtype: so must the compiled graph
                eager = None
            g = trace(lambda x: fns[op](x, c), {"x": ((12,), dtype)}) if eager is not None else None
            if g is None:
                continue
            zero_d = codegen.scalar_operands(g)
            cg = compile_graph(g, "codegen", passes=())  # no pass: the lines of g itself
            assert_bits(cg(x), eager, f"{dtype} {op} {c!r}")
        # which lines took the 0-d array: only a float for a float32/float64 array, an int for an int32/int64 one,
        # and only values the dtype holds
        kinds = {"float32": float, "float64": float, "int32": int, "int64": int}
        dt = np.dtype(dtype)
        expect = kinds.get(dtype) is type(c) and eager[0].dtype == dt and (
            dt.kind != "f" or not np.isfinite(c) or abs(c) <= float(np.finfo(dt).max)) and (
            dt.kind != "i" or np.iinfo(dt).min <= c <= np.iinfo(dt).max)
        assert (len(zero_d) == 2) == expect, (dtype, op, c, zero_d)
        if expect:
            assert "consts[" in cg.source and "as a 0-d" in cg.source


def test_symbolic_graphs_run_as_codegen_and_check_their_shape_guards():
    def fn(x, y):
        return np.tanh(x) * y[: x.shape[0]] + x.shape[0]

    g = trace(fn, {"x": ("N", 3), "y": ("M", 3)}, example={"x": np.ones((4, 3)), "y": np.ones((6, 3))})
    for backend in ("codegen", "fused", "auto"):
        cg = compile_graph(g, backend)
        assert cg.backend == "codegen" and "s0 = inputs[" in cg.source
        for n, m in [(2, 5), (4, 6), (7, 9)]:
            x, y = RNG.standard_normal((n, 3)), RNG.standard_normal((m, 3))
            assert_bits(cg(x, y), run(g, {"x": x, "y": y}), f"{backend} N={n} M={m}")
            assert_bits(cg(x, y), [fn(x, y)], f"{backend} vs eager")
        with pytest.raises(GraphInputError) as compiled_error:
            cg(np.ones((5, 3)), np.ones((2, 3)))  # a shape guard of the capture: M >= N
        with pytest.raises(GraphInputError) as run_error:
            run(g, {"x": np.ones((5, 3)), "y": np.ones((2, 3))})
        assert str(compiled_error.value) == str(run_error.value)


def test_graphs_with_regions_run_as_codegen():
    def fn(x, w):
        return F.cond(x.sum() > 0, lambda h: np.tanh(h @ w), lambda h: -h, x)

    g = trace(fn, {"x": (2, 3), "w": (3, 3)})
    w = RNG.standard_normal((3, 3))
    for backend in ("codegen", "fused"):
        cg = compile_graph(g, backend)
        assert cg.backend == "codegen" and "impl_cond(" in cg.source
        assert ("ran as codegen: it has control-flow regions" in cg.explain()) == (backend == "fused")
        for x in (np.ones((2, 3)), -np.ones((2, 3))):
            assert_bits(cg(x, w), run(g, {"x": x, "w": w}), backend)


def test_buffers_kept_between_calls_never_change_a_returned_result():
    def fn(x, w1, w2):
        h = x @ w1                    # no dead buffer yet: a buffer kept between calls
        g = np.tanh(h) * h + 1.0
        return g @ w2, g.sum(axis=0)  # g itself is not returned, its reductions are fresh results

    g = trace(fn, {"x": (64, 96), "w1": (96, 128), "w2": (128, 32)})
    for backend in ("codegen", "fused"):
        cg = compile_graph(g, backend)
        assert cg.generated.plan.workspace and "kept between calls" in cg.source
        first_inputs = [RNG.standard_normal(s) for s in ((64, 96), (96, 128), (128, 32))]
        first = cg(*first_inputs)
        kept = [a.copy() for a in first]
        for _ in range(3):
            others = [RNG.standard_normal(s) for s in ((64, 96), (96, 128), (128, 32))]
            assert_bits(cg(*others), run(g, dict(zip(("x", "w1", "w2"), others))), backend)
        assert_bits(first, kept, f"{backend}: a later call wrote into an earlier result")
        assert_bits(first, run(g, dict(zip(("x", "w1", "w2"), first_inputs))), backend)


def test_matmul_into_a_kept_buffer_gives_numpy_s_bits_for_any_operand_layout():
    def fn(a, b, c):
        return (a @ b + 1.0) @ c

    g = trace(fn, {"a": (200, 150), "b": (150, 120), "c": (120, 90)})
    cg = compile_graph(g, "codegen")
    assert re.search(r"np\.matmul\(v0, v1, out=consts\[\d+\]\)", cg.source) and "kept between calls" in cg.source
    for a, b, c in [(RNG.standard_normal((200, 150)), RNG.standard_normal((150, 120)), RNG.standard_normal((120, 90))),
                    (RNG.standard_normal((150, 200)).T, RNG.standard_normal((120, 150)).T,  # not C-contiguous
                     RNG.standard_normal((120, 90))),
                    (np.asfortranarray(RNG.standard_normal((200, 150))), RNG.standard_normal((150, 120)),
                     np.asfortranarray(RNG.standard_normal((120, 90))))]:
        for _ in range(2):
            assert_bits(cg(a, b, c), [fn(a, b, c)], "matmul layouts")


def test_two_threads_calling_one_compiled_graph_get_their_own_results():
    import threading

    def fn(x, w):
        return np.tanh(x @ w) @ w.T

    g = trace(fn, {"x": (128, 256), "w": (256, 256)})
    cg = compile_graph(g, "codegen")
    assert cg.generated.plan.workspace
    w = RNG.standard_normal((256, 256)) / 16
    inputs = [RNG.standard_normal((128, 256)) for _ in range(8)]
    expected = [fn(x, w) for x in inputs]
    failures = []

    def worker(k):
        for _ in range(20):
            for i in range(k, 8, 2):
                if not np.array_equal(cg(inputs[i], w)[0], expected[i]):
                    failures.append(i)

    threads = [threading.Thread(target=worker, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
