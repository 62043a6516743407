"""The recording layer's speed-ups (``frontends/recording_shortcuts.py`` and the type rules' memo,
``ops/type_rule_memo.py``) against its reference path, and both against eager NumPy: one property test for the
recording layer that trace, LazyRunner and script share.

The ``reference`` fixture switches every speed-up off (the collector runs during captures, each type rule is asked
afresh). Seeded random programs of the fuzzer's generator and programs written for the recorder's traps (views,
several outputs, constants, regions, symbolic sizes, stand-ins inside lists and keywords) are captured both ways:
the same graph text with its lines, the same guards and structure, the same errors, results bit for bit the same
and equal to eager NumPy's. Then what recording must keep on any path: a stale view or an unknown reshape
refused, a constant that is a snapshot, input types right capture after capture, one line's nodes at that line,
arguments bound by name, and the memo's own rules (``True`` is not ``1``, errors are never kept, it stays bounded).
"""

from __future__ import annotations

import numpy as np
import pytest

import graph_lab
from graph_lab import F, LazyRunner, TraceError, run, trace
from graph_lab.frontends import pytree, recorder
from graph_lab.frontends.recording_shortcuts import gc_paused
from graph_lab.frontends.tensor import Tensor
from graph_lab.ir.types import TensorType
from graph_lab.ops import REGISTRY, SOURCE_OPS, Op, opdef
from graph_lab.ops import type_rule_memo
from graph_lab.testing.generator import Options
from tests.ops.test_ops import trace_sample
from tests.support.opinfo import SAMPLES
from tests.support.shortcut_support import random_programs, shapes_of


@pytest.fixture
def reference(monkeypatch):
    """Switch every speed-up of the recording layer off: its reference path."""
    monkeypatch.setattr(gc_paused, "enabled", False)
    monkeypatch.setattr(recorder, "infer_static", lambda definition, types, attrs: definition.infer(types, attrs))


def captured(request, reference: bool, capture):
    """``capture()`` on the path asked for: the result, or the error's type and text."""
    if reference:
        request.getfixturevalue("reference")
    try:
        return capture()
    except TraceError as e:
        return type(e), str(e)


def graph_facts(graph) -> tuple:
    """What two captures of one program must agree on."""
    if isinstance(graph, tuple):  # (an error)
        return graph
    return (str(graph), graph.out_tree, list(graph.param_values), [(n.op, n.loc) for n in graph.nodes],
            [repr(g) for g in graph.guards])


def eager_leaves(fn, arrays: dict) -> list:
    with np.errstate(all="ignore"):
        return [leaf for _, leaf in pytree.flatten(fn(*[a.copy() for a in arrays.values()]))[0]]


def lazily(lr, fn, arrays: dict) -> list:
    """``fn`` on lazy tensors of ``arrays``, each tensor of the result materialized (as testing.ways does)."""
    result = fn(*[lr.tensor(x) for x in arrays.values()])
    leaves, _ = pytree.flatten(result)
    return [lr.materialize(leaf) if isinstance(leaf, Tensor) else leaf for _, leaf in leaves]


# --- programs written for the recorder's traps


def views_and_pieces(x):
    x = x.copy()
    a, b = np.split(x, 2)
    s = a * b
    t = x.T
    t[0] = 7.0  # written through the transpose into x
    d = np.einsum("ii->i", x[:2, :2])
    return x[:2] + s, x, d * 2.0, x.reshape(-1)[3:]


W = np.asfortranarray(np.arange(12.0).reshape(3, 4) / 7)


def constants(x):
    return x @ W + np.arange(4.0), x.sum() * 0.5


def regions(x):
    y = F.cond(x.sum() > 0, lambda h: h @ W, lambda h: h[:, :1] - np.ones((2, 4)), x)
    return F.fori_loop(0, 3, lambda i, h: np.tanh(h) + 1.0, y)


def in_lists_and_keywords(x):
    c = np.concatenate([np.zeros((2, 3)), x], axis=0)
    return F.clip(c, a_max=c * 0.5), np.stack((x, x + 1.0))


def symbolic_rows(x):
    return (x - x.mean(axis=0)) / (x.shape[0] + 1)


WRITTEN = [("views_and_pieces", views_and_pieces, {"x": np.arange(8.0).reshape(4, 2)}, None),
           ("constants", constants, {"x": np.arange(6.0).reshape(2, 3)}, None),
           ("regions", regions, {"x": np.arange(6.0).reshape(2, 3) - 2}, None),
           ("in_lists_and_keywords", in_lists_and_keywords, {"x": np.ones((2, 3))}, None),
           ("symbolic_rows", symbolic_rows, {"x": np.arange(12.0).reshape(4, 3)}, {"x": (("B", 3), "float64")})]
PROGRAMS = [(name, fn, arrays, None) for name, fn, arrays in
            random_programs(range(40)) + random_programs(range(100, 130), Options(python=False))] + WRITTEN


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", PROGRAMS, ids=[c[0] for c in PROGRAMS])
def test_trace_and_lazy_capture_the_same_on_the_reference_path(case, request):
    name, fn, arrays, shapes = case
    shapes = shapes or shapes_of(arrays)

    def capture():
        return trace(fn, shapes, mode="guard", example={k: a.copy() for k, a in arrays.items()})

    fast = captured(request, False, capture)
    fast_lazy = LazyRunner()
    with np.errstate(all="ignore"):
        fast_lazy_out = lazily(fast_lazy, fn, arrays)
    slow = captured(request, True, capture)
    slow_lazy = LazyRunner()
    with np.errstate(all="ignore"):
        slow_lazy_out = lazily(slow_lazy, fn, arrays)
    assert graph_facts(fast) == graph_facts(slow), name
    eager = eager_leaves(fn, arrays)
    if not isinstance(fast, tuple):
        fast.verify()
        with np.errstate(all="ignore"):
            got = run(fast, {k: a.copy() for k, a in arrays.items()})
        assert len(got) == len(eager), name
        for a, e in zip(got, eager):
            np.testing.assert_array_equal(a, e, err_msg=name)
    assert len(fast_lazy_out) == len(slow_lazy_out) == len(eager), name
    for a, b, e in zip(fast_lazy_out, slow_lazy_out, eager):
        np.testing.assert_array_equal(a, b, strict=True)
        np.testing.assert_array_equal(a, e, err_msg=name)
    assert fast_lazy.graphs == slow_lazy.graphs, name
    # The same graphs run at the same places; what each returns may differ, by the tensors still alive there:
    # with the collector paused (gc_paused), a tensor in a reference cycle outlives its last use.
    assert len(fast_lazy.executed) == len(slow_lazy.executed), name


@pytest.mark.parametrize("sample", SAMPLES[::5], ids=lambda s: s.id)
def test_each_node_has_the_types_its_rule_gives_asked_afresh(sample):
    """Each node of a capture, made twice (the second time from the memo), has the types its op's rule gives
    when asked again now."""
    for _ in range(2):
        graph, _ = trace_sample(sample)
        for node in graph.nodes:
            if node.op in SOURCE_OPS or node.regions:
                continue
            fresh = opdef(node.op).infer(tuple(v.type for v in node.inputs), node.attrs)
            assert tuple(v.type for v in node.outputs) == tuple(fresh), graph.node_text(node)


def test_the_collector_runs_again_after_a_capture_and_stays_off_if_it_was():
    import gc
    trace(lambda x: x + 1.0, {"x": (2,)})
    assert gc.isenabled()
    gc.disable()
    try:
        trace(lambda x: x + 1.0, {"x": (2,)})
        assert not gc.isenabled()
    finally:
        gc.enable()


# --- what recording keeps on any path


def test_a_lazy_graph_keeps_the_values_read_later():
    """The lazy runner cuts a graph out of its record; values a later computation reads are kept, not
    recomputed, and every result equals eager NumPy."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((4, 8)), rng.standard_normal((8, 8))
    lr = LazyRunner()
    t = lr.tensor(x)
    h = t @ w
    g = h * 2.0
    h = h + 1.0
    np.testing.assert_array_equal(lr.materialize(h), x @ w + 1.0)
    np.testing.assert_array_equal(lr.materialize(g), (x @ w) * 2.0)
    assert lr.graphs[1] == 1  # only the multiply ran the second time: the matmul's result was kept


def test_a_stale_view_is_refused_as_an_operand():
    def f(x):
        x = x.copy()
        v = x[1:]
        x[0] = 5.0  # writes x: the view v is stale
        return v + 1.0

    with pytest.raises(TraceError, match="written in place after"):
        trace(f, {"x": (4,)})


def test_a_reshape_of_a_written_array_is_refused():
    def f(x):
        x = x.copy()
        r = x.T.reshape(-1)  # a view or a copy: unknown
        x[0, 0] = 1.0
        return r * 2.0

    with pytest.raises(TraceError, match="reshape"):
        trace(f, {"x": (2, 3)})


def test_a_constant_is_a_read_only_snapshot_with_the_layout_of_its_array():
    w = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    graph = trace(lambda x: x @ w, {"x": (2, 3)})
    (const,) = [n for n in graph.nodes if n.op == Op.CONST]
    value = const.attrs["value"]
    assert value is not w and not value.flags.writeable and value.flags.f_contiguous
    np.testing.assert_array_equal(value, np.arange(12.0).reshape(3, 4))
    w[0, 0] = 100.0  # a later write does not reach the graph
    assert value[0, 0] == 0.0


def test_static_input_types_are_right_in_every_capture():
    """trace and script give each static input the type its shape and dtype make, capture after capture, and the
    graphs compute what NumPy computes."""
    from graph_lab.frontends.trace import parse_spec

    def f(x, y):
        return np.tanh(x @ y) + x.sum()

    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    y = np.ones((4, 4), np.float32)
    shapes = {"x": ((3, 4), "float32"), "y": ((4, 4), "float32")}
    for capture in (trace, graph_lab.script):
        first, second = capture(f, shapes), capture(f, shapes)
        for g in (first, second):
            for n in g.input_nodes:
                dims, dtype = parse_spec(n.attrs["name"], shapes[n.attrs["name"]])
                assert n.output.type == TensorType(dtype, dims) == n.attrs["type"]
                assert n.output.type.dtype == np.float32
            (got,) = g.to_python()(x=x, y=y)  # (the list of outputs)
            np.testing.assert_allclose(got, f(x, y), rtol=1e-6)
        assert str(first) == str(second)
    g = trace(f, {"x": (3, 4), "y": (4, 4)})  # a float64 shape of the same sizes is another type
    assert g.input_nodes[0].output.type == TensorType(np.dtype(np.float64), (3, 4))


def test_the_nodes_of_one_line_are_at_that_line():
    def f(x):
        for _ in range(3):
            x = x * 2.0
        return x

    graph = trace(f, {"x": (3,)})
    muls = [n for n in graph.nodes if n.op == Op.MUL]
    assert len(muls) == 3
    assert muls[0].loc == muls[1].loc == muls[2].loc
    assert muls[0].loc.lineno == f.__code__.co_firstlineno + 2
    assert muls[0].loc.text() == "x = x * 2.0"


def test_arguments_bind_by_name_and_a_wrong_name_fails_the_same_each_time():
    def f(x, y, params):
        return x @ params["w"] + y

    w = np.eye(3)
    g = trace(f, {"x": (2, 3), "y": (2, 3)}, {"w": w})
    a, b = np.ones((2, 3)), np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(run(g, {"x": a, "y": b})[0], a @ w + b)
    for _ in range(2):
        with pytest.raises(TraceError, match="not arguments of f"):
            trace(f, {"x": (2, 3), "z": (2, 3)}, {"w": w})
    g2 = trace(f, {"y": (2, 3), "x": (2, 3)}, {"w": w})  # keys in another order bind by name
    assert g2.input_names == ["x", "y"]


def test_tree_map_gives_each_leaf_its_path_and_rebuilds_the_structure():
    class Sub(list):
        pass

    def describe(path, leaf):
        return path, leaf

    assert pytree.tree_map(describe, [1, 2.0], "p") == [("p[0]", 1), ("p[1]", 2.0)]
    assert pytree.tree_map(describe, (3,), "p") == (("p[0]", 3),)
    assert pytree.tree_map(describe, {"a": 1, 3: 2, "b'": 4}, "p") == \
        {"a": ("p['a']", 1), 3: ("p[3]", 2), "b'": ("p[\"b'\"]", 4)}
    assert pytree.tree_map(describe, {"x": {"y": [1]}}, "p") == {"x": {"y": [("p['x']['y'][0]", 1)]}}
    assert pytree.tree_map(describe, [[1], (2,)], "") == [[("[0][0]", 1)], (("[1][0]", 2),)]
    assert pytree.tree_map(describe, [], "p") == [] and pytree.tree_map(describe, {}, "p") == {}
    assert pytree.tree_map(describe, Sub([1, 2]), "p") == [("p[0]", 1), ("p[1]", 2)]  # a list subclass: a list
    assert pytree.tree_map(describe, "a leaf", "p") == ("p", "a leaf")


# --- the type rules' memo


class _Rule:
    """A stand-in op definition whose rule counts its calls and answers by its attribute ``k``."""

    op = Op.ADD

    def __init__(self):
        self.calls = 0

    def infer(self, types, attrs):
        self.calls += 1
        if "k" not in attrs:
            return REGISTRY[Op.ADD].infer(types, attrs)
        value = attrs["k"]
        if value == "fail":
            raise ValueError("the rule refused")
        return (TensorType(np.dtype(np.bool_) if type(value) is bool else np.dtype(np.int64), ()),)


@pytest.fixture
def empty_memo():
    type_rule_memo._infer_memo.clear()
    yield
    type_rule_memo._infer_memo.clear()


def test_the_memo_answers_as_the_rule_does_for_equal_types(empty_memo):
    rule = _Rule()
    a = TensorType(np.dtype(np.float32), (4, 8))
    b = TensorType(np.dtype(np.float32), (4, 8))  # equal to a, another object
    c = TensorType(np.dtype(np.float64), (1, 8))
    first = type_rule_memo.infer_static(rule, (a, c), {})
    assert first == REGISTRY[Op.ADD].infer((a, c), {})
    assert type_rule_memo.infer_static(rule, (a, c), {}) == first and rule.calls == 1
    assert type_rule_memo.infer_static(rule, (b, c), {}) == first and rule.calls == 1
    assert type_rule_memo.infer_static(rule, (c, a), {}) == REGISTRY[Op.ADD].infer((c, a), {})
    assert rule.calls == 2


def test_the_memo_tells_true_from_one_and_never_keeps_an_error(empty_memo):
    rule = _Rule()
    t = (TensorType(np.dtype(np.float64), (2,)),)
    as_bool = type_rule_memo.infer_static(rule, t, {"k": True})
    as_int = type_rule_memo.infer_static(rule, t, {"k": 1})
    assert as_bool[0].dtype == np.bool_ and as_int[0].dtype == np.int64  # True == 1, but not the same attribute
    assert rule.calls == 2
    assert type_rule_memo.infer_static(rule, t, {"k": 1}) == as_int and rule.calls == 2
    for expected_calls in (3, 4):
        with pytest.raises(ValueError):
            type_rule_memo.infer_static(rule, t, {"k": "fail"})
        assert rule.calls == expected_calls  # asked again each time
    type_rule_memo.infer_static(rule, t, {"k": 0.5})  # a float is not keyed: asked each time
    type_rule_memo.infer_static(rule, t, {"k": 0.5})
    assert rule.calls == 6


def test_the_memo_stays_bounded(empty_memo):
    rule = _Rule()
    t = (TensorType(np.dtype(np.float64), (2,)),)
    for i in range(type_rule_memo._INFER_MEMO_SIZE + 10):
        type_rule_memo.infer_static(rule, t, {"k": i})
    assert len(type_rule_memo._infer_memo) <= type_rule_memo._INFER_MEMO_SIZE
