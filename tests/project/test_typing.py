"""The public API is typed and documented: every function in ``graph_lab.__all__`` has type hints and a
docstring that names each parameter, and mypy accepts a user's program written against the API (and rejects
one that misuses it, so the check is real)."""

from __future__ import annotations

import inspect
import os
import pydoc
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import graph_lab

REPO = Path(__file__).resolve().parents[2]


def _public_functions():
    for name in graph_lab.__all__:
        obj = getattr(graph_lab, name)
        if inspect.isfunction(obj):
            yield name, obj


def test_every_public_function_is_annotated():
    missing = []
    for name, fn in _public_functions():
        sig = inspect.signature(fn)
        missing += [f"{name}({p})" for p in sig.parameters if sig.parameters[p].annotation is inspect.Parameter.empty]
        if sig.return_annotation is inspect.Signature.empty:
            missing.append(f"{name} -> ?")
    assert not missing, f"public functions without type hints: {missing}"


def test_every_public_docstring_names_each_parameter():
    undocumented = []
    for name, fn in _public_functions():
        doc = inspect.getdoc(fn) or ""
        if not doc:
            undocumented.append(f"{name}: no docstring")
            continue
        for p in inspect.signature(fn).parameters.values():
            if p.kind is p.VAR_KEYWORD:
                continue
            spelled = f"*{p.name}" if p.kind is p.VAR_POSITIONAL else p.name
            if f"{spelled}:" not in doc and f"``{p.name}``" not in doc:
                undocumented.append(f"{name}: parameter {p.name}")
    assert not undocumented, f"docstrings that do not describe every parameter: {undocumented}"


def test_every_public_class_has_a_docstring():
    bare = [name for name in graph_lab.__all__
            if inspect.isclass(getattr(graph_lab, name)) and not (getattr(graph_lab, name).__doc__ or "").strip()]
    assert not bare, f"public classes without a docstring: {bare}"


def test_help_of_compile_documents_every_parameter():
    text = pydoc.render_doc(graph_lab.compile, renderer=pydoc.plaintext)
    for parameter in ("fn", "backend", "fullgraph", "dynamic", "recompile_limit"):
        assert f"{parameter}:" in text, f"help(graph_lab.compile) does not describe {parameter}"
    assert '"codegen"' in text and "RecompileLimitWarning" in text


def test_version_comes_from_the_package_metadata():
    from importlib.metadata import PackageNotFoundError, version
    try:
        expected = version("graph-lab")
    except PackageNotFoundError:  # a source tree that was never installed: the fallback reads pyproject.toml
        import tomllib
        expected = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert graph_lab.__version__ == expected


def test_py_typed_marks_the_package_as_typed():
    assert (REPO / "graph_lab" / "py.typed").is_file()
    assert 'graph_lab = ["py.typed"]' in (REPO / "pyproject.toml").read_text()


USER_PROGRAM = '''
    import numpy as np
    import graph_lab
    from graph_lab import F, LazyRunner, Spec, check_guards, compile_graph, failing_guards, make_graph, run, trace

    def mlp(x, p):
        return F.tanh(x @ p["w"]).sum(axis=-1)

    g: graph_lab.Graph = trace(mlp, {"x": (4, 3)}, {"w": np.ones((3, 2))}, mode="guard", example=None)
    outs: list[np.ndarray] = run(g, {"x": np.ones((4, 3))})
    ok: bool = check_guards(g, {"x": np.ones((4, 3))})
    why: list[graph_lab.GuardFailure] = failing_guards(g, {"x": np.ones((5, 3))})
    cg: graph_lab.CompiledGraph = compile_graph(g, backend="codegen", passes=["simplify", "dce"])
    g2 = make_graph(lambda a: np.tanh(a), Spec((2,), "float32"))
    lr = LazyRunner()
    cf = graph_lab.compile(mlp, backend="interpret", dynamic=True)
    report: graph_lab.ExplainReport = graph_lab.explain(mlp)(np.ones((4, 3)), {"w": np.ones((3, 2))})
    g3: graph_lab.Graph = graph_lab.parse(str(g), g.param_values)
    graph_lab.save(g3, "g.npz")
    graph_lab.view([g, graph_lab.load("g.npz")], "g.html")
    version: str = graph_lab.__version__
'''

MISUSES = {
    'n: int = run(g, {"x": np.ones((4, 3))})': "Incompatible types in assignment",
    "trace(mlp, 5)": 'Argument 2 to "trace" has incompatible type',
    "compile_graph(g, passes=3)": 'Argument "passes" to "compile_graph" has incompatible type',
    "graph_lab.parse(g)": 'Argument 1 to "parse" has incompatible type',
}


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    program = tmp_path / "user_program.py"
    program.write_text(source)
    # The user's file is checked in full; graph_lab's own modules are read for their types only (their
    # internals are not part of the public API's promise).
    env = dict(os.environ, MYPYPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
                           "--follow-imports=silent", "--cache-dir", str(tmp_path / "mypy_cache"), str(program)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def mypy_available():
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed (it is in the `test` extra: pip install -e '.[test]')")


def test_mypy_accepts_a_program_using_the_public_api(mypy_available, tmp_path):
    done = _mypy(tmp_path, textwrap.dedent(USER_PROGRAM))
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_rejects_misuses_of_the_public_api(mypy_available, tmp_path):
    source = textwrap.dedent(USER_PROGRAM) + "\n".join(MISUSES) + "\n"
    done = _mypy(tmp_path, source)
    assert done.returncode == 1, done.stdout + done.stderr
    for misuse, message in MISUSES.items():
        assert message in done.stdout, f"mypy did not flag `{misuse}`:\n{done.stdout}"
