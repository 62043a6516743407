"""The cost model: does a fused kernel pay off for this group, and on how many threads?

The note's section 7 asks which subgraphs are worth compiling. Here the answer is computed, from quantities
measured on this machine (``Calibration``) and the group's own numbers (``GroupCost``)::

    NumPy (codegen)  = calls * numpy_call + bytes moved by every call * numpy_byte + elements * libm calls * numpy_libm
    kernel, t threads = kernel_call + arrays * kernel_array
                        + (bytes moved once * kernel_byte + elements * libm calls * kernel_libm) / speedup(t)
                        + (t - 1) * thread_handoff

NumPy pays a call (dispatch and an allocation) per op and moves every intermediate through memory; a kernel pays
one ctypes call and a pointer per array, and moves each input and output once. A group is fused only when the
kernel is predicted to take at most ``MARGIN`` of NumPy's time, and never below ``MIN_ELEMENTS``: there one ctypes
call costs as much as NumPy's whole work, so small graphs are never slower than ``codegen``.

Decisions are a pure function of the calibration and the group: tests pass a ``Calibration`` of their own and
check the decisions exactly; ``measure()`` fills one in on this machine (about 0.2 s, once per process).
"""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

MARGIN = 0.8
"""Fuse when the kernel is predicted to take at most this fraction of NumPy's time."""
MIN_ELEMENTS = 1024
"""Groups over fewer elements stay on codegen without being measured."""


@dataclass(frozen=True)
class Calibration:
    """What the cost model knows about this machine. Times in seconds."""

    numpy_call: float
    """One NumPy ufunc call on a tiny array (dispatch + allocation)."""
    numpy_byte: float
    """Per byte a NumPy ufunc reads or writes, on arrays larger than the caches."""
    numpy_libm: float
    """Per element of a NumPy transcendental function (``np.tanh``), beyond its memory traffic."""
    kernel_call: float
    """One kernel call from Python on a tiny array: output allocation, pointers, ctypes."""
    kernel_array: float
    """Each further array a kernel call passes (its pointer)."""
    kernel_byte: float
    """Per byte a kernel reads or writes."""
    kernel_libm: float
    """Per element of a vector libm call (``tanhf`` from libmvec) in a kernel."""
    thread_handoff: float
    """Handing half of a kernel to a second thread and waiting for it."""
    thread_speedup: float
    """Measured speed-up of a large kernel on two threads (1.0: none; below 1.0: slower)."""
    threads: int
    """CPUs available to this process."""

    def rows(self) -> list[list[str]]:
        """The calibration as a table (for ``explain`` and the lecture)."""
        us, ns = 1e6, 1e9
        return [
            ["NumPy call (dispatch + allocation)", f"{self.numpy_call * us:.2f} us"],
            ["NumPy per byte moved", f"{self.numpy_byte * ns:.3f} ns ({1 / self.numpy_byte / 1e9:.1f} GB/s)"],
            ["NumPy libm per element (np.tanh)", f"{self.numpy_libm * ns:.2f} ns"],
            ["kernel call (ctypes + allocation)", f"{self.kernel_call * us:.2f} us"],
            ["kernel per extra array", f"{self.kernel_array * us:.2f} us"],
            ["kernel per byte moved", f"{self.kernel_byte * ns:.3f} ns ({1 / self.kernel_byte / 1e9:.1f} GB/s)"],
            ["kernel libm per element (libmvec tanhf)", f"{self.kernel_libm * ns:.2f} ns"],
            ["second-thread hand-off", f"{self.thread_handoff * us:.1f} us"],
            ["two-thread speed-up (measured)", f"{self.thread_speedup:.2f}x of {self.threads} CPUs"],
        ]


@dataclass(frozen=True)
class GroupCost:
    """The numbers of one group that the model needs."""

    elements: int
    """Elements of the loop (the group's shape)."""
    numpy_calls: int
    """NumPy calls the group's nodes make when not fused (``gelu`` is 9, ``sigmoid`` 4)."""
    numpy_bytes: int
    """Bytes all those calls read and write."""
    libm_calls: int
    """Transcendental calls per element (``tanh``, ``exp``...), the same fused or not."""
    arrays: int
    """Arrays a kernel call passes (inputs and outputs)."""
    kernel_bytes: int
    """Bytes the kernel reads and writes: each input and output once."""


@dataclass(frozen=True)
class Decision:
    """What the model decided for one group, and why."""

    fuse: bool
    threads: int
    numpy_seconds: float
    kernel_seconds: float
    reason: str


def decide(cost: GroupCost, cal: Calibration, max_threads: int | None = None) -> Decision:
    """Fuse or not, with how many threads, and the reason in words."""
    numpy_s = (cost.numpy_calls * cal.numpy_call + cost.numpy_bytes * cal.numpy_byte
               + cost.elements * cost.libm_calls * cal.numpy_libm)
    if cost.elements < MIN_ELEMENTS:
        return Decision(False, 1, numpy_s, float("nan"),
                        f"{cost.elements} elements < {MIN_ELEMENTS}: a kernel call alone costs about what NumPy "
                        f"needs for the whole group")
    work = cost.kernel_bytes * cal.kernel_byte + cost.elements * cost.libm_calls * cal.kernel_libm
    fixed = cal.kernel_call + max(cost.arrays - 2, 0) * cal.kernel_array
    limit = min(cal.threads, 2 if max_threads is None else max_threads)
    options = {1: fixed + work}
    if limit >= 2:
        options[2] = fixed + work / cal.thread_speedup + cal.thread_handoff
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


def _median_time(fn, repeats: int, number: int = 1) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def measure(kernels, threads: int) -> Calibration:
    """Measure the calibration on this machine. ``kernels`` holds compiled calibration kernels (see ``fused``):
    ``copy(x)`` (y = x + 1, a memory-bound pass), ``tanh(x)`` and the function ``run(kernel, x, threads)``."""
    small = np.ones(16, np.float32)
    n = 1 << 21
    big = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    big2 = big.copy()

    numpy_call = _median_time(lambda: np.add(small, small), 7, 200)
    numpy_add = _median_time(lambda: np.add(big, big2), 5)
    numpy_byte = numpy_add / (3 * big.nbytes)
    numpy_tanh = _median_time(lambda: np.tanh(big), 5)
    numpy_libm = max(numpy_tanh - 2 * big.nbytes * numpy_byte, 0.0) / n

    run, add_one, tanh = kernels["run"], kernels["add_one"], kernels["tanh"]
    kernel_call = _median_time(lambda: run(add_one, small, 1), 7, 200)
    kernel_array = _median_time(lambda: small.ctypes.data, 7, 200)
    kernel_copy = _median_time(lambda: run(add_one, big, 1), 5)
    kernel_byte = max(kernel_copy - kernel_call, 1e-12) / (2 * big.nbytes)
    kernel_tanh = _median_time(lambda: run(tanh, big, 1), 5)
    kernel_libm = max(kernel_tanh - kernel_copy, 0.0) / n

    speedup, handoff = 1.0, float("inf")
    if threads >= 2:
        with ThreadPoolExecutor(1) as pool:
            handoff = _median_time(lambda: pool.submit(int).result(), 7, 50)
        one = _median_time(lambda: run(tanh, big, 1), 5)
        two = _median_time(lambda: run(tanh, big, 2), 5)
        speedup = max(one / two, 0.1)
    return Calibration(numpy_call, numpy_byte, numpy_libm, kernel_call, kernel_array, kernel_byte, kernel_libm,
                       handoff, speedup, threads)
