"""Every bug the differential fuzzer found, kept as a regression test: the shrunk program it printed (run
through every way with ``replay``) and the same trap written out by hand.

    1. compile: a float taken out of a tensor and returned inside a list was the first call's float forever
    2. compile: ``t.max().item()`` crashed: the bound method of a stand-in tensor crossed the graph break
    3. compile: work on a NumPy scalar (``s.astype``) ran once while capturing and was kept as a constant
    4. compile: two arguments that were one array in the first call were one graph input for good; NumPy's
       shared scalars (``np.True_``) made unrelated locals one input too
    5. trace, lazy, compile: ``x[-1]`` of a 1-D array is a NumPy scalar, a copy; writing into it wrote into ``x``
    6. trace: ``shapes`` with a non-numeric dtype or more than 64 dimensions raised NumPy's error, not TraceError
    7. run, to_python, check_guards: compile()'s graphs take Python numbers as inputs (``global G: float``),
       which they refused as "not a NumPy array" (found by the F5 guard suite running compile with each backend)
    8. all frontends: ``s ** 3`` on a NumPy scalar runs NumPy's scalar math, which rounds differently from the
       np.power ufunc the graph ran (about 3% of values, float32 and float64): pow now records the spelling
    9. compile: a local bound on one path (``for i`` inside an ``if``) and passed through a cached segment made
       a call that took the other path fail with KeyError: 'i'
   10. compile: a comprehension after a graph break read its closure cell as the first call's cell: every later
       call returned the first call's values
   11. compile and trace: a number guard took -0.0 for 0.0 (``==``), so a graph built for one zero was reused for
       the other (``1 / s``: -inf for inf)
   12. all frontends: ``x.copy()`` is C order but the copy op kept the input's order (as ``np.copy`` does); on a
       broadcast view the layouts differ and matmul, which picks its summation order by strides, rounded
       differently (found by the 10,000-program run)
   13. compile (after symbolic shapes landed): a shape change made sizes symbolic, and constant folding asked
       whether a symbolic size was small: OpError out of the call (found by the F5 guard suite)
   15. compile (F.cond captured into regions, new that day): after a shape change made sizes symbolic, a cond
       over a max_pool2d result got region inputs of size ``(s0 + 2) // 2``, from which the region cannot bind
       ``s0``: VerifyError out of every later call (found by the large F5 guard run)
   16. parse: mutated texts made the parser raise OpError (a constant typed with a symbolic size) or TypeError
       (a size where a dtype belongs) instead of GraphParseError (found by the large F7 run)
   17. fold (every exact way): ``np.zeros_like(x)`` takes ``x``'s memory order, which the IR does not hold; folded
       into a row-major constant, the zeros of a transposed view made a later sum add up in another order (last
       bits of a float32 sum; found by the large F5 run with a new seed, 2026-11-29)
   14. codegen and fused (buffers kept between calls, new that day): a returned result could take over, through
       a chain of in-place lines, the memory of an intermediate kept between calls, so the next call overwrote
       the result the caller held (found by F1's CI sample as soon as the ways planned buffers for small arrays)

(1-4 were found on the branch's base; the compile() rewrite merged from main since fixes them too, and these
tests hold it to that.)
"""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from graph_lab import F, ScriptError, TraceError, run, trace
from graph_lab.testing.differential import replay
from graph_lab.testing.ways import WAYS

WAY_NAMES = [w.name for w in WAYS]


def arr(values, dtype="float64"):
    return np.array(values, dtype=dtype)


# 1. seed 44 of the first sweep, shrunk
FLOAT_IN_A_LIST = """\
def program(x0):
    h1 = np.ceil(x0)
    h2 = np.where((h1 > 0), h1, -1.0)
    h4 = np.cos(h2)
    h5 = (h4 // (np.abs(x0) + 0.5))
    s6 = float(h5.sum())
    return [s6]
"""

# 2. seed 37
ITEM_ACROSS_A_BREAK = """\
def program(x1):
    h4 = np.sign(x1)
    s8 = h4.max().item()
    return (x1, s8)
"""

# 3. seed 13
NUMPY_SCALAR_LOCAL = """\
def program(x0, x2):
    h1 = F.sigmoid(x2)
    s2 = float(np.mean(x0))
    h25 = h1.astype(np.float32)
    return (h25,)
"""

# 4. seed 1180
SHARED_NUMPY_BOOL = """\
def program(x0, x1):
    h2 = np.all(x1, axis=None)
    h3 = (x1 == x1)
    h15 = np.any(h3, axis=None)
    s16 = x0.max().item()
    return [h15]
"""

# 8. seed 300719, shrunk
SCALAR_POWER = """\
def program(x2):
    h3 = ((np.abs(x2) + 0.5) ** 3)
    h4 = np.power(np.abs(x2) + 0.5, 1.5)
    return (h3, h4)
"""

# 9. seed 400313 of the side-effect sweep, shrunk by hand
LOCAL_BOUND_ON_ONE_PATH = """\
log = []


def program(x0):
    h1 = np.clip(x0, -1.5, 0.75)
    if int(np.argmax(h1)) == 0:
        for i in range(3):
            x0 = x0 * 0.5 + h1
    log.append(round(float(h1.sum()), 4))
    for i in range(3):
        h1 = np.maximum(h1, x0)
    return x0, h1
"""

# 10. seed 31 after comprehensions were added to the generator, shrunk
COMPREHENSION_AFTER_A_BREAK = """\
def program(x0):
    h1 = F.relu(x0)
    h3 = x0 * 1.0
    n4 = 0
    while float(np.abs(h3).max()) > 1.0 and n4 < 4:
        h3 = h3 * 0.5
        n4 += 1
    h5 = np.stack([h1 * c for c in (0.5, 1.0, 2.0)])
    return [h5]
"""

# 11. seed 352 of the probe sweep, shrunk
SIGNED_ZERO_LOCAL = """\
def program(x0, c):
    h1 = np.ceil(x0)
    s2 = float(x0.sum())
    h3 = h1.reshape(-1)
    return [h3]
"""

# 12. seed 20260744 of the large run, shrunk
COPY_LAYOUT = """\
def program(x1, x2):
    h1 = np.broadcast_to(x2, (3, 1, 5))
    h10 = h1.copy()
    h15 = np.matmul(h10, x1)
    return {'r0': h15}
"""

# 5. seed 298 (side-effect sweep)
SCALAR_IS_A_COPY = """\
def program(x0):
    h3 = np.expm1(x0)
    h5 = F.sigmoid(h3)
    h7 = np.sum(h5, axis=0)
    h10 = h7.copy()
    h11 = h10[-1]
    h11 *= -0.5
    return (h10,)
"""

# 14. seed 20260611 of the CI sample (min_buffer_bytes=0)
KEPT_BUFFER_RETURNED = """\
def program(x1):
    h41 = np.sqrt((np.abs(x1) + 0.5))
    return (h41,)
"""

# 15. seed 20260964 of the large guard run (F5), shrunk by hand to the two lines that matter
COND_OVER_POOLED_SIZES = """\
def program(x0, c):
    h4 = F.max_pool2d(x0, 2, padding=1)
    h6 = F.cond(h4.max() > 1, lambda a: np.tanh(a) * 2.0, lambda a: a * 0.5 - 1.0, h4)
    return h6 * c
"""

# 17. seed 1504 of the large guard run (F5, --seed 1129), shrunk by hand to the lines that matter
ZEROS_LIKE_LAYOUT = """\
def program(x1):
    h1 = np.transpose(x1, (1, 2, 0))
    h2 = np.zeros_like(h1[0])
    for row in h1:
        h2 = h2 + row
    h5 = (h1 / (np.abs(h2) + 0.5))
    return h5.sum()
"""

CASES = {
    "float-in-a-list": (FLOAT_IN_A_LIST, [[arr(1.83)], [arr(0.126)], [arr(-2.5)]]),
    "item-across-a-break": (ITEM_ACROSS_A_BREAK, [[np.zeros((5, 1), np.float32)], [np.ones((5, 1), np.float32)]]),
    "numpy-scalar-local": (NUMPY_SCALAR_LOCAL, [[arr(1.83), arr(-0.546)], [arr(0.42), arr(-0.0398)]]),
    "shared-numpy-bool": (SHARED_NUMPY_BOOL, [[arr([1.16, -0.85, 0.0, 0.24]), arr(-0.277, "float32")],
                                              [arr([0.22, 0.64, 1.05, -2.29]), arr(0.767, "float32")],
                                              [arr([0.0, 0.0, 0.0, 0.0]), arr(0.0, "float32")]]),
    "scalar-power": (SCALAR_POWER, [[arr(-0.16089846193790436, "float32")], [arr(1.2309085974392473)]]),
    "local-bound-on-one-path": (LOCAL_BOUND_ON_ONE_PATH, [[arr([1.0, 0.0])], [arr([0.0, 1.0])]]),
    "comprehension-after-a-break": (COMPREHENSION_AFTER_A_BREAK, [[arr([[-0.4], [0.26], [0.61], [-0.97]])],
                                                                   [arr([[0.43], [0.02], [0.56], [-1.33]])],
                                                                   [arr([[0.0], [0.0], [0.0], [0.0]])]]),
    "signed-zero-local": (SIGNED_ZERO_LOCAL, [[arr(-0.528), 0.75], [arr(0.618), -0.5], [arr(0.0), 0.75]]),
    "copy-layout": (COPY_LAYOUT, [[arr([[-0.4687352478504181], [0.08713015168905258], [-0.3610333800315857],
                                         [-1.5942274332046509], [-0.0461081899702549]], "float32"),
                                    arr([[0.9820746588696153, 1.400178380898464, 0.1302592980676208,
                                          -0.9819607359297337, -0.002992070933692036]])]]),
    "cond-over-pooled-sizes": (COND_OVER_POOLED_SIZES, [
        [arr([[[1.61, 0.35], [-1.08, -0.94], [-0.69, -1.34], [-0.48, -1.55], [-0.11, -0.66]]], "float32"), 0.75],
        [arr([[[1.61, 0.35, -1.08], [-0.94, -0.69, -1.34], [-0.48, -1.55, -0.11], [-0.66, 0.67, 0.17],
               [0.04, 0.59, -0.8], [0.14, -0.03, -0.12]]], "float32"), 0.75],
        [arr([[[1.61, 0.35], [-1.08, -0.94], [-0.69, -1.34], [-0.48, -1.55], [-0.11, -0.66]]], "float32"), 0.75]]),
    "kept-buffer-returned": (KEPT_BUFFER_RETURNED, [[arr([[0.71, -0.52, 0.57], [-1.35, 0.28, 0.81]])],
                                                    [arr([[-0.1, 1.46, -0.62], [-0.24, 1.1, -0.9]])]]),
    "zeros-like-layout": (ZEROS_LIKE_LAYOUT, [[np.random.default_rng(seed).standard_normal((5, 4, 5)).astype(
        np.float32)] for seed in (2, 3)]),
    "scalar-is-a-copy": (SCALAR_IS_A_COPY, [[arr([[0.19, 2.23, 1.23, -0.83, 0.59], [-0.66, 0.52, -0.37, -0.8, 0.4]])]]),
}


@pytest.mark.parametrize("way_name", WAY_NAMES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_fuzzer_reproducer_agrees_with_eager_on_every_way(case, way_name):
    source, calls = CASES[case]
    try:
        assert replay(source, way_name, calls) is None
    except (TraceError, ScriptError) as e:
        # The documented outcome for ways that cannot follow data into Python (trace in error mode, script):
        # a refusal that names the value Python needed; never a wrong result.
        assert "is needed here as a Python" in str(e), e


# --- the same traps, by hand


def test_a_float_from_a_tensor_in_a_returned_list_is_recomputed_each_call():
    def f(x):
        return [float(x.sum())]

    cf = graph_lab.compile(f)
    assert [cf(np.array([v]))[0] for v in (1.0, 2.0, 3.0)] == [1.0, 2.0, 3.0]


def test_a_tensor_method_loaded_before_a_break_runs_on_the_real_array():
    def f(x):
        return x.max().item()

    cf = graph_lab.compile(f)
    assert cf(np.arange(3.0)) == 2.0 and cf(np.arange(5.0)) == 4.0


def test_work_on_a_numpy_scalar_local_is_recomputed():
    def f(x, y):
        s = np.sum(y)          # a NumPy scalar after the graph runs
        t = float(x.mean())    # a break: s is a local the next segment reads
        return s.astype(np.float32) + t

    cf = graph_lab.compile(f)
    for v in (1.0, 2.0, 3.0):
        assert cf(np.ones(2), np.full(2, v)) == f(np.ones(2), np.full(2, v))


def test_aliased_arguments_are_not_merged_for_later_calls():
    def f(a, b):
        return a + b * 2

    cf = graph_lab.compile(f)
    x, y = np.ones(3), np.zeros(3)
    np.testing.assert_array_equal(cf(x, x), f(x, x))
    np.testing.assert_array_equal(cf(x, y), f(x, y))


@pytest.mark.parametrize("capture", ["trace", "lazy", "compile"])
def test_writing_into_x_of_an_integer_index_does_not_write_into_x(capture):
    def f(x):
        x = x.copy()
        s = x[1]              # a NumPy scalar: a copy
        s *= 5.0
        v = x[..., 0]         # a 0-d view: writes through
        v *= 2.0
        return x, s

    x = np.arange(3.0) + 1
    want = f(x)
    if capture == "trace":
        got = run(trace(f, {"x": (3,)}), {"x": x})
    elif capture == "lazy":
        lr = graph_lab.LazyRunner()
        got = lr.materialize(list(f(lr.tensor(x))))
    else:
        got = graph_lab.compile(f)(x)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("spec", [((2,), object), ((2,), "U3"), ((2,), "datetime64[s]"), (1,) * 65])
def test_trace_refuses_shapes_numpy_cannot_make_tensors_of(spec):
    with pytest.raises(TraceError, match="shapes\\['x'\\]"):
        trace(lambda x: np.tanh(x) * F.relu(x), {"x": spec})


SCALE = 0.5


def scaled(x):
    return np.tanh(x) * SCALE


def test_graphs_with_python_number_inputs_run_on_every_backend():
    cf = graph_lab.compile(scaled)
    x = np.arange(3.0)
    cf(x)
    g = cf.cache[min(cf.cache)][0].graph
    weak = [name for name, t in g.input_types().items() if t.weak is not None]
    assert weak, f"compile() now makes {SCALE!r} a constant; this test needs a graph with a number input:\n{g}"
    inputs = {name: (SCALE if name in weak else x) for name in g.input_names}
    want = scaled(x)
    np.testing.assert_array_equal(run(g, inputs)[0], want)
    np.testing.assert_array_equal(g.to_python()(**inputs)[0], want)
    assert graph_lab.check_guards(g, inputs)
    with pytest.raises(graph_lab.GraphInputError, match="must be a NumPy array, got str"):
        run(g, {**inputs, weak[0]: "0.5"})


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_power_of_numpy_scalars_rounds_as_the_spelling_did(dtype):
    def f(x):
        s = np.abs(x) + 0.5  # a NumPy scalar: what a ufunc returns for a 0-d array
        return s ** 1.5, np.power(s, 1.5)

    g = trace(f, {"x": ((), dtype)})
    assert [n.attrs.get("operator") for n in g.nodes if n.op == "pow"] == [True, None]
    rng = np.random.default_rng(0)
    differs = 0
    for _ in range(300):
        x = np.asarray(rng.uniform(0, 10), dtype)
        want = f(x)
        differs += want[0] != want[1]  # NumPy itself: the two spellings disagree now and then
        for got, w in zip(run(g, {"x": x}), want):
            assert got.tobytes() == np.asarray(w).tobytes()
    assert differs > 0


def test_a_local_bound_on_another_path_stays_unbound():
    def f(x):
        if x.sum() > 0:
            for i in range(2):
                x = x * 0.5
        print(end="")  # a graph break between the two paths joining and the end
        return x + 1, "i" in locals()

    cf = graph_lab.compile(f)
    for x in (np.ones(2), -np.ones(2), np.ones(2)):
        got, want = cf(x), f(x)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1]


def test_a_comprehension_after_a_break_reads_this_calls_variable():
    def f(x):
        h = x * 2.0
        if float(x.max()) > 10.0:
            x = x * 0.5
        return np.stack([h * c for c in (0.5, 1.0)])

    cf = graph_lab.compile(f)
    for v in (1.0, 2.0, 3.0):
        np.testing.assert_array_equal(cf(np.full(2, v)), f(np.full(2, v)))


def test_guards_tell_the_two_zeros_apart():
    def f(x):
        s = float(x.max())
        return np.ones(2) / s

    with np.errstate(divide="ignore"):
        g = trace(f, {"x": (1,)}, mode="guard", example={"x": np.array([-0.0])})
        assert not graph_lab.check_guards(g, {"x": np.array([0.0])})
        assert graph_lab.check_guards(g, {"x": np.array([-0.0])})
        cf = graph_lab.compile(f)
        for x in (np.array([-0.0]), np.array([0.0]), np.array([-0.0])):
            np.testing.assert_array_equal(cf(x), f(x))


@pytest.mark.parametrize("capture", ["trace", "lazy", "compile"])
def test_each_copy_spelling_lays_out_its_result_as_numpy_does(capture):
    def f(x):
        b = np.broadcast_to(x, (3, 1, 4))
        return b.copy(), np.copy(b), +b, np.positive(b), b.copy().T.copy()

    x = np.arange(4.0).reshape(1, 4)
    want = f(x)
    if capture == "trace":
        got = run(trace(f, {"x": (1, 4)}), {"x": x})
    elif capture == "lazy":
        lr = graph_lab.LazyRunner()
        got = lr.materialize(list(f(lr.tensor(x))))
    else:
        got = graph_lab.compile(f)(x)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
        assert a.strides == b.strides


def test_constant_folding_does_not_decide_symbolic_sizes():
    def f(x):
        h = np.full_like(x, 2.0)
        return np.var(h, ddof=1)

    cf = graph_lab.compile(f)
    for shape in [(2, 3), (3, 4), (2, 3), (5, 1)]:
        x = np.ones(shape)
        assert cf(x) == f(x)


@pytest.mark.parametrize("backend", ["codegen", "fused"])
def test_a_returned_result_never_lives_in_a_buffer_kept_between_calls(backend):
    from graph_lab import FusedOptions, compile_graph

    def program(x):
        return np.sqrt(np.abs(x) + 0.5), np.tanh(x * 2.0).sum(axis=0)

    g = trace(program, {"x": (5, 3, 4)})
    compiled = compile_graph(g, backend, options=FusedOptions(min_buffer_bytes=0))
    assert compiled.generated.plan.workspace  # (the abs and the product get buffers kept between calls)
    rng = np.random.default_rng(14)
    first_input, second_input = rng.standard_normal((5, 3, 4)), rng.standard_normal((5, 3, 4))
    first = compiled(first_input)
    compiled(second_input)
    for got, want in zip(first, program(first_input)):
        np.testing.assert_array_equal(got, want, strict=True)


def test_a_cond_whose_regions_cannot_read_their_sizes_is_a_graph_break():
    def program(x):
        pooled = F.max_pool2d(x, 2, padding=1)
        return F.cond(pooled.max() > 1, lambda a: np.tanh(a) * 2.0, lambda a: a * 0.5 - 1.0, pooled)

    cf = graph_lab.compile(program)
    rng = np.random.default_rng(15)
    for shape in [(1, 5, 2), (1, 6, 3), (1, 5, 2), (1, 9, 4)]:  # the second shape makes the sizes symbolic
        x = (rng.standard_normal(shape) * 2).astype(np.float32)
        np.testing.assert_array_equal(cf(x), program(x), strict=True)
    breaks = [e.segment.break_reason for e in cf.last_events if e.segment.end == "break"]
    assert any("sizes a region cannot read" in b for b in breaks), breaks


@pytest.mark.parametrize("text", [
    'graph g {\n  %0: f64[N] = input "x"\n  %1: f64[N] = const [1.0, 2.0]\n  %2: f64[N] = add %0, %1\n  return %2\n}',
])
def test_malformed_texts_are_parse_errors_only(text):
    with pytest.raises(graph_lab.GraphParseError) as info:
        graph_lab.parse(text)
    assert info.value.line == 3 and "static sizes" in str(info.value)


MERGED_OUTPUTS_WRITTEN_LATER = """\
def program(x0):
    h2 = np.tile(np.ones_like(x0), (1, 1))
    h4 = h2 * 1.0
    n5 = 0
    while float(np.abs(h4).max()) > 1.0 and n5 < 4:
        h4 = h4 * 0.5
        n5 += 1
    h4 *= 0.5
    return h2
"""


@pytest.mark.parametrize("way_name", [w.name for w in WAYS if w.frontend.name == "compile" and w.pipeline.name != "none"])
def test_outputs_the_passes_merged_stay_two_arrays_when_one_is_written_after_a_break(way_name):
    """Fuzzer seed 1149 (mutation programs): simplify turned h4 = h2 * 1.0 into h2, the ways' pipelines then handed
    one array to Python for both at the break, and h4 *= 0.5 also halved h2. compile() itself always ran
    fresh_outputs; the fuzzer's ways now do too."""
    assert replay(MERGED_OUTPUTS_WRITTEN_LATER, way_name, [[np.ones((2, 2))], [np.ones((3, 1))]]) is None
