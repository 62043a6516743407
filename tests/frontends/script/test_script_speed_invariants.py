"""What script's caches must never change: ``script`` keeps the parsed source of each code object and the
signature of each function, so a second capture skips reading and parsing the source. These tests check that a
second capture gives the same graph and the same errors as the first, and that a new or edited function, a
function sharing another's code, and a function given new defaults are never served what was kept for another.
Results are compared with eager NumPy."""

from __future__ import annotations

import ast
import gc
import importlib.util
import re
import sys
import types
import weakref

import numpy as np
import pytest

from graph_lab import ScriptError, TraceError, run, script
from graph_lab.frontends import pytree
from graph_lab.frontends.script.function_source import source_of
from tests.support import script_corpus
from tests.support.script_corpus import CORPUS
from tests.frontends.script.test_script_errors import expect_error


def load_module(path, name: str, text: str) -> types.ModuleType:
    """Write ``text`` to ``path`` and import it as a fresh module named ``name`` (a file, so script can read the
    source; each call makes new function objects)."""
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_one(graph, inputs: dict):
    return run(graph, inputs)[0]


# --- the same function twice


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
def test_scripting_twice_prints_the_same_graph(case):
    first = script(case.fn, case.shapes, case.params, loops=case.loops)
    second = script(case.fn, case.shapes, case.params, loops=case.loops)
    assert str(second) == str(first)
    assert second is not first


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


def test_new_defaults_are_read_again():
    x = np.array([1.0, 2.0])
    copy = types.FunctionType(shift.__code__, shift.__globals__, "shift", shift.__defaults__)
    np.testing.assert_array_equal(run_one(script(copy, {"x": (2,)}), {"x": x}), x + 1.0)
    copy.__defaults__ = (5.0,)
    np.testing.assert_array_equal(run_one(script(copy, {"x": (2,)}), {"x": x}), x + 5.0)


def divide_by_name(x):
    return x / undefined_name  # noqa: F821  (the error under test)


def test_a_renamed_copy_is_named_in_its_errors():
    renamed = types.FunctionType(divide_by_name.__code__, divide_by_name.__globals__, "renamed_copy")
    with pytest.raises(ScriptError) as first:
        script(divide_by_name, {"x": (2,)})
    with pytest.raises(ScriptError) as second:
        script(renamed, {"x": (2,)})
    assert "in divide_by_name" in str(first.value)
    assert "in renamed_copy" in str(second.value) and "in divide_by_name" not in str(second.value)


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
    assert f"at test_script_speed_invariants.py:{line}: `script(shift" in str(info.value)


# --- what script verifies, and the shortcuts of its last steps (compared with the general path)


def chain(x, ws):
    for w in ws:
        x = x + np.tanh(x @ w)
    return x


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


rng = np.random.default_rng(5)
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
    """A return that ends the body is converted without raising Return (run_frame): the same graph, and the same
    error, as a return reached inside a block (which raises it)."""
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
    import inspect

    from graph_lab.frontends.script.calls import bind_by_name

    def plain(x, w, k=2.0, flag=None):
        pass

    def no_defaults(a, b, c):
        pass

    def star(x, *rest, k=1, **more):
        pass

    def positional_only(x, /, w=3):
        pass

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
    plain.__defaults__ = (7.0, "new")  # new defaults: read again
    assert bind_by_name(plain, [], {"x": 1}) == {"x": 1, "k": 7.0, "flag": "new"}
