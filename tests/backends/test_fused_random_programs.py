"""The fuzzer's random programs with every group made a kernel (``fuse="always"``), through ``trace`` and
``compile()``: no program may make the kernel generator, the compiler or a kernel call raise.

F1 runs the fused backend with its cost model, which makes almost no kernel for the fuzzer's small arrays; this
sample forces them. (Differences in value are not checked here: forced kernels call libmvec's functions, whose
ulps an ``argmax`` or a float32 result read as float64 turn into differences the differential's per-dtype
tolerance flags. The kernels' values are checked op by op and on the traced models by ``test_backends.py``,
``test_fused.py`` and ``test_row_kernels.py``.) Found this way, and kept below as regressions there: a comparison
of a bool array with an int (NumPy compares in int64) made kernel generation raise ``KeyError``."""

from __future__ import annotations

import pytest

from tests.support.backend_support import KERNEL_CACHE, needs_compiler
from graph_lab import FusedOptions, compile_graph
from graph_lab.testing.differential import differential
from graph_lab.testing.generator import Options, generate
from graph_lab.testing.ways import FRONTENDS, PIPELINES, Backend, Way

FORCED = FusedOptions(fuse="always", min_buffer_bytes=0, cache_dir=KERNEL_CACHE)
SEEDS = range(20261130, 20261130 + 160)


def _forced(graph):
    compiled = compile_graph(graph, backend="fused", passes="none", options=FORCED)
    return lambda inputs: compiled(**inputs)


WAYS = [Way(FRONTENDS["trace"], PIPELINES["none"], Backend("fused_always", _forced, exact=False)),
        Way(FRONTENDS["compile"], PIPELINES["exact"], Backend("fused_always", _forced, exact=False))]


@needs_compiler
@pytest.mark.parametrize("chunk", range(4))
def test_forced_kernels_never_crash_on_random_programs(chunk):
    crashes = []
    for seed in SEEDS[chunk::4]:
        verdict = differential(generate(seed, Options()), WAYS)
        crashes += [(seed, o.way, o.detail) for o in verdict.outcomes if o.status == "crash"]
    assert not crashes, crashes[:3]
