"""``check`` and ``counterexample``: run a function and its capture on many inputs and report the first
difference, in outputs or in side effects.

Each trial runs eager code and the capture from the same state, on copies of the same arrays: the outputs are
compared (``compare``), then what each printed, then the watched state (globals, closure cells, non-array
arguments) and the argument arrays themselves (a write into an input is a side effect too).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ..backends.reference import run
from ..frontends import pytree
from ..frontends.dynamo.runtime import CompiledFunction
from ..frontends.dynamo.way_choice import graphs_pinned
from ..guards import check_guards
from ..ir.graph import Graph
from . import observe
from .compare import Mismatch, compare
from .inputs import ArraySpec, parse_specs, trials
from .locate import blame, graphs_of_last_call
from .tolerance import ACCUMULATING_OPS


@dataclass
class Difference:
    """The first trial on which eager code and its capture disagree."""

    label: str
    """Which trial: an edge case (``zeros``, ``ties``...) or ``random #k``."""
    inputs: dict[str, np.ndarray]
    """The arrays both sides were given."""
    mismatch: Mismatch
    """What differs, where, and the worst element."""
    graphs: list[str] = field(default_factory=list)
    """The graphs the capture ran for this call, one line each."""
    blamed: str | None = None
    """Which of them the difference comes from, when that can be told."""

    def __str__(self) -> str:
        lines = [f"difference on input '{self.label}': {self.mismatch}"]
        for name, x in self.inputs.items():
            lines.append(f"  input {name}: {_short(x)}")
        if self.mismatch.kind not in ("printed", "state", "exception"):
            lines.append(f"  eager:    {_short(self.mismatch.expected)}")
            lines.append(f"  captured: {_short(self.mismatch.got)}")
        if self.graphs:
            lines.append(f"  graphs run by the capture: {len(self.graphs)}")
            lines += [f"    {g}" for g in self.graphs]
        if self.blamed:
            lines.append(f"  from: {self.blamed}")
        return "\n".join(lines)


@dataclass
class Report:
    """What ``check`` found. True when no trial differed."""

    trials: int = 0
    """Trials on which both sides ran and were compared."""
    skipped: int = 0
    """Trials where eager code raised: inputs outside the function's domain."""
    rejected: int = 0
    """Trials whose inputs a graph's guards refuse (using the graph there is not claimed to be right)."""
    difference: Difference | None = None
    """The first difference, if any."""
    max_abs_error: float = 0.0
    """Largest |captured - eager| over every float element compared."""
    max_rel_error: float = 0.0
    """Largest |captured - eager| / |eager| over nonzero float elements compared."""

    def __bool__(self) -> bool:
        return self.difference is None

    def __str__(self) -> str:
        head = (f"{'equivalent' if self else 'NOT equivalent'} on {self.trials} trial(s)"
                f" ({self.skipped} skipped: eager raised; {self.rejected} rejected by guards); "
                f"max |error| {self.max_abs_error:.3g}, max relative error {self.max_rel_error:.3g}")
        return head if self else f"{head}\n{self.difference}"


def check(fn: Callable, captured: Any, inputs_spec: Mapping[str, Any] | None = None, n: int = 50, *,
          params: Any = None, seed: int = 0, exact: bool = False, side_effects: bool = True) -> Report:
    """Compare ``fn`` with ``captured`` on ``n`` inputs; stop at the first difference.

    ``captured`` is a ``Graph`` (run with ``run``; inputs its guards refuse are skipped), a compiled function,
    or any callable taking ``fn``'s arguments. ``inputs_spec`` maps ``fn``'s tensor arguments to shapes as
    ``trace`` takes them, or to ``ArraySpec``s (a Graph's own input types are the default). ``params`` is passed
    as the next argument, as ``trace`` does. ``exact`` asks for bit-for-bit equality instead of the tolerance
    table; ``side_effects`` compares printed text and watched state too."""
    specs = _specs(captured, inputs_spec)
    extra = () if params is None else (params,)
    call = _caller(captured, list(specs), extra)
    roots = observe.watched_roots(fn, extra) if side_effects else []
    report = Report()
    with _graphs_run(captured):
        for label, arrays in trials(specs, n, seed):
            if isinstance(captured, Graph) and not check_guards(captured, arrays):
                report.rejected += 1
                continue
            outcome = _one_trial(fn, call, arrays, extra, roots, side_effects, exact, captured)
            if outcome is None:
                report.skipped += 1
                continue
            report.trials += 1
            mismatch, want, got = outcome
            _track_errors(report, want, got)
            if mismatch is not None:
                report.difference = _difference(fn, captured, label, arrays, extra, mismatch, roots)
                break
    return report


def _graphs_run(captured):
    """A compiled function's cache hits may run the original function where its graphs do not pay
    (``way_choice``): while it is checked, they run its graphs, which are what is checked."""
    cf = getattr(captured, "__func__", captured)
    if isinstance(cf, CompiledFunction):
        return graphs_pinned(cf, "the equivalence checker runs the graphs it checks")
    return nullcontext()


def counterexample(fn: Callable, graph: Graph, params: Any = None, *, tries: int = 200,
                   seed: int = 0) -> Difference | None:
    """An input on which ``graph`` (say, a specialized trace of ``fn``) computes something else than ``fn``.

    Inputs the graph's own guards refuse do not count: a guarded graph is never claimed to hold there."""
    return check(fn, graph, None, tries, params=params, seed=seed, side_effects=False).difference


def _difference(fn, captured, label, arrays, extra, mismatch, roots) -> Difference:
    graphs = graphs_of_last_call(captured)
    lines = [_graph_line(i, g, len(graphs)) for i, g in enumerate(graphs)]
    saved = observe.save(roots)
    try:
        with observe.printed():  # blaming runs both sides again: their printing and state changes are undone
            blamed = blame(fn, captured, arrays, extra, graphs)
    finally:
        observe.restore(saved)
    return Difference(label, arrays, mismatch, lines, blamed)


# --- one trial

def _one_trial(fn, call, arrays, extra, roots, side_effects, exact, captured):
    """(mismatch or None, eager result, captured result); None when eager code itself raised."""
    saved = observe.save(roots)
    eager_args = {k: v.copy() for k, v in arrays.items()}
    try:
        with observe.printed() as eager_out, np.errstate(all="ignore"):
            want = fn(*eager_args.values(), *extra)
    except Exception:
        observe.restore(saved)
        return None
    eager_state = observe.snapshot(roots)
    observe.restore(saved)
    captured_args = {k: v.copy() for k, v in arrays.items()}
    try:
        with observe.printed() as captured_out, np.errstate(all="ignore"):
            got = call(captured_args)
    except Exception as e:
        return Mismatch("call", "exception", want, e, f"the capture raised {type(e).__name__}: {e}"), want, None
    mismatch = compare(want, got, exact=exact, accumulating=_accumulates(captured))
    if mismatch is not None and mismatch.kind == "value" and np.asarray(mismatch.expected).dtype.kind == "f":
        ref64 = _float64_reference(fn, arrays, extra, roots)
        mismatch = compare(want, got, exact=exact, ref64=ref64, accumulating=_accumulates(captured))
    if mismatch is None and side_effects:
        mismatch = _compare_effects(eager_out.getvalue(), captured_out.getvalue(), eager_state,
                                    observe.snapshot(roots), eager_args, captured_args, captured)
    return mismatch, want, got


def _compare_effects(eager_text, captured_text, eager_state, captured_state, eager_args, captured_args, captured):
    if eager_text != captured_text:
        return Mismatch("printed text", "printed", eager_text, captured_text,
                        f"eager printed {eager_text!r:.120}, the capture printed {captured_text!r:.120}")
    for label, value in eager_state.items():
        if captured_state.get(label) != value:
            return Mismatch(label, "state", value, captured_state.get(label),
                            f"{label} after eager code differs from {label} after the capture")
    if isinstance(captured, Graph):
        return None  # a graph's inputs are read-only: a write into them is refused when tracing
    for name in eager_args:
        a, b = eager_args[name], captured_args[name]
        if a.shape != b.shape or a.tobytes() != b.tobytes():
            return Mismatch(f"argument {name}", "state", a, b, f"eager code left argument {name} as "
                                                               f"{_short(a)}, the capture left {_short(b)}")
    return None


def _float64_reference(fn, arrays, extra, roots):
    """``fn`` run on the float arrays upcast to float64, its printing and state changes undone; None if it fails."""
    upcast = [a.astype(np.float64) if a.dtype.kind == "f" else a.copy() for a in arrays.values()]
    saved = observe.save(roots)
    try:
        with observe.printed(), np.errstate(all="ignore"):
            return fn(*upcast, *extra)
    except Exception:
        return None
    finally:
        observe.restore(saved)


# --- calling the capture

def _specs(captured, inputs_spec) -> dict[str, ArraySpec]:
    if inputs_spec is not None:
        return parse_specs(inputs_spec)
    if isinstance(captured, Graph):
        return {name: ArraySpec(t.shape, t.dtype) for name, t in captured.input_types().items()}
    raise ValueError("check() needs inputs_spec (name -> shape) unless the capture is a Graph")


def _caller(captured, names: list[str], extra: tuple) -> Callable[[dict], Any]:
    if isinstance(captured, Graph):
        def call_graph(arrays):
            outputs = run(captured, arrays)
            return pytree.unflatten(captured.out_tree, outputs) if captured.out_tree is not None else outputs
        return call_graph
    if not callable(captured):
        raise TypeError(f"check() compares with a Graph or a callable, got {type(captured).__name__}")
    return lambda arrays: captured(*(arrays[n] for n in names), *extra)


def _accumulates(captured) -> bool:
    """Whether a float result may come from a reordered sum: unknown captures are assumed to."""
    graphs = graphs_of_last_call(captured)
    if not graphs:
        return not isinstance(captured, Graph)
    return any(node.op in ACCUMULATING_OPS for g in graphs for node in g.nodes)


def _track_errors(report: Report, want, got) -> None:
    if got is None:
        return
    want_leaves, _ = pytree.flatten(want)
    got_leaves, _ = pytree.flatten(got)
    for (_, w), (_, g) in zip(want_leaves, got_leaves):
        try:
            w, g = np.asarray(w), np.asarray(g)
        except Exception:
            continue
        if w.dtype.kind != "f" or w.shape != g.shape or w.dtype != g.dtype or not w.size:
            continue
        with np.errstate(all="ignore"):
            ok = np.isfinite(w) & np.isfinite(g)
            error = np.abs(g[ok].astype(np.float64) - w[ok])
            if error.size:
                report.max_abs_error = max(report.max_abs_error, float(error.max()))
                nonzero = w[ok] != 0
                if nonzero.any():
                    rel = error[nonzero] / np.abs(w[ok][nonzero].astype(np.float64))
                    report.max_rel_error = max(report.max_rel_error, float(rel.max()))


def _graph_line(i: int, g: Graph, total: int) -> str:
    lines = sorted({n.loc.lineno for n in g.nodes if n.loc is not None and n.op not in ("input", "const", "param")})
    where = f", lines {lines[0]}-{lines[-1]}" if lines else ""
    return f"graph {i + 1} of {total}: {g.name}, {g.count()} ops{where}"


def _short(x) -> str:
    if isinstance(x, (np.ndarray, np.generic)):
        a = np.asarray(x)
        body = np.array2string(a, precision=6, threshold=12, edgeitems=2).replace("\n", "")
        return f"{a.dtype}{list(a.shape)} {body}"
    text = repr(x)
    return text if len(text) < 200 else text[:200] + "..."
