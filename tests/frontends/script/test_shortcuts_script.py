"""script's speed-ups (``frontends/script/kept_between_captures.py``: the ``Prepared`` kept per function, the
parse kept per code object with its analysis answers, ``verify()`` skipped for graphs the recorder alone made)
against the reference path (``capture_script(..., shortcuts=False)``: everything worked out anew) and eager NumPy:
on the script corpus (every kind of control flow), the same graphs, bit for bit the same results, the same
errors, captured again and again. Then each thing a kept answer depends on is changed between two captures (code,
name, defaults, globals, closure cells, shapes, argument names, params, methods, ``__signature__``), and the graph
is compared with the reference path's and with NumPy: a kept answer gone stale would make them differ. Last, what
the kept entries must not do: change the syntax trees, keep functions alive, or skip ``verify()`` for a graph
script shaped itself."""

from __future__ import annotations

import ast
import gc
import importlib.util
import inspect
import re
import sys
import types
import weakref

import numpy as np
import pytest

from graph_lab import ScriptError, TraceError, run, script
from graph_lab.frontends import pytree
from graph_lab.frontends.script import analysis, capture_script
from graph_lab.frontends.script.branches import _returns
from graph_lab.frontends.script.kept_between_captures import Prepared, _prepared, bind_by_name, source_of, state_of
from graph_lab.frontends.trace import bind_arguments, parse_spec
from tests.frontends.script.test_script_errors import expect_error
from tests.ops.test_ops import assert_same
from tests.support import script_corpus
from tests.support.script_corpus import CORPUS

rng = np.random.default_rng(11)


def reference(fn, shapes, params=None, loops="unroll"):
    """``script`` on the reference path: nothing kept, nothing skipped."""
    return capture_script(fn, shapes, params, loops, shortcuts=False)


def same_graph(a, b) -> None:
    assert str(a) == str(b)
    assert a.out_tree == b.out_tree
    assert list(a.param_values) == list(b.param_values)
    assert all(a.param_values[k] is b.param_values[k] for k in a.param_values)
    assert [(n.op, n.loc) for n in a.nodes] == [(n.op, n.loc) for n in b.nodes]


def kept(fn):
    return _prepared.get(weakref.ref(getattr(fn, "__func__", fn)))


def run_one(graph, inputs: dict):
    return run(graph, inputs)[0]


def load_module(path, name: str, text: str) -> types.ModuleType:
    """Write ``text`` to ``path`` and import it as a fresh module named ``name`` (a file, so script can read the
    source; each call makes new function objects)."""
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def eager_outputs(case, inputs: dict) -> list:
    args = [inputs[name].copy() for name in case.shapes] + ([case.params] if case.params is not None else [])
    out = case.fn(*args)
    return [np.asarray(v) for v in (out if isinstance(out, tuple) else (out,))]


# --- the property: shortcut path, reference path and eager NumPy on the corpus


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.id)
def test_kept_and_reference_captures_give_one_graph_that_computes_what_numpy_computes(case):
    """Three captures with what is kept (the first fills it) against one on the reference path: the same graph,
    the kept preparation used again rather than made anew, and results equal to eager NumPy's on every path."""
    _prepared.clear()
    want = reference(case.fn, case.shapes, case.params, loops=case.loops)
    assert kept(case.fn) is None  # (the reference path keeps nothing)
    graphs = [script(case.fn, case.shapes, case.params, loops=case.loops) for _ in range(3)]
    first = kept(case.fn)
    assert first is not None
    for graph in graphs:
        same_graph(graph, want)
        assert graph is not want
    assert kept(case.fn) is first
    for inputs in case.inputs:
        expected = eager_outputs(case, inputs)
        for graph in (want, graphs[-1]):
            got = run(graph, inputs)
            assert len(got) == len(expected)
            for a, b in zip(got, expected):
                assert_same(np.asarray(a), b, f"{case.id} on {inputs}")


def test_errors_are_the_reference_paths_every_time():
    """A construct script refuses, a function without source, an argument error: the same message from the
    reference path and from every capture with what is kept."""
    namespace = {}
    exec("def made(x):\n    return x * 2.0\n", namespace)
    for fn, shapes in ((reads_a_tensor_as_bool, {"x": (3,)}), (namespace["made"], {"x": (2,)}),
                       (shift, {"not_an_argument": (2,)})):
        messages = []
        for capture in (reference, script, script):
            with pytest.raises((ScriptError, TraceError)) as info:
                capture(fn, shapes)
            messages.append(str(info.value).split("\n  at ")[0])  # (then the call site: the caller's line)
        assert messages[0] == messages[1] == messages[2]


# --- kept preparations (Prepared): the function and the way it is called changed between captures


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
        same_graph(got, reference(chain, dict(shapes), WS))
        dims, dtype = parse_spec("x", spec)
        if all(type(d) is int for d in dims):
            check_chain(got, dims, WS, dtype)
        assert [n.attrs["type"] for n in got.nodes if n.op == "input"] == \
            [n.attrs["type"] for n in reference(chain, {"x": spec}, WS).nodes if n.op == "input"]


@pytest.mark.parametrize("bad", [(4.0, 8), (True, 8), (4, -8), ((4, 8), "object")])
def test_a_spec_equal_to_the_kept_one_is_still_checked(bad):
    """``(4.0, 8) == (4, 8)`` and ``(True, 8) == (1, 8)``: a kept preparation is never used for an equal spec that
    is another object, so a bad one is refused as a fresh preparation refuses it."""
    script(chain, {"x": (4, 8)}, WS)
    script(chain, {"x": (1, 8)}, WS)
    with pytest.raises(TraceError) as kept_error:
        script(chain, {"x": bad}, WS)
    with pytest.raises(TraceError) as fresh_error:
        reference(chain, {"x": bad}, WS)
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
        same_graph(graph, reference(use_params, {"x": (4, 8)}, params))
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
        same_graph(graph, reference(namespace["f"], {"x": (2,)}))
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
                reference(fn, {"x": (2,), "w": (2,)})
            assert str(kept_error.value) == str(fresh_error.value)
            continue
        graph = script(fn, {"x": (2,), "w": (2,)})
        same_graph(graph, reference(fn, {"x": (2,), "w": (2,)}))
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
            same_graph(graph, reference(affine, shapes, params))
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
        same_graph(graph, reference(model.forward, {"x": (4, 8)}, WS))
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
    state = state_of(fn, shapes, has_params, is_method)
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
        same_graph(graph, reference(pick, {"x": spec}))
        np.testing.assert_array_equal(run(graph, {"x": x})[0], x)
        graph = script(pick, {"x": spec, "y": spec})
        same_graph(graph, reference(pick, {"x": spec, "y": spec}))
        np.testing.assert_array_equal(run(graph, {"x": x, "y": y})[0], x * y)


SYMBOLIC = ("B", 8)


def test_symbolic_sizes_are_declared_by_every_capture():
    """Each capture declares its sizes in a ShapeEnv of its own: the types of a symbolic input are not kept."""
    graphs = [script(chain, {"x": SYMBOLIC}, WS) for _ in range(3)]
    for graph in graphs:
        same_graph(graph, reference(chain, {"x": SYMBOLIC}, WS))
        graph.verify()
        for batch in (2, 5):
            check_chain(graph, (batch, 8), WS)


# --- one function in several roles, and the analysis answers kept per node


def add_one(x):
    return x + 1.0


def times_three(x):
    return x * 3.0


def test_a_new_code_object_is_scripted_anew():
    fn = types.FunctionType(add_one.__code__, add_one.__globals__, "add_one")
    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(run_one(script(fn, {"x": (2,)}), {"x": x}), x + 1.0)
    fn.__code__ = times_three.__code__  # the same function object, another body
    np.testing.assert_array_equal(run_one(script(fn, {"x": (2,)}), {"x": x}), x * 3.0)


def divides_by_nothing(x):
    return x / not_defined  # noqa: F821  (the error under test)


def test_a_renamed_function_is_named_in_its_errors_after_a_capture():
    fn = types.FunctionType(divides_by_nothing.__code__, divides_by_nothing.__globals__, "first_name")
    for name in ("first_name", "second_name"):
        fn.__name__ = name
        with pytest.raises(Exception) as info:
            script(fn, {"x": (2,)})
        assert f"in {name}" in str(info.value)


def scaled(x, w, k=2.0):
    return x * w * k


class Plain:
    def __init__(self, k):
        self.k = k

    def forward(self, x, ws):
        return x * ws[0] * self.k


def test_the_kept_binding_matches_bind_arguments_for_each_way_of_calling():
    """Alternating argument names, params and a method on one function: each time the order and the graph are
    what the general path gives (bind_arguments asked directly)."""
    x, w = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    model = Plain(5.0)
    for _ in range(2):
        g = script(scaled, {"x": (2,), "w": (2,)})
        assert [n.attrs["name"] for n in g.nodes if n.op == "input"] == \
            bind_arguments(scaled, ["x", "w"], False)[0] == ["x", "w"]
        np.testing.assert_array_equal(run(g, {"x": x, "w": w})[0], x * w * 2.0)
        g = script(scaled, {"x": (2,)}, w)  # w is the params argument now
        assert bind_arguments(scaled, ["x"], True) == (["x"], "w")
        np.testing.assert_array_equal(run_one(g, {"x": x}), x * w * 2.0)
        g = script(model.forward, {"x": (2,)}, [w])
        np.testing.assert_array_equal(run_one(g, {"x": x}), x * w * 5.0)
        with pytest.raises(TraceError, match="not arguments of scaled"):
            script(scaled, {"y": (2,)})
        with pytest.raises(TraceError, match="must be the first positional arguments"):
            script(scaled, {"w": (2,)})


def test_a_function_given_a_signature_is_bound_by_inspect():
    fn = types.FunctionType(scaled.__code__, scaled.__globals__, "scaled", scaled.__defaults__)
    x, w = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    np.testing.assert_array_equal(run(script(fn, {"x": (2,), "w": (2,)}), {"x": x, "w": w})[0], x * w * 2.0)
    fn.__signature__ = inspect.Signature([inspect.Parameter("w", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                                          inspect.Parameter("x", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                                          inspect.Parameter("k", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                            default=2.0)])
    g = script(fn, {"x": (2,), "w": (2,)})
    # (what bind_arguments says: it also keeps parameters per code object, which for a function given a
    # __signature__ after a capture of it is the code's own order, not the signature's; script follows it)
    assert [n.attrs["name"] for n in g.nodes if n.op == "input"] == bind_arguments(fn, ["x", "w"], False)[0]


# --- analysis answers kept per node


def _blocks(tree: ast.AST):
    """(node, statements) for every block script asks about: an if's two branches together, a loop's body."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            yield node, node.body + node.orelse
        elif isinstance(node, (ast.For, ast.While)):
            yield node, node.body


def test_kept_answers_equal_the_analysis_functions():
    functions = [f for f in vars(script_corpus).values()
                 if isinstance(f, types.FunctionType) and f.__module__ == script_corpus.__name__]
    asked = 0
    for fn in functions:
        source = source_of(fn)
        for node, stmts in _blocks(source.tree):
            for question in (analysis.assigned_names, _returns, analysis.loop_exits):
                want = question(stmts)
                for _ in range(2):  # the second answer is the kept one
                    got = source.ask(question, node, stmts)
                    assert (list(got) if isinstance(want, list) else got) == want
                    asked += 1
    assert asked > 100


def branches_in_a_loop(x, ws):
    for i, w in enumerate(ws):
        if (x @ w).sum() > 0:
            x = x + np.tanh(x @ w)
        else:
            y = x * 0.5
            x = y - w.sum()
        if i % 2 == 0:
            x = x * 1.5
        elif x.sum() > 1.0:
            x = x - 1.0
    return x


def eager_branches_in_a_loop(x, ws):
    for i, w in enumerate(ws):
        if (x @ w).sum() > 0:
            x = x + np.tanh(x @ w)
        else:
            x = x * 0.5 - w.sum()
        if i % 2 == 0:
            x = x * 1.5
        elif x.sum() > 1.0:
            x = x - 1.0
    return x


@pytest.mark.parametrize("seed", range(4))
def test_ifs_on_tensor_data_in_an_unrolled_loop_compute_what_numpy_computes(seed):
    rng = np.random.default_rng(seed)
    ws = [rng.standard_normal((3, 3)) for _ in range(5)]
    graphs = [script(branches_in_a_loop, {"x": (2, 3)}, ws) for _ in range(2)]
    assert str(graphs[0]) == str(graphs[1])
    for _ in range(3):
        x = rng.standard_normal((2, 3))
        np.testing.assert_allclose(run_one(graphs[1], {"x": x}), eager_branches_in_a_loop(x, ws), rtol=1e-12)


def returns_in_a_loop(x, ws):
    for w in ws:
        x = x @ w
        if x.sum() > 0:
            return x
    return -x


def test_an_early_return_in_a_loop_is_refused_the_same_every_time():
    ws = [np.eye(2)] * 3
    messages = []
    for _ in range(2):
        with pytest.raises(Exception) as info:
            script(returns_in_a_loop, {"x": (2, 2)}, ws)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "return inside a loop" in messages[0]


def double_first(a, x):
    return a * 2.0 + x


class Scale(float):
    apply = double_first


def test_one_function_as_a_method_and_as_a_function():
    """The same function object bound as a method (its object first) and called plain, with the same argument
    names: the binding kept for one is not the other's."""
    x = np.array([1.0, 2.0])
    for _ in range(2):
        np.testing.assert_array_equal(run_one(script(Scale(3.0).apply, {"x": (2,)}), {"x": x}), 6.0 + x)
        with pytest.raises(TraceError, match="must be the first positional arguments"):
            script(double_first, {"x": (2,)})


# --- kept parses, errors the second time, and what script verifies


def test_scripting_leaves_the_kept_syntax_trees_as_they_were():
    """The kept parse serves every later call, so converting must never change it: the trees of every function
    of the corpus module (the scripted ones and the helpers they call, which are inlined) stay as they were."""
    functions = [f for f in vars(script_corpus).values()
                 if isinstance(f, types.FunctionType) and f.__module__ == script_corpus.__name__]
    trees = {f: source_of(f).tree for f in functions}
    before = {f: ast.dump(tree, include_attributes=True) for f, tree in trees.items()}
    for case in CORPUS:
        script(case.fn, case.shapes, case.params, loops=case.loops)
    for f, tree in trees.items():
        assert source_of(f).tree is tree
        assert ast.dump(tree, include_attributes=True) == before[f], f.__name__


def test_the_second_graph_computes_what_numpy_computes():
    def chain(x, ws):
        for w in ws:
            x = x + np.tanh(x @ w)
        return x

    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((3, 3)) for _ in range(4)]
    x = rng.standard_normal((2, 3))
    for _ in range(2):
        graph = script(chain, {"x": (2, 3)}, ws)
        assert graph.count() == 3 * len(ws)
        np.testing.assert_array_equal(run_one(graph, {"x": x}), chain(x, ws))


# --- new, edited and related functions


def test_an_edited_file_gives_a_new_graph(tmp_path):
    path = tmp_path / "edited_model.py"
    x = np.array([0.5, -1.0, 2.0])
    before = load_module(path, "edited_model_v1", "import numpy as np\n\ndef f(x):\n    return x + 1.0\n")
    g1 = script(before.f, {"x": (3,)})
    assert [n.op for n in g1.nodes if n.op not in ("input", "const")] == ["add"]
    np.testing.assert_array_equal(run_one(g1, {"x": x}), x + 1.0)
    after = load_module(path, "edited_model_v2", "import numpy as np\n\ndef f(x):\n    return np.exp(x) * 2.0\n")
    g2 = script(after.f, {"x": (3,)})
    assert [n.op for n in g2.nodes if n.op not in ("input", "const")] == ["exp", "mul"]
    np.testing.assert_array_equal(run_one(g2, {"x": x}), np.exp(x) * 2.0)


def test_two_functions_of_one_name_in_two_files(tmp_path):
    a = load_module(tmp_path / "model_a.py", "model_a", "def layer(x):\n    return x - 3.0\n")
    b = load_module(tmp_path / "model_b.py", "model_b", "def layer(x):\n    return x * x\n")
    x = np.array([1.0, 2.0])
    for _ in range(2):
        np.testing.assert_array_equal(run_one(script(a.layer, {"x": (2,)}), {"x": x}), x - 3.0)
        np.testing.assert_array_equal(run_one(script(b.layer, {"x": (2,)}), {"x": x}), x * x)


def make_scaler(k):
    def scale(x):
        return x * k
    return scale


def test_closures_sharing_one_code_object_keep_their_own_cells():
    double, triple = make_scaler(2.0), make_scaler(3.0)
    assert double.__code__ is triple.__code__
    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(run_one(script(double, {"x": (2,)}), {"x": x}), x * 2.0)
    np.testing.assert_array_equal(run_one(script(triple, {"x": (2,)}), {"x": x}), x * 3.0)


def shift(x, by=1.0):
    return x + by


def test_kept_parses_do_not_keep_functions_alive(tmp_path):
    module = load_module(tmp_path / "short_lived.py", "short_lived", "def f(x):\n    return x + 2.0\n")
    script(module.f, {"x": (2,)})
    code = weakref.ref(module.f.__code__)
    del module
    sys.modules.pop("short_lived", None)
    gc.collect()
    assert code() is None


# --- errors, first and second time


def reads_a_tensor_as_bool(x):
    if x.sum() > 0:
        pass
    y = bool(x.sum())
    return x if y else -x


def test_a_script_error_is_the_same_the_second_time():
    errors = []
    for _ in range(2):
        err = expect_error(reads_a_tensor_as_bool, {"x": (3,)}, "y = bool(x.sum())", "bool(x.sum())",
                           "keep it a tensor")
        errors.append((str(err), err.lineno, err.col, err.hint, err.construct))
    assert errors[0] == errors[1]


def test_a_function_without_source_fails_the_same_every_time():
    namespace = {}
    exec("def made(x):\n    return x * 2.0\n", namespace)
    messages = []
    for _ in range(2):
        with pytest.raises(ScriptError) as info:
            script(namespace["made"], {"x": (2,)})
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert "cannot read the source of made" in messages[0]


def test_an_argument_error_points_at_the_script_call():
    line = sys._getframe().f_lineno + 2
    with pytest.raises(TraceError) as info:
        script(shift, {"not_an_argument": (2,)})
    assert f"at test_shortcuts_script.py:{line}: `script(shift" in str(info.value)


# --- what script verifies, and the shortcuts of its last steps (compared with the general path)


def views_and_writes(x, p):
    y = x.copy()
    y[0] = 1.5
    z = y.reshape(2, 3).T
    unused = np.exp(x) * 3.0  # dead code: removed
    return {"z": z * p["scale"], "n": 2, "c": np.arange(3.0)}, float(x.shape[0])


def helper_and_lambda(x, w):
    def layer(h, k=2.0):
        return np.maximum(h @ w, 0.0) * k
    double = lambda h: h + h  # noqa: E731
    hs = [layer(x), double(x @ w)]
    return sum(hs) - x.mean(axis=0)


def returns_an_input(x, w):
    x @ w  # noqa: B018  (computed and dropped)
    return x


def python_branches(x, w, flag=True):
    if x.ndim == 2 and flag:
        y = x @ w
    else:
        y = x
    for i in range(3):
        if i % 2:
            continue
        y = y + i
    return y


class Scaler:
    def __init__(self):
        self.k = np.float64(3.0)

    def forward(self, x):
        return x * self.k


W = rng.standard_normal((6, 6))
STATIC_CASES = [  # (function, shapes, params): no control flow on tensor data, no symbolic size
    (chain, {"x": (4, 6)}, [W, W.T, W * 2]),
    (chain, {"x": (4, 6)}, []),
    (views_and_writes, {"x": (6,)}, {"scale": np.array(2.0)}),
    (helper_and_lambda, {"x": (3, 6)}, W),
    (returns_an_input, {"x": (3, 6)}, W),
    (python_branches, {"x": (3, 6)}, W),
    (Scaler().forward, {"x": (2, 3)}, None),
]


@pytest.fixture
def verify_calls(monkeypatch):
    """The graphs script() verifies while the test runs."""
    from graph_lab.ir.graph import Graph
    calls, verify = [], Graph.verify

    def counting(graph):
        calls.append(graph)
        verify(graph)
    monkeypatch.setattr(Graph, "verify", counting)
    return calls


@pytest.mark.parametrize("fn, shapes, params", STATIC_CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_a_graph_script_does_not_verify_passes_verify(fn, shapes, params, verify_calls):
    """script() skips verify() for a graph made by the recorder alone (see _convert): such graphs must pass it,
    and compute what NumPy computes."""
    graph = script(fn, shapes, params)
    assert verify_calls == []
    graph.verify()
    inputs = {name: rng.standard_normal(shape) for name, shape in shapes.items()}
    got = run(graph, inputs)
    want = fn(*inputs.values(), *([params] if params is not None else []))
    want_leaves = [leaf for _, leaf in pytree.flatten(want)[0]]
    assert len(got) == len(want_leaves)
    for a, b in zip(got, want_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


def test_script_verifies_the_graphs_it_shapes_itself(verify_calls):
    """Control flow on tensor data (regions) and symbolic sizes: verified by every capture."""
    for case in CORPUS[:5]:
        verify_calls.clear()
        graph = script(case.fn, case.shapes, case.params, loops=case.loops)
        assert verify_calls == [graph]
    verify_calls.clear()
    graph = script(chain, {"x": ("B", 6)}, [W])
    assert verify_calls == [graph]


class SameRepr:
    def __repr__(self) -> str:
        return "key"


def test_parameters_of_one_name_are_still_refused_by_verify():
    """Two dict keys that print alike give two parameters one name (add_param keeps one value): verify() reports
    it, as before the shortcut."""
    from graph_lab.errors import VerifyError

    a, b = SameRepr(), SameRepr()

    def both(x, p):
        return x @ p[a] + x @ p[b]
    with pytest.raises(VerifyError, match="already used"):
        script(both, {"x": (2, 6)}, {a: W, b: W.T})


def ends_with_a_return(x, w):
    y = np.tanh(x @ w)
    return y * 2.0, y.sum()


def returns_inside_a_block(x, w):
    y = np.tanh(x @ w)
    if True:
        return y * 2.0, y.sum()


def ends_with_a_failing_return(x, w):
    y = np.tanh(x @ w)
    return y @ np.ones(5)


def fails_inside_a_block(x, w):
    y = np.tanh(x @ w)
    if True:
        return y @ np.ones(5)


def test_a_last_return_converts_as_a_return_anywhere():
    """A return that ends the body and a return reached inside a block: the same graph, and the same error."""
    def ops(graph):
        return [(n.op, [v.type for v in n.outputs]) for n in graph.nodes]

    direct, raised = script(ends_with_a_return, {"x": (3, 6)}, W), script(returns_inside_a_block, {"x": (3, 6)}, W)
    assert ops(direct) == ops(raised) and direct.out_tree == raised.out_tree
    x = rng.standard_normal((3, 6))
    for a, b in zip(run(direct, {"x": x}), ends_with_a_return(x, W)):
        np.testing.assert_array_equal(a, b)
    messages = []
    for fn in (ends_with_a_failing_return, fails_inside_a_block):
        err = expect_error(fn, {"x": (3, 6)}, "return y @ np.ones(5)", "y @ np.ones(5)", "", params=W)
        messages.append(re.sub(r"\.py:\d+", ".py:N", str(err).split("\n", 1)[0]))  # (each at its own line)
    assert messages[0] == messages[1]


def test_binding_by_name_equals_inspect():
    """bind_by_name (script's arguments, without inspect for ordinary parameters) gives what inspect's
    bind_partial and apply_defaults give, in the same order, and raises inspect's TypeError otherwise."""
    def keyword_only(x, *, w=3):
        pass

    owner = object()
    cases = [(plain, [], {"x": 1}), (plain, [], {"w": 2, "x": 1}), (plain, [owner], {"w": 2}),
             (plain, [], {"flag": 0, "x": 1, "k": 5}), (no_defaults, [], {"c": 3}), (no_defaults, [], {}),
             (star, [], {"x": 1}), (star, [owner], {"k": 2, "z": 3}), (keyword_only, [], {"x": 1}),
             (positional_only, [], {"w": 1}), (positional_only, [owner], {}),
             (plain, [owner], {"x": 1}), (plain, [], {"nope": 1}), (positional_only, [], {"x": 1}),
             (no_defaults, [1, 2, 3, 4], {})]
    for fn, first, by_name in cases:
        try:
            bound = inspect.signature(fn).bind_partial(*first, **by_name)
            bound.apply_defaults()
            want = list(bound.arguments.items())
        except TypeError as e:
            with pytest.raises(TypeError, match=str(e)):
                bind_by_name(fn, first, by_name)
            continue
        for _ in range(2):  # the second time from what was kept for the function
            got = bind_by_name(fn, first, by_name)
            assert list(got.items()) == want, (fn.__name__, first, by_name)
            assert all(a is b for (_, a), (_, b) in zip(got.items(), want) if type(a) is not dict)  # (**more)
    defaults = plain.__defaults__
    try:
        plain.__defaults__ = (7.0, "new")  # new defaults: read again
        assert bind_by_name(plain, [], {"x": 1}) == {"x": 1, "k": 7.0, "flag": "new"}
    finally:
        plain.__defaults__ = defaults
