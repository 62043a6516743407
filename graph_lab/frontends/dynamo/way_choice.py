"""Which way a compiled function's cache hits run: its graphs, or the original function itself.

A captured graph is not always faster than the code it came from. Eager NumPy writes in place where the graph
copies its results back into the caller's arrays; an unrolled loop of small slice updates makes the same NumPy
calls either way; a graph break adds a lookup and a rebuilt frame. For those, the cheapest way graph_lab has is
the original function, called on the same arguments: that is eager's semantics by definition (every result,
every write into the caller's arrays, every side effect, in eager's order), so the choice can never change a
result. While the way is measured only cache hits take it (a call whose guards fail captures); once the function
is chosen, most calls skip the guards (below).

The choice is made per compiled function, in three steps:

1. The whole-graph cost model (``backends/graph_cost.py``) predicts both ways from the facts of the call that
   captured (op kinds and sizes, scalar or array results, guards, write-backs, breaks, what the C kernels save)
   and this process's measured calibration: the reason explain() shows. It does not decide alone: in a corpus
   run on a machine at load 15 (2 CPUs), a calibration measured in a busy moment predicted SGD's graphs clearly
   faster, and they ran at 0.41x eager.
2. Then the next cache hits alternate between the two ways (graphs first), each call timed whole, until each
   way has ``MIN_SAMPLES`` timings, their medians differ by more than ``DECISIVE`` and every timing of the
   faster way is below every timing of the slower one, or ``MAX_SAMPLES`` each. A call that captured, or made
   the fast path, is not a sample (it paid for compiling), nor is each way's first call (``WARM_UP``). The
   clock is the process's CPU time: on a machine shared with other jobs, the time a call spends descheduled is
   not its own. Measured on the corpus (2 CPUs shared with other jobs, calls back to back): the graphs' first
   timed call took 2-4x their later ones (gemm 206-387 us against 96-136, periodic diffusion 908-1486 against
   746-1066); and with medians alone, three calls of each way with overlapping timings decided, a coin flip:
   periodic diffusion's two ways, equally fast timed over 81 rounds, were chosen graphs three times and the
   function three times in six compiles (measured 0.72x to 1.31x).
3. The faster median wins, except that after ``MAX_SAMPLES`` the graphs must be faster by more than
   ``GRAPHS_MARGIN``: the function is eager's own code, and graphs measured a few percent faster in back-to-back
   calls ran slower than eager in calls that start with cold caches (measured on the corpus: jacobi-1d's and
   batch norm's graphs 1.06x and 1.09x the function's speed back to back, 0.92x and 0.90x eager's after a garbage
   collection). A later capture at the function's start (new shapes) measures again.

Once the function is chosen, a cache hit is a plain call of it, without the guards (``unchecked_call``): they only
pick the entry whose graphs would run, and running the function is right for any arguments. One call in
``RECHECK_EVERY`` goes the guarded way instead, so that an input the cache has no entry for (new shapes, another
type) is still captured and measured, at most ``RECHECK_EVERY - 1`` calls late; ``captures``, ``recompiles`` and
the recompile limit count those calls alone. A call that skipped the guards ran no segment: its ``last_events``
is empty. Measured (2 CPUs shared with other jobs, CPU time, median of 2,001 interleaved calls) on ``a * b + 1.0``
over 8 floats, which takes 1.09 us back to back and 26.4 us right after a garbage collection (cold caches): the
guarded way adds 0.63 us and 12 us, the unchecked call 0.20 us and 4.5 us (a plain Python wrapper function 0.06
us and 1.2 us; most of the rest is Python calling an object rather than a function). On corpus kernels after a
collection, the guarded way cost 6-36 us a call (gemm 17 us on 183 us).

Measured on the corpus (2-CPU machine, shared with other jobs): the graphs of gemver, SGD and Adam over lists
and dicts, kv-cache decoding, xorshift, pairwise distances ran at 0.55-0.8x eager, their functions (after the
same guards, before unchecked calls) at 0.97-1.0x; the stencils with C kernels at 3-4x.

``explain()`` shows the prediction (``describe``), and for a compiled function that has run, the measurement.
"""

from __future__ import annotations

import statistics
from contextlib import contextmanager
from time import process_time

from ...backends.graph_cost import GraphFacts, Prediction, calibration, predict
from ...ops import SOURCE_OPS

MIN_SAMPLES = 3
"""Timings of each way before a decision may be made."""
WARM_UP = 1
"""Calls of each way, after the capture, not counted as samples (see step 2)."""
MAX_SAMPLES = 7
"""Timings of each way after which the faster median decides, however close."""
DECISIVE = 1.15
"""Medians further apart than this decide after ``MIN_SAMPLES``, if the two ways' timings do not overlap."""
GRAPHS_MARGIN = 1.10
"""After ``MAX_SAMPLES``, the graphs win only if they run this much faster than the function (see step 3)."""
RECHECK_EVERY = 61
"""With the function chosen, one cache hit in this many checks the guards (a prime: a program cycling through a
few input shapes does not always land the check on the same one)."""
GRAPHS, FUNCTION = "graphs", "function"


class WayChoice:
    """The way of one compiled function's cache hits, and how it was chosen."""

    def __init__(self, why_fixed: str = ""):
        self.eager = False
        """Whether the next cache hit runs the original function (read by the fast path and ``_call``)."""
        self.way = GRAPHS
        """The way decided (or the one cache hits take while nothing is decided)."""
        self.measuring = False
        self.why_fixed = why_fixed
        """Why no choice is made at all ('' when one is): another backend was asked for by name."""
        self.prediction: Prediction | None = None
        self.samples: dict[str, list[float]] = {GRAPHS: [], FUNCTION: []}
        self.warm_up: dict[str, list[float]] = {GRAPHS: [], FUNCTION: []}
        """Each way's first timings, left out of ``samples`` (``WARM_UP``)."""
        self.reason = why_fixed or "not decided yet (the function has not been captured)"
        self._captures = 0
        self._predict_due = False
        self.unchecked = 0
        """Calls since the guards were last checked (``unchecked_call``): the last call skipped them if > 0."""

    # --- the hook of CompiledFunction._set_fast_path

    def call_for(self, cf, fast, general):
        """The ``__call__`` to install for ``cf`` whose fast path is ``fast`` (or None; ``general`` is the
        class's own ``__call__``): a timing wrapper while measuring, a plain call of the function once it is
        chosen (``unchecked_call``), else ``fast`` itself."""
        if cf.eager_fallback is not None:  # (given up: the general path would call the function, and only that)
            return eager_call(cf.fn)
        if self.why_fixed:
            return fast
        if cf.captures != self._captures:  # a new capture: predict, and measure again
            self._captures = cf.captures
            self._start(cf)
        graphs_call = fast if fast is not None else general
        if not self.measuring:
            return self.unchecked_call(cf.fn, graphs_call) if self.way == FUNCTION else fast

        def measuring_call(cf, *args, **kwargs):
            if not self.measuring:  # (pinned since this wrapper was installed)
                return graphs_call(cf, *args, **kwargs)
            if self._predict_due:  # (from the last call, whole: a capture's own call has not finished)
                self._predict(cf)
                if not self.measuring:
                    return graphs_call(cf, *args, **kwargs)
            eager = self.eager = self._next_is_eager()
            captures, due = cf.captures, cf._fast_path_due
            start = process_time()
            try:
                result = graphs_call(cf, *args, **kwargs)
            finally:
                self.eager = self.way == FUNCTION
            elapsed = process_time() - start
            if cf.captures == captures and not due and self.measuring:
                self._record(FUNCTION if eager else GRAPHS, elapsed, cf)
            return result
        return measuring_call

    def unchecked_call(self, fn, checked):
        """The ``__call__`` of a function whose cache hits run it: ``fn`` itself, except on one call in
        ``RECHECK_EVERY``, which runs ``checked`` (the guarded way: a miss captures; a hit runs ``fn``)."""
        every, ways = RECHECK_EVERY, self
        ways.unchecked = 0

        def function_call(cf, *args, **kwargs):
            if ways.unchecked < every - 1:
                ways.unchecked += 1
                return fn(*args, **kwargs)
            ways.unchecked = 0
            return checked(cf, *args, **kwargs)
        return function_call

    def choose(self, cf, way: str, reason: str) -> None:
        """Decide ``way`` now, as a measurement would, and install its ``__call__`` (for tests of each way's
        semantics; ``pin`` keeps the guards on every call)."""
        self._check_way(way)
        self._captures = cf.captures
        self._predict_due = False
        self._decide(way, reason)
        self._reinstall(cf)

    def _start(self, cf) -> None:
        self.way, self.eager, self.measuring, self._predict_due = GRAPHS, False, True, True
        self.unchecked = 0
        self.samples = {GRAPHS: [], FUNCTION: []}
        self.warm_up = {GRAPHS: [], FUNCTION: []}
        self.prediction, self.reason = None, "to be measured on the next cache hits"

    def _predict(self, cf) -> None:
        self._predict_due = False
        try:
            self.prediction = predict(facts_of(cf.last_events), calibration())
        except Exception as e:  # the prediction is advice: without it, the measurement decides
            self.reason = f"measuring both ways (no prediction: {type(e).__name__}: {e})"
            return
        self.reason = f"measuring both ways ({self.prediction.reason})"

    def _next_is_eager(self) -> bool:
        return len(self.warm_up[FUNCTION]) + len(self.samples[FUNCTION]) < \
            len(self.warm_up[GRAPHS]) + len(self.samples[GRAPHS])

    def _record(self, way: str, seconds: float, cf) -> None:
        if len(self.warm_up[way]) < WARM_UP:
            self.warm_up[way].append(seconds)
            return
        self.samples[way].append(seconds)
        decided = decide(self.samples[GRAPHS], self.samples[FUNCTION])
        if decided is not None:
            way, reason = decided
            self._decide(way, reason + (f"; {self.prediction.reason}" if self.prediction is not None else ""))
            self._reinstall(cf)

    @staticmethod
    def _reinstall(cf) -> None:
        """Install ``cf``'s fast path without the timing wrapper (and remember that it is still to be made)."""
        due = cf._fast_path_due
        cf._set_fast_path(cf._fast, cf._fast_path_source)
        cf._fast_path_due = due

    def _decide(self, way: str, reason: str) -> None:
        self.way, self.eager, self.measuring, self.reason = way, way == FUNCTION, False, reason

    def pin(self, way: str, why: str) -> None:
        """From now on cache hits run ``way`` (``"graphs"`` or ``"function"``), whatever is measured: for code
        that studies the graphs, and for tests of each way. Every cache hit checks the guards."""
        self._check_way(way)
        self.unchecked = 0
        self.why_fixed, self.eager, self.measuring, self.way, self.reason = why, way == FUNCTION, False, way, why

    @staticmethod
    def _check_way(way: str) -> None:
        if way not in (GRAPHS, FUNCTION):
            raise ValueError(f"a way is {GRAPHS!r} or {FUNCTION!r}, not {way!r}")

    def pin_graphs(self, why: str) -> None:
        self.pin(GRAPHS, why)

    # --- in words

    def explain(self, cf) -> str:
        """``describe()``, with the prediction made now if it is still due (explain() calls once)."""
        if self._predict_due:
            self._predict(cf)
        return self.describe()

    def describe(self) -> str:
        """One line for explain(): the way, and why."""
        if self.why_fixed:
            return f"cache hits run {'the graphs' if self.way == GRAPHS else 'the original function'}: {self.why_fixed}"
        if self.measuring or self.way == GRAPHS and not self.samples[GRAPHS] and self.prediction is None:
            return f"cache hits: {self.reason}"
        if self.way == GRAPHS:
            return f"cache hits run the graphs: {self.reason}"
        return (f"cache hits run the original function (eager's own NumPy calls): {self.reason}; the guards are "
                f"checked on one call in {RECHECK_EVERY} (an input without a cache entry is captured then)")


def decide(graphs: list[float], function: list[float]) -> tuple[str, str] | None:
    """``(way, reason)`` from the timings of each way so far, or None to measure on."""
    n = min(len(graphs), len(function))
    if n < MIN_SAMPLES:
        return None
    g, f = statistics.median(graphs), statistics.median(function)
    ratio = f / g if g > 0 else float("inf")
    apart = max(graphs) < min(function) or max(function) < min(graphs)
    if n < MAX_SAMPLES and (1 / DECISIVE <= ratio <= DECISIVE or not apart):
        return None
    way = GRAPHS if ratio > (DECISIVE if n < MAX_SAMPLES else GRAPHS_MARGIN) else FUNCTION
    return way, (f"measured {len(graphs)} + {len(function)} calls, interleaved: graphs {g * 1e6:.1f} us, the "
                 f"function {f * 1e6:.1f} us (median): the graphs run at {ratio:.2f}x the function's speed")


def eager_call(fn):
    """The ``__call__`` of a compiled function that gave up capturing: ``fn`` itself, as the general path would
    run it, without the general path's steps."""
    def call(cf, *args, **kwargs):
        return fn(*args, **kwargs)
    return call


def facts_of(events) -> GraphFacts:
    """The cost model's numbers of one call, from the segments it ran (``CompiledFunction.last_events``)."""
    array_nodes = array_bytes = scalar_nodes = instructions = guards = writebacks = written = breaks = 0
    savings = 0.0
    for event in events:
        seg = event.segment
        for node in seg.graph.nodes:
            if node.op in SOURCE_OPS:
                continue
            for v in node.outputs:
                if v.type.shape:
                    array_nodes += 1
                    array_bytes += _nbytes(v.type)
                else:
                    scalar_nodes += 1
        instructions += len(seg.step_log)
        guards += len(seg.guards.guards)
        breaks += seg.end == "break"
        compiled = getattr(seg.runner, "__self__", None)
        in_place = getattr(getattr(compiled, "generated", None), "in_place", 0)
        copied = [seg.graph.outputs[k] for _, k in seg.writebacks][in_place:]
        writebacks += len(copied)
        written += sum(_nbytes(v.type) for v in copied)
        for group in [*getattr(compiled, "kernels", ()), *getattr(compiled, "stencils", ())]:  # (C programs too)
            decision = group.decision
            if decision.numpy_seconds == decision.numpy_seconds:  # (not NaN)
                savings += decision.numpy_seconds - decision.kernel_seconds
    return GraphFacts(array_nodes, array_bytes, scalar_nodes, instructions, guards, writebacks, written, breaks,
                      savings)


def _nbytes(t) -> int:
    try:
        return int(t.size) * t.dtype.itemsize
    except Exception:  # a symbolic size: unknown until called
        return 0


@contextmanager
def graphs_pinned(cf, why: str):
    """Within the block, the cache hits of ``cf`` and of the functions compiled for its graph breaks run their
    graphs (the equivalence checker checks the graphs, not the function against itself); after it, the choice
    is made again as before."""
    pinned = []
    stack = [cf]
    while stack:
        f = stack.pop()
        stack += list(f.nested.values())
        pinned.append((f, f.ways))
        f.ways = WayChoice(why)
        f._set_fast_path(None, "")  # (the fast path reads ``ways``: it is made again, with the pinned one)
        f._fast_path_due = bool(f.cache.get(f._first))
    try:
        yield
    finally:
        for f, ways in pinned:
            f.ways = ways
            ways._captures = -1  # measured again from the next call
            ways.unchecked = 0
            f._set_fast_path(None, "")
            f._fast_path_due = bool(f.cache.get(f._first))
