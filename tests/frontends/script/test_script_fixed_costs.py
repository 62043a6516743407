"""The shortcuts that cut ``script``'s fixed cost per capture, compared with the general path they skip:

* ``script`` keeps, per function object, what ``bind_arguments`` and ``source_of`` gave it (``_prepared``), and uses
  it again only while the function's code, name, argument names, params and method-ness are the same: a changed
  function, a method, a new argument name, or a function given ``__signature__`` gets a fresh answer.
* ``FunctionSource.ask`` answers ``analysis.py``'s questions once per syntax tree node (an ``if`` on tensor data in
  an unrolled loop is converted once per iteration): its answers equal the functions' own for every block of the
  corpus, and the graphs compute what NumPy computes.

Results are compared with eager NumPy or with the general path's answers."""

from __future__ import annotations

import ast
import inspect
import types

import numpy as np
import pytest

from tests.support import script_corpus
from graph_lab import TraceError, run, script
from graph_lab.frontends.script import analysis
from graph_lab.frontends.script.branches import _returns
from graph_lab.frontends.script.function_source import source_of
from graph_lab.frontends.trace import bind_arguments


def run_one(graph, inputs: dict):
    return run(graph, inputs)[0]


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


class Model:
    def __init__(self, k):
        self.k = k

    def forward(self, x, ws):
        return x * ws[0] * self.k


def test_the_kept_binding_matches_bind_arguments_for_each_way_of_calling():
    """Alternating argument names, params and a method on one function: each time the order and the graph are
    what the general path gives (bind_arguments asked directly)."""
    x, w = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    model = Model(5.0)
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
