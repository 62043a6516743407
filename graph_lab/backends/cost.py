"""The cost model: does a fused kernel pay off for this group, and on how many threads?

The note's section 7 asks which subgraphs are worth compiling. Here the answer is computed, from quantities
measured on this machine (``Calibration``) and the group's own numbers (``GroupCost``)::

    NumPy (codegen)   = calls * numpy_call + bytes moved by all the calls * numpy_byte
                        + elements * sum of numpy_libm[f] over the group's libm functions f
    kernel, t threads = kernel_call + extra arrays * kernel_array + (t - 1) * thread_handoff
                        + copies * numpy_call + bytes copied * 2 * numpy_byte
                        + (bytes moved once * kernel_byte
                           + elements * (sum of kernel_libm[f] + arithmetic ops * kernel_op)) / speedup(t)

NumPy pays a call (dispatch and an allocation) per op and moves every intermediate through memory; a kernel pays
one ctypes call and a pointer per array, moves each input and output once, and computes in registers. The libm
functions are measured one by one because they differ a lot: on the course's machine NumPy's ``tanh`` on
float32 uses AVX-512 SVML and keeps up with memory, while libmvec's AVX2 ``tanhf`` costs ~2 ns per element; a
lone ``tanh`` is therefore *not* fused, a ``gelu`` (eight more ops around the ``tanh``) is. Threads are measured
twice: alone, and right after a matrix product, because OpenBLAS's worker threads keep spinning for a while after
one; a kernel's second thread then fights them for the CPUs (on the 2-CPU course machine a GELU after a matmul
took 4.6 ms on two threads and 1.1 ms on one). When the load average leaves no CPU idle, other processes hold
the CPUs a second thread would need, and kernels stay on one thread.

A row kernel (``softmax``, ``log_softmax``, ``layer_norm``: see ``c_row_kernels``) is predicted by the same formulas,
with NumPy's side taken from ``ROW_OP_COSTS``: its reductions cost several ufunc calls each, and its calls pass
over the whole array about 8 times, where the kernel reads and writes each array once (the passes over a row
hit the cache). On [128, 512] float32 the model predicts 23-25 us against NumPy's 120-160 us (measured: 37 us
against 110-130 us); two threads do not pay there and pay on [4096, 1024].

A group is fused only when the kernel is predicted to take at most ``MARGIN`` of NumPy's time, and never below
``MIN_ELEMENTS``: there one ctypes call costs as much as NumPy's whole work, so small graphs are never slower
than ``codegen``. Decisions are a pure function of the calibration and the group: tests pass a ``Calibration``
of their own and check decisions exactly; ``measure()`` fills one in on this machine (~0.3 s, once a process).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..ops import Op
from .kernel_pointers import address

MARGIN = 0.8
"""Fuse when the kernel is predicted to take at most this fraction of NumPy's time."""
MIN_ELEMENTS = 1024
"""Groups over fewer elements stay on codegen without being measured."""
LIBM_FUNCTIONS = ("exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "pow")


@dataclass(frozen=True, eq=False)
class Calibration:
    """What the cost model knows about this machine. Times in seconds."""

    numpy_call: float
    """One NumPy ufunc call on a tiny array (dispatch + allocation)."""
    numpy_byte: float
    """Per byte a NumPy ufunc reads or writes, on arrays larger than the caches."""
    kernel_call: float
    """One kernel call from Python on a tiny array: output allocation, pointers, ctypes."""
    kernel_array: float
    """Each further array a kernel call passes (its pointer)."""
    kernel_byte: float
    """Per byte a kernel reads or writes."""
    kernel_op: float
    """Per element of an arithmetic op (``*``, ``+``) in a kernel."""
    thread_handoff: float
    """Handing half of a kernel to a second thread and waiting for it."""
    thread_speedup: float
    """Measured speed-up of a large kernel on two threads (1.0: none; below 1.0: slower)."""
    threads: int
    """CPUs available to this process."""
    thread_speedup_after_blas: float = 1.0
    """The same, measured right after a matrix product: OpenBLAS's threads spin for a while after one, and a
    kernel's second thread then competes with them (on 2 CPUs it is several times *slower*)."""
    numpy_libm: dict[str, float] = field(default_factory=dict)
    """Per element of NumPy's ``np.<f>`` on float32, beyond its memory traffic, by function name."""
    kernel_libm: dict[str, float] = field(default_factory=dict)
    """Per element of libmvec's ``<f>f`` in a kernel, beyond the memory traffic, by function name."""
    load: float = 0.0
    """The system's load average when measured: with no CPU idle, a second thread waits for one (on the 2-CPU
    course machine shared by 8 jobs, a kernel on two threads took 0.5 ms of hand-off for 0.1 ms of work)."""

    def rows(self) -> list[list[str]]:
        """The calibration as a table (for ``explain`` and the lecture)."""
        us, ns = 1e6, 1e9
        rows = [
            ["NumPy call (dispatch + allocation)", f"{self.numpy_call * us:.2f} us"],
            ["NumPy per byte moved", f"{self.numpy_byte * ns:.3f} ns ({1 / self.numpy_byte / 1e9:.1f} GB/s)"],
            ["kernel call (ctypes + allocation)", f"{self.kernel_call * us:.2f} us"],
            ["kernel per extra array", f"{self.kernel_array * us:.2f} us"],
            ["kernel per byte moved", f"{self.kernel_byte * ns:.3f} ns ({1 / self.kernel_byte / 1e9:.1f} GB/s)"],
            ["kernel arithmetic op per element", f"{self.kernel_op * ns:.3f} ns"],
            ["second-thread hand-off", f"{self.thread_handoff * us:.1f} us"],
            ["two-thread speed-up (measured)", f"{self.thread_speedup:.2f}x of {self.threads} CPUs"],
            ["two-thread speed-up right after a matmul", f"{self.thread_speedup_after_blas:.2f}x"],
            ["load average (threads used only with a CPU idle)", f"{self.load:.1f}"],
        ]
        for f in sorted(self.kernel_libm):
            rows.append([f"{f} per element: NumPy / kernel", f"{self.numpy_libm.get(f, 0) * ns:.2f} / "
                                                              f"{self.kernel_libm[f] * ns:.2f} ns"])
        return rows


@dataclass(frozen=True)
class GroupCost:
    """The numbers of one group that the model needs."""

    elements: int
    """Elements of the loop (the group's shape)."""
    numpy_calls: int
    """NumPy calls the group's nodes make when not fused (``gelu`` is 9, ``sigmoid`` 4)."""
    numpy_bytes: int
    """Bytes all those calls read and write."""
    libm: tuple[str, ...]
    """The libm function each element goes through, once per call (``("tanh", "exp")``), fused or not."""
    arithmetic: int
    """Other ops per element in a kernel (``gelu`` has 8 besides its ``tanh``)."""
    arrays: int
    """Arrays a kernel call passes (inputs and outputs)."""
    kernel_bytes: int
    """Bytes the kernel reads and writes: each input and output once."""
    after_blas: bool = False
    """The graph runs a matrix product (BLAS) before this group."""
    copies: int = 0
    """Operands that may be strided views (a slice, a transpose): the kernel call copies each to C order first."""
    copied_bytes: int = 0
    """Their bytes (each read and written once by the copy)."""


# --- what NumPy and a kernel pay for a row op (softmax, log_softmax, layer_norm)


REDUCTION_CALLS = 6
"""A NumPy reduction (``np.max``, ``np.sum`` over an axis) costs about 6 ufunc calls of fixed time (1.9 us against
0.3 us for ``np.add`` on tiny arrays, measured on the course machine); ``np.mean`` twice that (it is Python code
in ``numpy/_core/_methods.py`` around a sum and a division)."""


@dataclass(frozen=True)
class RowOpCost:
    """What a row op costs when NumPy runs its implementation (``ops/nn.py``), and in a row kernel."""

    numpy_calls: int
    """Fixed costs, in ufunc calls (a reduction counts ``REDUCTION_CALLS``)."""
    numpy_passes: int
    """Arrays of the input's size that NumPy's calls read or write, all together."""
    arithmetic: int
    """Ops per element in the kernel besides ``exp`` (a division counts 4: it is that much slower than ``*``)."""
    libm: tuple[str, ...]
    """The libm function each element goes through, in NumPy and in the kernel alike (``exp`` for softmax)."""


ROW_OP_COSTS = {
    # max (read), x - max (read, write), exp (read, write), sum (read), e / sum (read, write)
    Op.SOFTMAX: RowOpCost(2 * REDUCTION_CALLS + 3, 8, 7, ("exp",)),
    # max, x - max, exp, sum, log of the sums (small), shifted - log (read, write)
    Op.LOG_SOFTMAX: RowOpCost(2 * REDUCTION_CALLS + 4, 8, 5, ("exp",)),
    # mean (read), x - mean, c * c, mean (read), var + eps and sqrt (small), c / sqrt (read, write)
    Op.LAYER_NORM: RowOpCost(4 * REDUCTION_CALLS + 5, 8, 9, ()),
}
"""Each ``weight`` or ``bias`` of a ``layer_norm`` adds one call, two passes and one kernel op."""


@dataclass(frozen=True)
class Decision:
    """What the model decided for one group, and why."""

    fuse: bool
    threads: int
    numpy_seconds: float
    kernel_seconds: float
    reason: str


def predict_numpy(cost: GroupCost, cal: Calibration) -> float:
    return (cost.numpy_calls * cal.numpy_call + cost.numpy_bytes * cal.numpy_byte
            + cost.elements * sum(cal.numpy_libm.get(f, 0.0) for f in cost.libm))


def predict_kernel(cost: GroupCost, cal: Calibration, threads: int) -> float:
    work = cost.kernel_bytes * cal.kernel_byte + cost.elements * (
        sum(cal.kernel_libm.get(f, 0.0) for f in cost.libm) + cost.arithmetic * cal.kernel_op)
    fixed = (cal.kernel_call + max(cost.arrays - 2, 0) * cal.kernel_array
             + cost.copies * cal.numpy_call + 2 * cost.copied_bytes * cal.numpy_byte)
    if threads == 1:
        return fixed + work
    speedup = cal.thread_speedup_after_blas if cost.after_blas else cal.thread_speedup
    return fixed + work / speedup + cal.thread_handoff


def decide(cost: GroupCost, cal: Calibration, max_threads: int | None = None) -> Decision:
    """Fuse or not, with how many threads, and the reason in words."""
    numpy_s = predict_numpy(cost, cal)
    if cost.elements < MIN_ELEMENTS:
        return Decision(False, 1, numpy_s, float("nan"),
                        f"{cost.elements} elements < {MIN_ELEMENTS}: a kernel call alone costs about what NumPy "
                        f"needs for the whole group")
    limit = min(cal.threads, 2 if max_threads is None else max_threads)
    options = {t: predict_kernel(cost, cal, t) for t in range(1, max(limit, 1) + 1)}
    threads = min(options, key=options.get)
    kernel_s = options[threads]
    predicted = (f"predicted {_time(kernel_s)} fused ({threads} thread{'s' if threads > 1 else ''}) vs "
                 f"{_time(numpy_s)} NumPy")
    if kernel_s <= MARGIN * numpy_s:
        return Decision(True, threads, numpy_s, kernel_s, f"{predicted}: fuse ({numpy_s / kernel_s:.1f}x)")
    return Decision(False, 1, numpy_s, kernel_s, f"{predicted}: not worth a kernel (needs <= {MARGIN:.0%})")


def _time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms"


# --- measuring


def _best_time(fn, repeats: int, number: int = 1) -> float:
    """The fastest of ``repeats`` timings: the machine's cost, with other processes' interference left out."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def measure(kernels: dict, threads: int) -> Calibration:
    """Measure the calibration on this machine with compiled calibration kernels (see ``fused``): ``add_one``
    (y = x + 1: one pass over memory; ``call``, its whole call from generated code on one element), ``poly`` (``poly_ops`` multiply-adds per element), one kernel per libm
    function (by name), and ``run(kernel, x, threads)``. Memory is measured on 4M float32 (16 MB, beyond the
    caches, like the data worth fusing); the functions on 1M positive values."""
    run = kernels["run"]
    small = np.ones(16, np.float32)
    big = np.random.default_rng(0).standard_normal(1 << 22).astype(np.float32)
    positive = np.random.default_rng(1).uniform(0.5, 2.0, 1 << 20).astype(np.float32)

    numpy_call = _best_time(lambda: np.add(small, small), 7, 200)
    one = np.ones(1, np.float32)  # (the calibration's kernels are compiled for one element)
    kernel_call = _best_time(lambda: kernels["call"](one), 7, 200)
    kernel_array = _best_time(lambda: address(small), 7, 200)
    one_pass = _best_time(lambda: run(kernels["add_one"], big, 1), 5)
    # NumPy's ``x + 1.0`` and the kernel's make the same pass over memory (one array read, one allocated and
    # written): the memory's cost, which both pay alike. Their timings differed by up to 30% from one process to
    # the next on the shared course machine, either way, enough for a one-op kernel to be predicted to beat its
    # own ufunc; the faster of the two is the figure for both.
    numpy_big_pass = _best_time(lambda: np.add(big, 1.0), 5)
    kernel_byte = numpy_byte = max(min(one_pass - kernel_call, numpy_big_pass - numpy_call), 1e-12) / (2 * big.nbytes)
    kernel_op = max(_best_time(lambda: run(kernels["poly"], big, 1), 5) - one_pass, 0.0) / (
        big.size * kernels["poly_ops"])

    numpy_libm, kernel_libm = {}, {}
    small_pass = _best_time(lambda: run(kernels["add_one"], positive, 1), 3)
    numpy_pass = _best_time(lambda: np.add(positive, 1.0), 3)
    for f in LIBM_FUNCTIONS:
        numpy_fn = getattr(np, "power" if f == "pow" else f)
        args = (positive, positive) if f == "pow" else (positive,)
        numpy_libm[f] = max(_best_time(lambda: numpy_fn(*args), 3) - numpy_pass, 0.0) / positive.size
        kernel_libm[f] = max(_best_time(lambda: run(kernels[f], positive, 1), 3) - small_pass, 0.0) / positive.size

    speedup, after_blas, handoff = 1.0, 1.0, float("inf")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if threads >= 2 and load < threads - 1:
        with ThreadPoolExecutor(1) as pool:
            handoff = _best_time(lambda: pool.submit(int).result(), 7, 50)
        one = _best_time(lambda: run(kernels["tanh"], big, 1), 3)
        two = _best_time(lambda: run(kernels["tanh"], big, 2), 3)
        speedup = max(one / two, 0.1)
        a = np.ones((512, 512), np.float32)
        half = big[: big.size // 4]

        def after_matmul(threads):
            a @ a  # large enough for OpenBLAS to use its threads
            start = time.perf_counter()
            run(kernels["tanh"], half, threads)
            return time.perf_counter() - start

        after_blas = max(min(after_matmul(1) for _ in range(3)) / min(after_matmul(2) for _ in range(3)), 0.1)
    return Calibration(numpy_call, numpy_byte, kernel_call, kernel_array, kernel_byte, kernel_op, handoff,
                       speedup, threads, after_blas, numpy_libm, kernel_libm, load)
