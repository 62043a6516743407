"""The peer comparison of the corpus benchmark (``bench_corpus.py --peers``, ``benchmarks/corpus/peers.py``).

torch and jax are optional and CI does not install them: without them, ``--peers`` must still run the benchmark,
say what is missing and time graph_lab as usual. With jax installed, each hand-written jax.numpy port
(``benchmarks/corpus/jax_ports/``) must compute what its corpus kernel computes eagerly (within the peers'
tolerance), or the benchmark would time a different algorithm. And ``dev.py`` must install torch's CPU build for
the peers extra, not PyPI's CUDA build.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import dev  # noqa: E402
from benchmarks.corpus import CORPUS  # noqa: E402
from benchmarks.corpus.check import call  # noqa: E402
from benchmarks.corpus.peers import differences_beyond_tolerance, load_peers  # noqa: E402

HAS_JAX = importlib.util.find_spec("jax") is not None


def test_load_peers_without_torch_and_jax(monkeypatch):
    # (None in sys.modules makes the import raise ImportError, as for a package that is not installed)
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "jax", None)
    monkeypatch.setenv("TORCHINDUCTOR_COMPILE_THREADS", "1")
    monkeypatch.setenv("XLA_FLAGS", "")
    peers, missing = load_peers()
    assert peers == []
    assert len(missing) == 2
    assert missing[0].startswith("torch is not installed") and "torch.compile skipped" in missing[0]
    assert missing[1].startswith("jax is not installed") and "jax.jit skipped" in missing[1]


BLOCK_PEERS = """
import runpy, sys
sys.modules["torch"] = None
sys.modules["jax"] = None
sys.path.insert(0, ".")
sys.argv = ["bench_corpus.py", "--peers", "--quick", "--only", "jacobi_1d"]
runpy.run_path("bench_corpus.py", run_name="__main__")
"""


def test_bench_corpus_peers_runs_without_them():
    """The whole --peers path with torch and jax made unimportable: it reports them missing and times graph_lab."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", BLOCK_PEERS], cwd=REPO / "benchmarks", env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--peers: torch is not installed" in done.stdout
    assert "--peers: jax is not installed" in done.stdout
    assert "jacobi_1d: ok" in done.stdout
    assert "eager/torch.compile" not in done.stdout and "eager/jax.jit" not in done.stdout
    assert "geometric mean eager/compiled" in done.stdout


def test_tolerance_accepts_reordered_float_sums_and_nothing_more():
    x = np.linspace(-3.0, 5.0, 50)
    assert differences_beyond_tolerance((x, 2), (x * (1 + 1e-13), 2)) == ""
    assert differences_beyond_tolerance(np.float64(4.0), np.array(4.0)) == ""  # (0-d array for a scalar)
    off = x.copy()
    off[7] += 1e-4
    assert "off by up to" in differences_beyond_tolerance((x,), (off,))
    assert "shape" in differences_beyond_tolerance(x, x[:-1])
    assert "integers differ" in differences_beyond_tolerance(np.arange(4), np.array([0, 1, 2, 4]))
    assert "values instead of" in differences_beyond_tolerance((x, x), (x,))


def _kernel(name):
    return next(k for k in CORPUS if k.name == name)


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed (pip install -e .[peers]); the ports need it")
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", ["jacobi_1d", "jacobi_2d", "heat_3d", "fdtd_2d", "wave_1d", "gray_scott",
                                  "heat_neumann", "upwind_advection", "nbody", "lennard_jones_box",
                                  "particles_in_box"])
def test_jax_port_computes_what_the_kernel_computes(name, seed):
    from benchmarks.corpus.jax_ports import PORTS
    port, kernel = PORTS[name], _kernel(name)
    eager = call(kernel.fn, kernel.inputs(small=True, seed=seed))
    assert eager.error is None
    inputs = kernel.inputs(small=True, seed=seed)
    got = tuple(np.asarray(v) for v in port.fn(*inputs))
    expected = port.expected(eager.args, eager.result)
    assert differences_beyond_tolerance(expected, got) == ""
    # (the port must have computed something: the arrays the kernel writes into did change)
    assert any(not np.array_equal(np.asarray(before), np.asarray(after))
               for before, after in zip(port.expected(inputs, None)[port.returns_result:],
                                        expected[port.returns_result:]))


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed (pip install -e .[peers]); the ports need it")
def test_every_port_is_tested_and_names_a_corpus_kernel():
    from benchmarks.corpus.jax_ports import PORTS
    tested = test_jax_port_computes_what_the_kernel_computes.pytestmark
    names = next(m.args[1] for m in tested if m.name == "parametrize" and m.args[0] == "name")
    assert sorted(PORTS) == sorted(names)
    assert {k.name for k in CORPUS} >= set(PORTS)


def test_dev_installs_the_cpu_build_of_torch_for_the_peers_extra(tmp_path, monkeypatch):
    folder = tmp_path / "venv"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").write_text("")
    interpreter = dev.running_interpreter()
    commands = []
    monkeypatch.setattr(dev, "venv_folder", lambda interp: folder)
    monkeypatch.setattr(dev, "venv_python", lambda f: f / "bin" / "python")
    monkeypatch.setattr(dev, "probe", lambda executable: interpreter.version)
    monkeypatch.setattr(dev.subprocess, "run",
                        lambda args, **kw: commands.append(args) or subprocess.CompletedProcess(args, 0))
    dev.ensure_venv(".", interpreter)
    dev.ensure_venv(".[peers]", interpreter)
    plain, peers = commands
    assert "--extra-index-url" not in plain
    assert peers[peers.index("--extra-index-url") + 1] == "https://download.pytorch.org/whl/cpu"
    assert peers[-2:] == ["-e", ".[peers]"]
