"""What the pass and backend tests share: the cases (every op-table sample and every traced model of the suite),
the kernel options (one private cache folder per test session, so kernels are compiled once per session), a
fixed cost-model calibration (decisions are then deterministic), and the comparisons."""

from __future__ import annotations

import atexit
import functools
import inspect
import shutil
import tempfile

import numpy as np
import pytest

from tests.support import opinfo
from tests.support import views_samples
from graph_lab import FusedOptions, run, trace
from graph_lab.backends.cost import Calibration
from graph_lab.backends.tolerance import GRAPH_ULP, mismatches
from graph_lab.backends.toolchain import find_toolchain

KERNEL_CACHE = tempfile.mkdtemp(prefix="graph-lab-kernels-")  # mode 0700, removed at exit
atexit.register(shutil.rmtree, KERNEL_CACHE, True)

# A machine like the course's (2 CPUs): NumPy pays ~0.5 us per call and ~10 GB/s; a kernel call ~3 us.
CALIBRATION = Calibration(numpy_call=0.5e-6, numpy_byte=0.1e-9, kernel_call=3e-6, kernel_array=0.8e-6,
                          kernel_byte=0.08e-9, kernel_op=0.1e-9, thread_handoff=30e-6, thread_speedup=1.8, threads=2,
                          numpy_libm={"tanh": 0.2e-9, "exp": 0.3e-9}, kernel_libm={"tanh": 2e-9, "exp": 0.3e-9})

needs_compiler = pytest.mark.skipif(find_toolchain() is None, reason="no C compiler (gcc or cc) on PATH")
"""For tests of the kernels themselves; without a compiler the fused backend runs as codegen (tested too)."""

ALWAYS = FusedOptions(cache_dir=KERNEL_CACHE, fuse="always", calibration=CALIBRATION, min_buffer_bytes=0)
"""Every group a kernel, every dead buffer reused: the most code paths on the suite's small arrays."""
MODEL = FusedOptions(cache_dir=KERNEL_CACHE, calibration=CALIBRATION)
"""The cost model decides, from the fixed calibration."""


@functools.lru_cache(maxsize=None)
def cases() -> list[tuple[str, object, dict]]:
    """(id, graph, inputs by name): every op-table sample, then every traced model of ``views_samples``."""
    out = []
    for sample in opinfo.SAMPLES:
        names = [p.name for p in inspect.signature(sample.fn).parameters.values()
                 if p.kind == p.POSITIONAL_OR_KEYWORD][:len(sample.inputs)]
        if len(names) < len(sample.inputs):
            names = [f"x{i}" for i in range(len(sample.inputs))]
        shapes = {n: (x.shape, x.dtype) for n, x in zip(names, sample.inputs)}
        out.append((sample.id, trace(sample.fn, shapes), dict(zip(names, sample.inputs))))
    for name in views_samples.SAMPLES:
        g = views_samples.make_graph(name)
        out.append((f"model-{name}", g, views_samples.make_inputs(g)))
    return out


def copies(inputs: dict) -> dict:
    return {k: v.copy() for k, v in inputs.items()}


def reference(graph, inputs: dict) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return run(graph, copies(inputs))


def assert_bits(actual: list, expected: list, what: str) -> None:
    """Bit for bit: dtype, shape, values, NaN positions, signs of zeros."""
    assert len(actual) == len(expected), what
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert a.dtype == e.dtype and a.shape == e.shape, \
            f"{what}, output {i}: {a.dtype}{a.shape} vs {e.dtype}{e.shape}"
        np.testing.assert_array_equal(a, e, err_msg=f"{what}, output {i}", strict=True)
        if e.dtype.kind == "f":
            assert np.array_equal(np.signbit(a), np.signbit(e)), f"{what}, output {i}: sign of zero"


def assert_close(actual: list, expected: list, what: str, kind: str) -> None:
    """Within the documented tolerance ``GRAPH_ULP[kind]`` (see graph_lab/backends/tolerance.py)."""
    assert len(actual) == len(expected), what
    for i, (a, e) in enumerate(zip(actual, expected)):
        problems = mismatches(a, e, GRAPH_ULP[kind])
        assert not problems, f"{what}, output {i}: {'; '.join(problems)}"
