"""``script`` keeps what it works out about a function before converting it (``Prepared``: parsed shapes, argument
order, source, input types, argument binding) per function object, and uses it again while the function and the
way it is called are the same. These tests change each thing the kept answers depend on between two captures and
compare the graph with the one a fresh preparation gives (the kept entries dropped first), and with eager NumPy:
a kept answer that went stale would make them differ.

Also compared with the general path they skip: the arguments ``Prepared.bind`` lays out in advance with
``bind_by_name``, and the parameters made from a list of arrays without ``pytree.tree_map`` with the paths and
values ``tree_map`` gives."""

from __future__ import annotations

import gc
import types
import weakref

import numpy as np
import pytest

from tests.support import script_corpus
from graph_lab import TraceError, run, script
from graph_lab.frontends import pytree
from graph_lab.frontends.script import Prepared, _prepared
from graph_lab.frontends.script.calls import bind_by_name
from graph_lab.frontends.trace import parse_spec

rng = np.random.default_rng(11)


def fresh(fn, shapes, params=None, **kw):
    """``script`` with nothing kept: the preparation made anew."""
    _prepared.clear()
    return script(fn, shapes, params, **kw)


def same_graph(a, b) -> None:
    assert str(a) == str(b)
    assert a.out_tree == b.out_tree
    assert list(a.param_values) == list(b.param_values)
    assert all(a.param_values[k] is b.param_values[k] for k in a.param_values)
    assert [(n.op, n.loc) for n in a.nodes] == [(n.op, n.loc) for n in b.nodes]


def kept(fn):
    return _prepared.get(weakref.ref(getattr(fn, "__func__", fn)))


@pytest.mark.parametrize("case", script_corpus.CORPUS, ids=lambda c: c.id)
def test_a_kept_preparation_gives_the_graph_a_fresh_one_gives(case):
    want = fresh(case.fn, case.shapes, case.params, loops=case.loops)
    first = kept(case.fn)
    for _ in range(2):
        same_graph(script(case.fn, case.shapes, case.params, loops=case.loops), want)
    assert kept(case.fn) is first  # (used again, not made anew)


def chain(x, ws):
    for w in ws:
        x = x + np.tanh(x @ w)
    return x


def eager_chain(x, ws):
    for w in ws:
        x = x + np.tanh(x @ w)
    return x


def check_chain(graph, shape, ws, dtype=np.float64):
    x = rng.standard_normal(shape).astype(dtype)
    np.testing.assert_allclose(run(graph, {"x": x})[0], eager_chain(x, ws), rtol=1e-5)


WS = [rng.standard_normal((8, 8)) / 3 for _ in range(3)]


def test_new_shapes_for_the_same_names_are_read_again():
    """Other dtypes, sizes, symbolic sizes, a dict changed in place, equal tuples that are other objects: each
    capture's inputs are what a fresh preparation makes of its shapes."""
    shapes = {"x": (4, 8)}
    specs = [(4, 8), ((4, 8), "float32"), (2, 8), ("B", 8), (("B", 8), "float32"), tuple([4, 8]),
             ((4, 8), np.float32), (4, 8)]
    for spec in specs * 2:
        shapes["x"] = spec  # (the same dict, changed in place)
        got = script(chain, shapes, WS)
        same_graph(got, fresh(chain, dict(shapes), WS))
        dims, dtype = parse_spec("x", spec)
        if all(type(d) is int for d in dims):
            check_chain(got, dims, WS, dtype)
        assert [n.attrs["type"] for n in got.nodes if n.op == "input"] == \
            [n.attrs["type"] for n in fresh(chain, {"x": spec}, WS).nodes if n.op == "input"]


@pytest.mark.parametrize("bad", [(4.0, 8), (True, 8), (4, -8), ((4, 8), "object")])
def test_a_spec_equal_to_the_kept_one_is_still_checked(bad):
    """``(4.0, 8) == (4, 8)`` and ``(True, 8) == (1, 8)``: a kept preparation is never used for an equal spec that
    is another object, so a bad one is refused as a fresh preparation refuses it."""
    script(chain, {"x": (4, 8)}, WS)
    script(chain, {"x": (1, 8)}, WS)
    with pytest.raises(TraceError) as kept_error:
        script(chain, {"x": bad}, WS)
    with pytest.raises(TraceError) as fresh_error:
        fresh(chain, {"x": bad}, WS)
    assert str(kept_error.value).split("\n")[0] == str(fresh_error.value).split("\n")[0]


class Scaled(np.ndarray):
    pass


PARAMS = [
    [], WS, WS[:1], tuple(WS), {"a": WS[0], "b": WS[1]}, [WS[0], 2.0, WS[1]], [WS[0], [WS[1], WS[2]]],
    [WS[0], (WS[1],)], [WS[0].view(Scaled), WS[1]], [np.float64(0.5) * WS[0], WS[1]],
]


def use_params(x, ps):
    out = x
    for value in (list(ps.values()) if isinstance(ps, dict) else ps):
        for leaf in (value if isinstance(value, (list, tuple)) else [value]):
            out = out @ leaf if not isinstance(leaf, float) else out * leaf
    return out


def test_parameters_of_every_structure_are_what_tree_map_makes():
    """The list-of-arrays shortcut and tree_map make the same parameters (paths, values, order), and graphs that
    compute what NumPy computes, whatever structure came before."""
    x = rng.standard_normal((4, 8))
    for params in PARAMS + PARAMS[::-1]:
        graph = script(use_params, {"x": (4, 8)}, params)
        same_graph(graph, fresh(use_params, {"x": (4, 8)}, params))
        want = [(path, leaf) for path, leaf in pytree.flatten(params, "ps")[0] if isinstance(leaf, np.ndarray)]
        assert list(graph.param_values) == [path for path, _ in want]
        assert all(graph.param_values[path] is leaf for path, leaf in want)
        np.testing.assert_allclose(run(graph, {"x": x})[0], use_params(x, params), rtol=1e-12)


def test_a_list_of_arrays_is_made_as_tree_map_makes_it():
    from graph_lab.frontends.script import ScriptRecorder
    from graph_lab.frontends.trace import make_params
    from graph_lab.ir.graph import Graph
    for params in PARAMS:
        rec = ScriptRecorder(Graph("g"))
        made = make_params(rec, params, "ps", None)
        paths = []

        def note(path, leaf):
            paths.append(path)
            return leaf
        pytree.tree_map(note, params, "ps")
        flat_made, flat_params = pytree.flatten(made, "ps")[0], pytree.flatten(params, "ps")[0]
        assert [p for p, _ in flat_made] == paths == [p for p, _ in flat_params]  # the same structure and paths
        assert pytree.flatten(made)[1] == pytree.flatten(params)[1]
        for (path, m), (_, leaf) in zip(flat_made, flat_params):
            if isinstance(leaf, np.ndarray):  # a parameter named by its path, holding the very array
                assert m._value.node.attrs["name"] == path and rec.graph.param_values[path] is leaf
            else:
                assert m is leaf
        assert len(rec.graph.param_values) == sum(isinstance(leaf, np.ndarray) for _, leaf in flat_params)


# --- the function changed between captures


SCALE = 2.0


def uses_a_global(x):
    return x * SCALE


def test_a_changed_global_is_read_again():
    global SCALE
    x = np.array([1.0, -2.0])
    try:
        for k in (2.0, 3.0, -1.0):
            SCALE = k
            np.testing.assert_array_equal(run(script(uses_a_global, {"x": (2,)}), {"x": x})[0], x * k)
    finally:
        SCALE = 2.0


def test_a_function_defined_again_under_its_name_is_prepared_anew(tmp_path):
    """A module's function defined again (its file edited and run again in the same namespace): a new function
    object of the same name, scripted from its new source."""
    path = tmp_path / "redefined.py"
    namespace = {"np": np}
    x = np.array([1.0, 2.0])
    for body, want in (("x + 1.0", x + 1.0), ("x * 3.0  # longer", x * 3.0), ("x - w", x - 5.0),
                       ("x + 1.0", x + 1.0)):
        path.write_text(f"def f(x, w=5.0):\n    return {body}\n")
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        graph = script(namespace["f"], {"x": (2,)})
        same_graph(graph, fresh(namespace["f"], {"x": (2,)}))
        np.testing.assert_array_equal(run(graph, {"x": x})[0], want)


def affine(x, w, scale=2.0, shift=None):
    out = x * w * scale
    return out if shift is None else out + shift


def test_new_defaults_equal_or_not_are_bound_anew():
    fn = types.FunctionType(affine.__code__, affine.__globals__, "affine", affine.__defaults__)
    x, w = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    for defaults, want in [((2.0, None), x * w * 2.0), ((5.0, None), x * w * 5.0), ((5.0, 1.0), x * w * 5.0 + 1.0),
                           ((5.0, 1.0), x * w * 5.0 + 1.0), (None, None)]:
        fn.__defaults__ = defaults  # (a new tuple each time, equal or not to the last)
        if defaults is None:  # scale has no value now: an error, as eager Python raises one
            with pytest.raises(Exception) as kept_error:
                script(fn, {"x": (2,), "w": (2,)})
            with pytest.raises(Exception) as fresh_error:
                fresh(fn, {"x": (2,), "w": (2,)})
            assert str(kept_error.value) == str(fresh_error.value)
            continue
        graph = script(fn, {"x": (2,), "w": (2,)})
        same_graph(graph, fresh(fn, {"x": (2,), "w": (2,)}))
        np.testing.assert_array_equal(run(graph, {"x": x, "w": w})[0], want)


def keyword_only(x, *, k=2.0):
    return x * k


def test_new_keyword_defaults_are_bound_anew():
    fn = types.FunctionType(keyword_only.__code__, keyword_only.__globals__, "keyword_only")
    fn.__kwdefaults__ = {"k": 2.0}
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(run(script(fn, {"x": (2,)}), {"x": x})[0], x * 2.0)
    fn.__kwdefaults__ = {"k": 7.0}
    np.testing.assert_array_equal(run(script(fn, {"x": (2,)}), {"x": x})[0], x * 7.0)


def make_counter_scale():
    k = 1.0

    def scale(x):
        return x * k

    def set_k(v):
        nonlocal k
        k = v
    return scale, set_k


def test_a_changed_closure_cell_is_read_again():
    scale, set_k = make_counter_scale()
    x = np.array([1.0, 2.0])
    for k in (1.0, 4.0, -2.0):
        set_k(k)
        np.testing.assert_array_equal(run(script(scale, {"x": (2,)}), {"x": x})[0], x * k)


def test_a_function_given_wrapped_or_signature_later_is_bound_by_inspect():
    fn = types.FunctionType(affine.__code__, affine.__globals__, "affine", affine.__defaults__)
    x, w = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    script(fn, {"x": (2,), "w": (2,)})
    first = kept(fn)
    fn.__wrapped__ = affine
    graph = script(fn, {"x": (2,), "w": (2,)})
    np.testing.assert_array_equal(run(graph, {"x": x, "w": w})[0], x * w * 2.0)
    assert kept(fn) is first  # (nothing new kept: each capture prepares it anew)
    del fn.__wrapped__
    script(fn, {"x": (2,), "w": (2,)})
    assert kept(fn) is first


def test_argument_names_in_another_order_or_params_or_not():
    x, w = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    for _ in range(2):
        for shapes, params in (({"x": (2,), "w": (2,)}, None), ({"w": (2,), "x": (2,)}, None), ({"x": (2,)}, w)):
            graph = script(affine, shapes, params)
            same_graph(graph, fresh(affine, shapes, params))
            inputs = {name: {"x": x, "w": w}[name] for name in shapes}
            np.testing.assert_array_equal(run(graph, inputs)[0], x * w * 2.0)


class Model:
    def __init__(self, k):
        self.k = k

    def forward(self, x, ws, scale=1.0):
        for w in ws:
            x = np.tanh(x @ w) * self.k * scale
        return x


def test_a_method_of_two_objects_reads_each_object():
    x = rng.standard_normal((4, 8))
    for k in (1.0, 2.0, 1.0):
        model = Model(k)
        graph = script(model.forward, {"x": (4, 8)}, WS)
        same_graph(graph, fresh(model.forward, {"x": (4, 8)}, WS))
        want = x
        for w in WS:
            want = np.tanh(want @ w) * k
        np.testing.assert_allclose(run(graph, {"x": x})[0], want, rtol=1e-12)


def test_kept_entries_go_with_their_functions():
    _prepared.clear()
    script(affine, {"x": (2,), "w": (2,)})
    copy = types.FunctionType(affine.__code__, affine.__globals__, "affine", affine.__defaults__)
    script(copy, {"x": (2,), "w": (2,)})
    assert kept(copy) is not None and kept(copy) is not kept(affine) and len(_prepared) == 2
    ref = weakref.ref(copy)
    del copy
    gc.collect()
    assert ref() is None and len(_prepared) == 1


# --- the binding laid out in advance, against bind_by_name


def plain(x, w, k=2.0, flag=None):
    pass


def no_defaults(a, b, c):
    pass


def star(x, *rest, k=1, **more):
    pass


def positional_only(x, /, w=3):
    pass


def keyword_only_after(x, w, *, k=3):
    pass


def two_params(x, ws, more=[]):  # noqa: B006  (a mutable default: bound as the very object)
    pass


@pytest.mark.parametrize("fn, names, has_params, is_method", [
    (plain, ["x"], True, False), (plain, ["x", "w"], False, False), (plain, ["x"], False, False),
    (plain, ["w"], True, True), (no_defaults, ["a"], True, False), (no_defaults, ["a", "b", "c"], False, False),
    (no_defaults, ["a"], False, False), (star, ["x"], True, False), (positional_only, ["x"], True, False),
    (keyword_only_after, ["x"], True, False), (two_params, ["x"], True, False), (two_params, ["ws"], True, True),
])
def test_bound_arguments_equal_bind_by_name(fn, names, has_params, is_method):
    owner = object()
    called = types.MethodType(fn, owner) if is_method else fn
    shapes = {name: (2,) for name in names}
    state = (id(fn.__code__), fn.__name__, id(fn.__defaults__), id(fn.__kwdefaults__), tuple(shapes), has_params,
             is_method)
    prepared = Prepared(called, fn, shapes, state)
    args = {name: np.zeros(2) for name in prepared.order}
    if has_params:
        args[prepared.params_name] = [np.ones(2)]
    first = [owner] if is_method else []
    try:
        want = list(bind_by_name(fn, first, dict(args)).items())
    except TypeError as e:
        with pytest.raises(TypeError, match=str(e)):
            prepared.bind(fn, owner if is_method else None, dict(args))
        return
    got = list(prepared.bind(fn, owner if is_method else None, dict(args)).items())
    assert [name for name, _ in got] == [name for name, _ in want]
    assert all(a is b for (_, a), (_, b) in zip(got, want) if type(a) not in (tuple, dict))


def pick(x, y=None):
    return x if y is None else x * y


def test_more_or_fewer_argument_names_with_the_same_shape_objects():
    spec = (2,)
    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    for _ in range(2):
        graph = script(pick, {"x": spec})
        same_graph(graph, fresh(pick, {"x": spec}))
        np.testing.assert_array_equal(run(graph, {"x": x})[0], x)
        graph = script(pick, {"x": spec, "y": spec})
        same_graph(graph, fresh(pick, {"x": spec, "y": spec}))
        np.testing.assert_array_equal(run(graph, {"x": x, "y": y})[0], x * y)


SYMBOLIC = ("B", 8)


def test_symbolic_sizes_are_declared_by_every_capture():
    """Each capture declares its sizes in a ShapeEnv of its own: the types of a symbolic input are not kept."""
    graphs = [script(chain, {"x": SYMBOLIC}, WS) for _ in range(3)]
    for graph in graphs:
        same_graph(graph, fresh(chain, {"x": SYMBOLIC}, WS))
        graph.verify()
        for batch in (2, 5):
            check_chain(graph, (batch, 8), WS)
