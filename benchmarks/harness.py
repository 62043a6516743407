"""What the benchmarks share: the machine's description, interleaved timing, and the optional torch / jax.

Every figure is measured in the same run as eager NumPy's and shown as a ratio to it. ``interleaved`` times the
variants in turn (A B C A B C ...) so that a slow moment of a shared machine hits all of them alike, and reports
the median of the rounds (at least 5).
"""

from __future__ import annotations

import gc
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from graph_lab.console import print_header, print_table  # noqa: E402


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """One line: CPU, CPUs available, Python, NumPy and its BLAS, and the optional libraries found."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    blas = "?"
    try:
        config = np.show_config(mode="dicts")
        blas = f"{config['Build Dependencies']['blas']['name']} {config['Build Dependencies']['blas']['version']}"
    except Exception:
        pass
    extras = [f"{name} {version}" for name, version in optional_versions().items()]
    load = f", load average {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
    return (f"{cpu_model()}, {cpus} CPUs{load}; Python {platform.python_version()}, NumPy {np.__version__} "
            f"({blas}); {', '.join(extras) if extras else 'torch and jax not installed'}")


def optional_versions() -> dict:
    """torch's and jax's installed versions, read from their package metadata without importing them (an import
    would load their objects into this process before graph_lab is measured)."""
    from importlib import metadata
    found = {}
    for name in ("torch", "jax"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def optional_libraries() -> dict:
    """torch and jax, when importable (never required)."""
    found = {}
    for name in ("torch", "jax"):
        try:
            found[name] = __import__(name)
        except Exception:
            pass
    return found


def interleaved(variants: dict[str, Callable[[], object]], rounds: int = 7, number: int | dict[str, int] = 1,
                warmup: int = 1, collect: bool = False,
                before: dict[str, Callable[[], object]] | None = None,
                clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median seconds per call of each variant, timed in turn for ``rounds`` rounds of ``number`` calls (a dict:
    each variant's own number, for variants whose calls take very different times), each round in another order
    (shuffled with a fixed seed).

    Each timed batch follows one untimed call of the same variant: a variant that allocates large arrays leaves
    the C allocator's free lists and thresholds (glibc's mmap threshold grows with the blocks it sees freed) in a
    state that the next variant would otherwise pay for on its first calls, a cost that belongs to the switch
    between variants, not to either of them (measured: 16 MB results right after another variant took 1.3x to 8x
    longer per call for the first few calls). Likewise the cyclic garbage a variant left is collected before the
    next one is timed: a capture benchmark's big graphs are freed only by a collection, which would otherwise fall
    in whichever variant's calls come next. ``collect``: each timed batch ends with a collection, timed with it,
    so that a variant's figure includes freeing the cyclic garbage it made (call ``gc.freeze()`` first, or each of
    those collections also scans every object the process holds: ~3 ms with graph_lab and NumPy imported).
    ``before``: for some variants, a function called untimed right before each of their timed calls. ``clock``:
    wall time by default; ``time.process_time`` counts only the CPU time of this process (every thread of it), which
    a machine shared with other jobs does not inflate by descheduling it."""
    for fn in variants.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {name: [] for name in variants}
    numbers = number if isinstance(number, dict) else dict.fromkeys(variants, number)
    names = list(variants)
    order = random.Random(0)  # (a fixed seed: the same orders on every run)
    for _ in range(max(rounds, 5)):
        # Each round in another order: a variant follows a different one from round to round, so none always pays
        # for what the same predecessor left behind (measured: W3's control with the cost model, always right
        # after codegen, took 13-23 ms where the same kernel forced took 10-12 ms; alternated, both 9.9).
        order.shuffle(names)
        for name in names:
            fn = variants[name]
            fn()  # (untimed: see above)
            gc.collect()  # the garbage of the variant before is collected now, not in this one's timed calls
            count = numbers[name]
            setup = (before or {}).get(name)
            if setup is None:
                start = clock()
                for _ in range(count):
                    fn()
                if collect:
                    gc.collect()
                elapsed = clock() - start
            else:  # (each call timed alone, after its untimed set-up)
                elapsed = 0.0
                for _ in range(count):
                    setup()
                    start = clock()
                    fn()
                    elapsed += clock() - start
                if collect:
                    start = clock()
                    gc.collect()
                    elapsed += clock() - start
            times[name].append(elapsed / count)
    return {name: statistics.median(ts) for name, ts in times.items()}


def balanced_orders(names: list[str], rounds: int) -> list[list[str]]:
    """The order of the variants in each round: a rotation of ``names``, then the same order reversed (A B C, C B
    A, B C A, A C B, ...), so that over the rounds each variant comes first, last and after each of the others
    equally often, and a slow drift of the machine between two rounds falls on both sides of each pair."""
    orders = []
    for r in range(rounds):
        shift = (r // 2) % len(names)
        order = names[shift:] + names[:shift]
        orders.append(order if r % 2 == 0 else order[::-1])
    return orders


def paired_rounds(variants: dict[str, Callable[[], object]], rounds: int,
                  before: dict[str, Callable[[], object]] | None = None,
                  clock: Callable[[], float] = time.perf_counter) -> dict[str, list[float]]:
    """Seconds of one call of each variant in each round (``balanced_orders``): a list per variant, round by round,
    so that a caller can take the median of per-round ratios (two variants timed in the same round saw the same
    moment of the machine). Each timed call comes after one untimed call of the same variant and the variant's
    ``before`` (its inputs put back): it runs as a call in a loop does, on the caches its own code and data left.

    The garbage is collected at the start of each round, not before each call as ``interleaved`` does: a
    collection walks every object of the process and leaves the caches cold, which made the corpus kernels'
    calls 20-80% slower (gemm 129 us against 80 us, gaussian_log_density 443 against 245) and their timings
    noisier by how much the collection evicted, a cost neither variant has in a loop."""
    for fn in variants.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for order in balanced_orders(list(variants), rounds):
        gc.collect()
        for name in order:
            fn = variants[name]
            fn()
            times[name].append(undisturbed(fn, (before or {}).get(name), clock))
    return times


RETRIES = 3
"""Times a call is made again when the process was descheduled during it (``undisturbed``)."""


def undisturbed(fn: Callable[[], object], setup: Callable[[], object] | None, clock: Callable[[], float]) -> float:
    """Seconds of one call of ``fn`` (after its untimed ``setup``) during which the OS did not take the CPU away
    from this process, if one of ``RETRIES + 1`` tries was (else the last try's). A call that was descheduled
    halfway comes back to caches the other jobs filled, which CPU time counts too (seen on the 2-CPU machine at
    load 8-19: the same code's calls 0.82x-1.44x apart). Where ``getrusage`` is missing, every call counts."""
    try:
        from resource import RUSAGE_SELF, getrusage
    except ImportError:
        getrusage = None
    for _ in range(RETRIES + 1):
        if setup is not None:
            setup()
        switches = getrusage(RUSAGE_SELF).ru_nivcsw if getrusage else 0
        start = clock()
        fn()
        elapsed = clock() - start
        if getrusage is None or getrusage(RUSAGE_SELF).ru_nivcsw == switches:
            break
    return elapsed


def median_ratio(numerators: list[float], denominators: list[float]) -> float:
    """The median of the per-round ratios ``numerators[r] / denominators[r]``."""
    return statistics.median(a / b for a, b in zip(numerators, denominators))


M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
"""glibc's ``mallopt`` parameters (``malloc.h``)."""
STEADY_MMAP_THRESHOLD = 32 << 20
STEADY_TRIM_THRESHOLD = 64 << 20


def steady_malloc() -> str:
    """Fix glibc malloc's thresholds for this process and say how, for the machine line.

    By default glibc serves a block of more than 128 KiB by mapping fresh pages (each touched page then faults),
    and raises that threshold the first time such a block is freed, and gives free memory at the top of the heap
    back to the OS past another threshold: how many of a kernel's temporaries fault their pages in depends on
    what the process freed before, so eager NumPy's own time on arrays of a few hundred KiB differs from process to
    process and drifts within one (measured: adam_step 300 us in one process, 420-600 us in another). ``mallopt``
    sets both thresholds (which stops the dynamic adjustment, as ``MALLOC_MMAP_THRESHOLD_`` and
    ``MALLOC_TRIM_THRESHOLD_`` in the environment would): blocks up to 32 MiB come from the heap, which keeps up
    to 64 MiB of free memory, the same for every variant from the first call."""
    import ctypes
    import ctypes.util
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return "malloc thresholds: the C library's own (not glibc)"
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    if not (mallopt(M_MMAP_THRESHOLD, STEADY_MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD, STEADY_TRIM_THRESHOLD)):
        return "malloc thresholds: glibc's dynamic ones (mallopt refused)"
    return f"malloc: mmap threshold {STEADY_MMAP_THRESHOLD >> 20} MiB, trim threshold {STEADY_TRIM_THRESHOLD >> 20} MiB"


def heap_trim() -> Callable[[], object] | None:
    """glibc's ``malloc_trim(0)``: hand every free page of the C heap back to the OS, as glibc does by itself after
    large frees in a process that holds little else (None where the C library has no such function)."""
    import ctypes
    import ctypes.util
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)


def page_faults(variants: dict[str, Callable[[], object]], rounds: int = 3,
                before: dict[str, Callable[[], object]] | None = None) -> dict[str, int]:
    """Minor page faults per call of each variant (run interleaved, after the timing): memory the allocator took
    back from the OS and the call touched again. Linux and macOS count them; elsewhere the dict is empty."""
    try:
        import resource
    except ImportError:
        return {}
    counts = dict.fromkeys(variants, 0)
    for _ in range(rounds):
        for name, fn in variants.items():
            if name in (before or {}):
                before[name]()
            start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            fn()
            counts[name] += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start
    return {name: count // rounds for name, count in counts.items()}


def fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def ratio_rows(medians: dict[str, float], baseline: str, notes: dict[str, str] | None = None) -> list[list[str]]:
    """Rows: variant, median time, speed-up over the baseline (eager NumPy), note."""
    base = medians[baseline]
    notes = notes or {}
    return [[name, fmt_time(t), f"{base / t:.2f}x", notes.get(name, "")] for name, t in medians.items()]


def print_ratios(title: str, medians: dict[str, float], baseline: str = "eager NumPy",
                 notes: dict[str, str] | None = None) -> None:
    print_header(title)
    print_table(["variant", "median", "speed-up vs eager", "note"], ratio_rows(medians, baseline, notes))


def header(what: str) -> None:
    print(f"{what}\nmachine: {machine()}\n")


def backend_variants(fn, g, x) -> tuple[dict[str, Callable[[], object]], object]:
    """Eager ``fn(x)`` and the traced graph ``g`` through ``codegen``, ``fused`` with its cost model, and ``fused``
    forced onto 1 and 2 threads; also the cost-model ``fused`` callable (its decisions are worth printing)."""
    from graph_lab import FusedOptions, compile_graph
    auto = compile_graph(g, "fused")
    variants = {"eager NumPy": lambda: fn(x), "graph_lab codegen": (lambda c=compile_graph(g, "codegen"): c(x)),
                "graph_lab fused (cost model)": lambda: auto(x)}
    for threads in (1, 2):
        forced = compile_graph(g, "fused", options=FusedOptions(fuse="always", max_threads=threads))
        variants[f"graph_lab fused, {threads} thread{'s' if threads > 1 else ''}"] = (lambda c=forced: c(x))
    return variants, auto
