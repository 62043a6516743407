"""The command line, run as users run it (``python -m graph_lab ...`` in a subprocess): each subcommand, its
``--help``, and each mistake (exit code 2 and one line saying what is wrong and what to do)."""

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import graph_lab

REPO = Path(__file__).resolve().parents[2]
COMMANDS = ("explain", "ir", "view", "bench", "lectures")

MODEL = textwrap.dedent('''\
    import numpy as np
    from graph_lab import F
    from helpers import SCALE  # a file beside this one: found as `python model.py` would find it


    def mlp(x, w, scale=SCALE):
        return F.relu(x @ w) * scale


    def branchy(x):
        if x.sum() > 0:
            return x * 2.0
        return -x


    def no_tensor_work(x):
        return 1


    def noisy(x):  # a new random generator on each call: no two calls agree, eager or compiled
        return x + np.random.default_rng().standard_normal(x.shape)


    NOT_A_FUNCTION = 3

    if __name__ == "__main__":
        raise SystemExit("the main block ran")
    ''')


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A folder holding ``proj/model.py`` (and the ``helpers.py`` it imports); commands run from the folder."""
    root = tmp_path_factory.mktemp("cli")
    (root / "proj").mkdir()
    (root / "proj" / "model.py").write_text(MODEL)
    (root / "proj" / "helpers.py").write_text("SCALE = 2.0\n")
    (root / "proj" / "broken.py").write_text("def f(x):\n    return x\n\nraise RuntimeError('broken on import')\n")
    return root


def graph_lab_command(*args: str, cwd: Path, pythonpath: Path = REPO) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(pythonpath), PYTHONIOENCODING="utf-8")
    env.pop("GRAPH_LAB_LOGS", None)
    return subprocess.run([sys.executable, "-m", "graph_lab", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, encoding="utf-8", timeout=120)


def mlp_eager(x, w):
    return np.maximum(x @ w, 0.0) * 2.0


# ---------------------------------------------------------------------------------------------------------
# --help


def test_help_lists_every_command_and_warns_that_the_file_is_run(project):
    out = graph_lab_command("--help", cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: graph-lab")
    assert all(re.search(rf"^\s+{command}\s", out.stdout, re.M) for command in COMMANDS)
    assert "FILE.py is run to find FUNC" in out.stdout and "trust" in out.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_help_of_each_command(project, command):
    out = graph_lab_command(command, "--help", cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"usage: graph-lab {command}")
    if command != "lectures":
        assert "--shapes NAME=SIZES" in out.stdout and "--dtype" in out.stdout
        assert "FILE.py is run to find FUNC" in " ".join(out.stdout.split())


# ---------------------------------------------------------------------------------------------------------
# The subcommands


def test_explain_reports_the_graphs_breaks_and_guards(project):
    out = graph_lab_command("explain", "proj/model.py:mlp", "--shapes", "x=4,8", "w=8,16", "--dtype", "float32",
                            cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("explain(mlp): 1 graph(s), 0 graph break(s), ops per graph [3]")
    assert "x is an ndarray of shape (4, 8) and dtype float32" in out.stdout
    assert "w is an ndarray of shape (8, 16) and dtype float32" in out.stdout
    assert "the main block ran" not in out.stdout + out.stderr

    out = graph_lab_command("explain", "proj/model.py:branchy", "--shapes", "x=3", cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("explain(branchy): 2 graph(s), 1 graph break(s)")
    assert "model.py:11" in out.stdout  # the line of the data-dependent `if`


def test_ir_prints_a_graph_that_parses_back_and_computes_what_the_function_does(project):
    out = graph_lab_command("ir", "proj/model.py:mlp", "--shapes", "x=4,8", "w=8,16", cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("graph mlp {")
    g = graph_lab.parse(out.stdout)
    assert [n.op for n in g.nodes if n.op not in ("input", "const")] == ["matmul", "relu", "mul"]
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((4, 8)), rng.standard_normal((8, 16))
    np.testing.assert_array_equal(graph_lab.run(g, {"x": x, "w": w})[0], mlp_eager(x, w))

    out = graph_lab_command("ir", "proj/model.py:mlp", "--shapes", "x=2,3", "w=3,5", "--dtype", "float32",
                            cwd=project)
    assert out.returncode == 0, out.stderr
    assert '%0: f32[2,3] = input "x"' in out.stdout and '%1: f32[3,5] = input "w"' in out.stdout


def test_ir_of_a_data_dependent_branch_is_a_trace_error_or_two_graphs_with_compile(project):
    out = graph_lab_command("ir", "proj/model.py:branchy", "--shapes", "x=3", cwd=project)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("graph-lab ir: TraceError: data-dependent value") and "model.py:11" in out.stderr

    out = graph_lab_command("ir", "proj/model.py:branchy", "--shapes", "x=3", "--capture", "compile", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "# graph 1 of 2\ngraph branchy {" in out.stdout
    assert "# graph 2 of 2 (after a graph break)\ngraph branchy {" in out.stdout


def test_view_writes_the_page(project, tmp_path):
    page = tmp_path / "mlp.html"
    out = graph_lab_command("view", "proj/model.py:mlp", "--shapes", "x=4,8", "w=8,16", "-o", str(page),
                            cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"wrote {page}: 1 graph, 6 nodes")
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "<title>graph_lab: proj/model.py:mlp</title>" in text
    assert text.count('<g class="node ') == 6  # x, w, matmul, relu, the constant 2.0, mul


def test_bench_times_eager_and_compiled_and_checks_the_result_first(project):
    out = graph_lab_command("bench", "proj/model.py:mlp", "--shapes", "x=16,32", "w=32,8", "--rounds", "3",
                            "--number", "20", cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("bench proj/model.py:mlp (x=16,32 w=32,8 float64): median of 3 interleaved "
                                 "rounds of 20 calls")
    rows = {m.group(1).strip(): (float(m.group(2)), float(m.group(3)))
            for m in re.finditer(r"^(eager NumPy|graph_lab\.compile \(backend=auto\))\s+([\d.]+)\s+([\d.]+)x$",
                                 out.stdout, re.M)}
    assert set(rows) == {"eager NumPy", "graph_lab.compile (backend=auto)"}, out.stdout
    assert rows["eager NumPy"][1] == 1.0 and rows["eager NumPy"][0] > 0
    eager_us, (compiled_us, ratio) = rows["eager NumPy"][0], rows["graph_lab.compile (backend=auto)"]
    assert ratio == pytest.approx(eager_us / compiled_us, rel=0.05, abs=0.01)
    assert "results: bit for bit eager NumPy's" in out.stdout


def test_bench_refuses_to_time_a_function_whose_compiled_result_differs(project):
    out = graph_lab_command("bench", "proj/model.py:noisy", "--shapes", "x=4", cwd=project)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("graph-lab bench: the compiled function's result differs from eager NumPy's, so "
                                 "no time is reported: output: worst element at")


def test_lectures_runs_the_scripts_of_the_checkout(project):
    out = graph_lab_command("lectures", "04", cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("===== lectures/lecture12/04_graph_surgery.py\n")
    assert out.stdout.rstrip().endswith("===== ran 1 lecture script: all finished without an error")


def test_lectures_outside_a_checkout_says_where_they_are(tmp_path):
    shutil.copytree(REPO / "graph_lab", tmp_path / "site" / "graph_lab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = graph_lab_command("lectures", cwd=tmp_path, pythonpath=tmp_path / "site")
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.splitlines()) == 1
    assert out.stderr.startswith("graph-lab lectures: error: the lecture scripts come with a checkout")
    assert "clone the repository" in out.stderr


# ---------------------------------------------------------------------------------------------------------
# Mistakes: exit code 2, one line


MISTAKES = [
    (["ir", "proj/missing.py:mlp", "--shapes", "x=4"], "no file 'proj/missing.py': give the path of the Python file"),
    (["ir", "proj/model.py", "--shapes", "x=4"], "'proj/model.py' does not name a function: write FILE.py:FUNC"),
    (["ir", "proj/model.py:mpl", "--shapes", "x=4"], "proj/model.py defines no function 'mpl'; the functions it "
                                                     "defines: branchy, mlp, no_tensor_work, noisy"),
    (["ir", "proj/model.py:NOT_A_FUNCTION"], "proj/model.py:NOT_A_FUNCTION is not a function but a value of type int"),
    (["explain", "proj/model.py:mlp", "--shapes", "x=4,a", "w=8,16"], "bad shape 'x=4,a': write NAME=SIZES"),
    (["view", "proj/model.py:mlp", "--shapes", "x=4,-8", "w=8,16"], "bad shape 'x=4,-8': write NAME=SIZES"),
    (["bench", "proj/model.py:mlp", "--shapes", "x:4,8", "w=8,16"], "bad shape 'x:4,8': write NAME=SIZES"),
    (["ir", "proj/model.py:mlp", "--shapes", "x=4,8", "x=2"], "two shapes for x"),
    (["ir", "proj/model.py:mlp", "--shapes", "x=4,8", "w=8,16", "--dtype", "float8"],
     "unknown dtype 'float8': choose one of float64, float32"),
    (["ir", "proj/model.py:mlp", "--shapes", "x=4,8"], "mlp(x, w, scale) needs a shape for w: add w=SIZES to "
                                                       "--shapes (e.g. w=4,8)"),
    (["ir", "proj/model.py:mlp", "--shapes", "x=4,8", "w=8,16", "y=3"], "mlp(x, w, scale) has no parameter 'y'"),
    (["ir", "proj/model.py:no_tensor_work", "--shapes", "x=3", "--capture", "compile"],
     "compiling proj/model.py:no_tensor_work captured no graph"),
    (["bench", "proj/model.py:mlp", "--shapes", "x=4,8", "w=8,16", "--backend", "gpu"],
     "unknown backend 'gpu': choose one of interpret, codegen, fused, auto"),
    (["lectures", "99"], "no lecture script starts with '99'; the scripts: 02_script.py"),
]


@pytest.mark.parametrize("argv, message", MISTAKES, ids=[m[1].split(":")[0][:40] for m in MISTAKES])
def test_a_mistake_is_one_line_naming_it_and_exit_code_2(project, argv, message):
    out = graph_lab_command(*argv, cwd=project)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert out.stdout == ""
    assert len(out.stderr.splitlines()) == 1, out.stderr
    assert out.stderr.startswith(f"graph-lab {argv[0]}: error: {message}"), out.stderr


def test_an_exception_in_the_users_file_is_its_traceback(project):
    out = graph_lab_command("ir", "proj/broken.py:f", "--shapes", "x=3", cwd=project)
    assert out.returncode == 1
    assert "Traceback" in out.stderr and out.stderr.rstrip().endswith("RuntimeError: broken on import")
