"""What script's caches must never change: ``script`` keeps the parsed source of each code object and the
signature of each function, so a second capture skips reading and parsing the source. These tests check that a
second capture gives the same graph and the same errors as the first, and that a new or edited function, a
function sharing another's code, and a function given new defaults are never served what was kept for another.
Results are compared with eager NumPy."""

from __future__ import annotations

import ast
import gc
import importlib.util
import sys
import types
import weakref

import numpy as np
import pytest

from graph_lab import ScriptError, TraceError, run, script
from graph_lab.frontends.script.source import source_of
import script_corpus
from script_corpus import CORPUS
from test_script_errors import expect_error


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
