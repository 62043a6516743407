"""Running a corpus kernel eagerly and compiled on fresh copies of the same inputs, and comparing everything it
leaves behind bit for bit: the result, and the final contents of every array it was given (inside lists, dicts
and objects too).

Used by the runner (``benchmarks/bench_corpus.py``) and the CI test (``tests/equivalence/test_corpus_correct.py``).
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field

import numpy as np

import graph_lab
from graph_lab.backends.tolerance import GRAPH_ULP, mismatches


def leaves(value, path: str = "", seen: set | None = None) -> list[tuple[str, object]]:
    """(path, leaf) for every array and scalar reachable from ``value``: through tuples, lists, dicts and the
    attributes of plain objects, in a fixed order."""
    seen = set() if seen is None else seen
    if isinstance(value, np.ndarray) or np.isscalar(value) or value is None:
        return [(path, value)]
    if id(value) in seen:
        return []
    seen.add(id(value))
    if isinstance(value, (list, tuple)):
        return [leaf for i, item in enumerate(value) for leaf in leaves(item, f"{path}[{i}]", seen)]
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in leaves(item, f"{path}[{key!r}]", seen)]
    if hasattr(value, "__dict__"):
        return [leaf for key, item in vars(value).items() for leaf in leaves(item, f"{path}.{key}", seen)]
    return [(path, value)]


def _same_leaf(a, b) -> str | None:
    """None if ``a`` and ``b`` are the same bit for bit (type, dtype, shape and bytes), else what differs."""
    if type(a) is not type(b):
        return f"type {type(b).__name__} instead of {type(a).__name__}"
    if a is None:
        return None
    a_arr, b_arr = np.asarray(a), np.asarray(b)
    if a_arr.dtype != b_arr.dtype:
        return f"dtype {b_arr.dtype} instead of {a_arr.dtype}"
    if a_arr.shape != b_arr.shape:
        return f"shape {b_arr.shape} instead of {a_arr.shape}"
    if a_arr.dtype.kind == "O":
        return None if a_arr.tolist() == b_arr.tolist() else "different objects"
    if np.ascontiguousarray(a_arr).tobytes() == np.ascontiguousarray(b_arr).tobytes():
        return None
    differ = np.ascontiguousarray(a_arr).view(np.uint8).reshape(a_arr.shape + (-1,)) != \
        np.ascontiguousarray(b_arr).view(np.uint8).reshape(b_arr.shape + (-1,))
    where = np.argwhere(differ.any(axis=-1)) if a_arr.ndim else []
    count = len(where) if a_arr.ndim else 1
    at = tuple(int(i) for i in where[0]) if a_arr.ndim else ()
    first = (a_arr[at], b_arr[at])
    return f"{count} of {max(a_arr.size, 1)} elements differ; first at {at}: {first[1]!r} instead of {first[0]!r}"


def differences(expected, got, what: str) -> list[str]:
    """Each difference between two nests of results, named by its path under ``what``."""
    a, b = leaves(expected), leaves(got)
    if [p for p, _ in a] != [p for p, _ in b]:
        return [f"{what}: structure {[p for p, _ in b]} instead of {[p for p, _ in a]}"]
    out = []
    for (path, x), (_, y) in zip(a, b):
        diff = _same_leaf(x, y)
        if diff is not None:
            out.append(f"{what}{path}: {diff}")
    return out


@dataclass
class Outcome:
    """One call: what it returned (or raised) and the arguments as it left them."""

    result: object = None
    error: BaseException | None = None
    args: tuple = ()

    @property
    def raised(self) -> str:
        return f"{type(self.error).__name__}: {self.error}" if self.error is not None else ""


def call(fn, args: tuple) -> Outcome:
    try:
        return Outcome(fn(*args), None, args)
    except Exception as e:  # reported by the caller (eager raising is a corpus bug, compiled raising a crash)
        return Outcome(None, e, args)


def quietly(fn, args: tuple) -> Outcome:
    """A compiled call with its warnings held back: the callers report fallbacks and breaks themselves."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(fn, args)


def compare(eager: Outcome, compiled: Outcome) -> list[str]:
    """What the compiled call did differently: its exception, its result, the final contents of its arguments."""
    if compiled.error is not None and eager.error is None:
        return [f"CRASH: {compiled.raised}"]
    if eager.error is not None:
        if compiled.error is None or type(compiled.error) is not type(eager.error):
            return [f"eager raised {eager.raised}; compiled {compiled.raised or 'returned'}"]
        return []
    return differences(eager.result, compiled.result, "result") + \
        differences(eager.args, compiled.args, "argument ")


def within_fused_tolerance(eager: Outcome, compiled: Outcome) -> bool:
    """Whether every difference is one the fused backend documents (``backends/tolerance.py``: its C kernels call
    libmvec's transcendental functions, a few ulps from NumPy's): same types, dtypes and shapes, exact integers,
    floats within ``GRAPH_ULP["fused"]``."""
    a, b = leaves((eager.result, eager.args)), leaves((compiled.result, compiled.args))
    if [p for p, _ in a] != [p for p, _ in b]:
        return False
    for (_, x), (_, y) in zip(a, b):
        if type(x) is not type(y):
            return False
        if x is None:
            continue
        x, y = np.asarray(x), np.asarray(y)
        parts = [(x.real, y.real), (x.imag, y.imag)] if x.dtype.kind == "c" else [(x, y)]
        if x.dtype.kind == "O" or any(mismatches(q, p, GRAPH_ULP["fused"]) for p, q in parts):
            return False
    return True


def first_difference(kernel, fn, small: bool, seeds=(0, 1)) -> tuple[str, tuple | None]:
    """Calls ``fn`` and the kernel's plain function on fresh copies of the same inputs, one seed after another;
    the first difference (prefixed by the call it happened in) and the two outcomes, or ``("", None)``."""
    for n, seed in enumerate(seeds, 1):
        eager_args, compiled_args = fresh_pair(kernel, small, seed)
        eager = call(kernel.fn, eager_args)
        if eager.error is not None:
            raise RuntimeError(f"corpus kernel {kernel.name} raised eagerly: {eager.raised}") from eager.error
        compiled = quietly(fn, compiled_args)
        problems = compare(eager, compiled)
        if problems:
            return f"call {n}: " + "; ".join(problems[:2]), (eager, compiled)
    return "", None


def verdict(kernel, cf, small: bool = False) -> str:
    """``ok``; ``CRASH: type: message``; ``ulps: ...`` when the only differences are the fused backend's documented
    ones (and the ``codegen`` backend gives eager's bits); else ``WRONG: ...`` with the first mismatch."""
    problem, outcomes = first_difference(kernel, cf, small)
    if not problem:
        return "ok"
    if "CRASH: " in problem:
        return problem[problem.index("CRASH: "):]
    reference = graph_lab.compile(kernel.fn, backend="codegen")
    if within_fused_tolerance(*outcomes) and not first_difference(kernel, reference, small)[0]:
        return f"ulps (fused kernels' libmvec, within the documented tolerance): {problem}"
    return f"WRONG: {problem}"


def compiled_functions(cf) -> list:
    """``cf`` and the functions compiled for it (Python functions called at its graph breaks run compiled)."""
    return [cf] + [g for nested in cf.nested.values() for g in compiled_functions(nested)]


@dataclass
class CaptureStats:
    """What compile() did on the last call: graphs (segments with at least one op) and graph breaks run, and
    over all calls so far, captures, recompiles and whether some function gave up and runs eagerly."""

    graphs: int = 0
    breaks: int = 0
    captures: int = 0
    recompiles: int = 0
    eager_fallback: str = ""
    break_reasons: list[str] = field(default_factory=list)
    compile_seconds: float = 0.0
    """Capture and backend time of every segment cached so far."""


def capture_stats(cf) -> CaptureStats:
    stats = CaptureStats()
    for g in compiled_functions(cf):
        for event in g.last_events:
            stats.graphs += event.segment.graph.count() > 0
            if event.segment.end == "break":
                stats.breaks += 1
                reason = f"{event.segment.break_loc}: {event.segment.break_reason}"
                if reason not in stats.break_reasons:
                    stats.break_reasons.append(reason)
        stats.captures += g.captures
        stats.compile_seconds += sum(seg.compile_seconds + seg.backend_seconds
                                     for entries in g.cache.values() for seg in entries)
        stats.recompiles += g.recompiles
        if g.eager_fallback and not stats.eager_fallback:
            stats.eager_fallback = g.eager_fallback
    return stats


def fresh_pair(kernel, small: bool, seed: int) -> tuple[tuple, tuple]:
    """Two independent copies of the same inputs (made twice from the seed, never shared)."""
    return kernel.inputs(small, seed), kernel.inputs(small, seed)


def restore(target, source) -> None:
    """Put ``source``'s state back into ``target`` in place (same array objects, same containers), so that a
    timed kernel that writes into its arguments starts every call from the same data."""
    if isinstance(target, np.ndarray):
        np.copyto(target, source)
    elif isinstance(target, list):
        for i, item in enumerate(source):
            if isinstance(item, (np.ndarray, list, dict)) or hasattr(item, "__dict__"):
                restore(target[i], item)
            else:
                target[i] = copy.deepcopy(item)
        del target[len(source):]
    elif isinstance(target, dict):
        for key, item in source.items():
            if key in target and (isinstance(item, (np.ndarray, list, dict)) or hasattr(item, "__dict__")):
                restore(target[key], item)
            else:
                target[key] = copy.deepcopy(item)
    elif isinstance(target, tuple):
        for t, s in zip(target, source):
            restore(t, s)
    elif hasattr(target, "__dict__") and not isinstance(target, type):
        restore(vars(target), vars(source))
