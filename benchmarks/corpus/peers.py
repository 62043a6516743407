"""The peers measured beside graph_lab on the corpus (``bench_corpus.py --peers``): ``torch.compile`` on the same
NumPy code, and ``jax.jit`` on the jax.numpy ports in ``jax_ports/``.

Both are optional (``pip install -e .[peers]``, which ``python3 dev.py bench --peers`` runs): each is imported only
when asked for, and a missing one is a line in the report, never an error. Each peer's first call on a kernel is
checked against eager NumPy before anything is timed: a peer that raises, runs past the time limit or computes
other values (beyond ``RTOL``: the peers compile float arithmetic in another order, so bit-for-bit equality is not
asked of them) is reported with the reason and not timed.
"""

from __future__ import annotations

import math
import os
import signal
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .check import call, fresh_pair, leaves, quietly

RTOL = 1e-7
"""How far a peer's float results may be from eager's, relative to the largest magnitude in the same array."""

COMPILE_LIMIT_S = 120.0
"""The default limit on a peer's first call on one kernel (its compile): dynamo unrolls Python loops, and on the
row-update kernels its compile time grows with the trip count."""


def differences_beyond_tolerance(expected, got) -> str:
    """The first difference beyond ``RTOL`` between two nests of results, or ``""``: same structure and shapes,
    integers and booleans exact, floats within ``RTOL`` of the largest magnitude of their array. A 0-d array and a
    NumPy scalar of the same value are the same here (torch.compile returns 0-d arrays for scalars)."""
    a, b = leaves(expected), leaves(got)
    if len(a) != len(b):
        return f"{len(b)} values instead of {len(a)}"
    for (path, x), (_, y) in zip(a, b):
        if x is None or y is None:
            if x is not y:
                return f"{path or 'result'}: {y!r} instead of {x!r}"
            continue
        x, y = np.asarray(x), np.asarray(y)
        where = path or "result"
        if x.shape != y.shape:
            return f"{where}: shape {y.shape} instead of {x.shape}"
        if x.dtype.kind in "biu" or y.dtype.kind in "biu":
            if not np.array_equal(x, y):
                return f"{where}: {int(np.sum(x != y))} of {x.size} integers differ"
            continue
        scale = float(np.max(np.abs(x))) if x.size else 0.0
        if not np.allclose(y, x, rtol=RTOL, atol=RTOL * scale, equal_nan=True):
            worst = float(np.max(np.abs(y - x)))
            return f"{where}: off by up to {worst:.3g} (scale {scale:.3g})"
    return ""


class CompileTimeLimit(BaseException):
    """Raised by the alarm inside a peer's first call (a BaseException, so no ``except Exception`` inside the
    peer's compiler takes it for one of its own errors)."""


def first_call(fn: Callable[[], object], limit_s: float):
    """``fn()``, interrupted by ``CompileTimeLimit`` after ``limit_s`` seconds (wall time)."""
    def alarm(signum, frame):
        raise CompileTimeLimit()
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Prepared:
    """A peer made ready for one kernel: the call to time (None if it is not timed) and what to report."""

    fn: Callable | None
    note: str
    first_call_s: float = math.nan


class TorchCompile:
    """``torch.compile`` on the kernel's own NumPy function (dynamo traces NumPy calls through ``torch._numpy``)."""

    name = "torch.compile"

    def __init__(self, torch, limit_s: float):
        self.torch, self.limit_s = torch, limit_s
        torch.set_num_threads(1)  # (as BLAS runs for eager NumPy and graph_lab: one thread)

    def prepare(self, kernel) -> Prepared:
        fn = self.torch.compile(kernel.fn)
        eager_args, peer_args = fresh_pair(kernel, small=False, seed=0)
        eager = call(kernel.fn, eager_args)
        start = time.perf_counter()
        try:
            got = first_call(lambda: quietly(fn, peer_args), self.limit_s)
        except CompileTimeLimit:
            self.torch._dynamo.reset()
            return Prepared(None, f"first call (compile) over the {self.limit_s:.0f} s limit")
        seconds = time.perf_counter() - start
        if got.error is not None:
            return Prepared(None, "fails: " + " ".join(got.raised.split())[:160], seconds)
        problem = differences_beyond_tolerance((eager.result, eager.args), (got.result, got.args))
        if problem:
            return Prepared(None, f"differs: {problem}", seconds)
        return Prepared(fn, "", seconds)


class JaxJit:
    """``jax.jit`` on the hand-written jax.numpy port of the kernel, where there is one (``jax_ports.PORTS``)."""

    name = "jax.jit"

    def __init__(self, jax, ports: dict):
        self.jax, self.ports = jax, ports

    def prepare(self, kernel) -> Prepared:
        port = self.ports.get(kernel.name)
        if port is None:
            return Prepared(None, "no port")
        eager_args, peer_args = fresh_pair(kernel, small=False, seed=0)
        eager = call(kernel.fn, eager_args)
        timed = lambda *args: self.jax.block_until_ready(port.fn(*args))  # noqa: E731 (XLA runs asynchronously)
        start = time.perf_counter()
        got = call(timed, peer_args)
        seconds = time.perf_counter() - start
        if got.error is not None:
            return Prepared(None, "fails: " + " ".join(got.raised.split())[:160], seconds)
        problem = differences_beyond_tolerance(port.expected(eager.args, eager.result),
                                               tuple(np.asarray(v) for v in got.result))
        if problem:
            return Prepared(None, f"port differs: {problem}", seconds)
        return Prepared(timed, "", seconds)


def load_peers(limit_s: float = COMPILE_LIMIT_S) -> tuple[list, list[str]]:
    """The peers that are installed, and a line for each one that is not."""
    peers, missing = [], []
    # (before torch loads: inductor would otherwise start a pool of compile workers, one per core)
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    try:
        import torch
        peers.append(TorchCompile(torch, limit_s))
    except ImportError as e:
        missing.append(f"torch is not installed ({e}); torch.compile skipped (pip install -e .[peers])")
    # (before jax loads: XLA's CPU client on one thread, like the others)
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    try:
        import jax
        from .jax_ports import PORTS
        peers.append(JaxJit(jax, PORTS))
    except ImportError as e:
        missing.append(f"jax is not installed ({e}); jax.jit skipped (pip install -e .[peers])")
    return peers, missing
