"""The whole-graph cost model: does running a function's graphs pay, against running the function itself?

``cost.py`` decides, group by group, whether a C kernel beats NumPy's calls. This module asks the same question
one level up: a cache hit of ``compile()`` either runs the captured graphs (guards, the graphs' generated code, the
copies that write results back into the caller's arrays, the Python at each graph break) or runs the original
function on the same arguments (after the same guards), which is eager's semantics by definition. Both make about
the same NumPy calls, so the model predicts only what differs::

    eager  = shared + instructions * python_instruction + scalar nodes * numpy_scalar_op
    graphs = shared + write-backs * numpy_call + written bytes * 2 * numpy_byte + scalar nodes * zero_d_op
             + breaks * graph_break - what the C kernels are predicted to save
    shared = array nodes * numpy_call + bytes the array nodes produce * 3 * numpy_byte + guards * guard_check

(The guards are shared: the function runs only on a cache hit, after the same guards, so that a call whose guards
fail still captures.)

``instructions`` is the number of bytecode instructions capture ran, which is what the interpreter runs eagerly
(an unrolled loop is all of its iterations); a *scalar node* is one whose result is 0-d, which eager computes on
NumPy scalars and generated code may compute as a ufunc on a 0-d array.

Where the model's reasons come from (the corpus, measured on the 2-CPU course machine, while it was shared): of the
27 corpus kernels slower than 0.95x eager, most lose in the graph itself, not in the fixed costs around it (guards
and argument fetch were 1-8% of the call: 0.9 us of 88 us for an unrolled upwind stencil, 6 us of 255 us for
gemver's 37 guards): the graph's results written back into the caller's arrays by copies where eager wrote in place
(gemver 322 us against 255 us; SGD over lists), unrolled loops of small slice updates where the graph makes the
same calls as eager (LU rows), scalar loops. Those are terms of the same size as the difference the model must
find, so a prediction alone is not trusted: ``way_choice`` times both ways on the first cache hits. The prediction
says why; the measurement decides.

All times are measured once per process by ``measure()`` (about 20 ms, pure Python and NumPy: no C compiler
needed), and every prediction is a pure function of a ``WholeCalibration`` and a ``GraphFacts``, so tests pass
their own numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cost import _best_time
from .cost import _time as _time_us

@dataclass(frozen=True)
class WholeCalibration:
    """What the whole-graph model knows about this process. Times in seconds."""

    python_instruction: float
    """One bytecode instruction of plain Python (a loop of local arithmetic)."""
    guard_check: float
    """One guard as the fast path checks it (``type(v) is ndarray and v.shape == K and v.dtype == D``)."""
    numpy_call: float
    """One ufunc call on a tiny array (dispatch and allocation)."""
    numpy_byte: float
    """Per byte a ufunc reads or writes, on an array of a few MB."""
    numpy_scalar_op: float
    """``a + b`` on two ``np.float64`` scalars (what eager computes ``a[i, i] + s`` on)."""
    zero_d_op: float
    """``np.add(a, b)`` on two 0-d arrays (what generated code may compute the same on)."""
    graph_break: float
    """What each graph break adds to a call: a segment looked up and rebuilt, one instruction run aside."""

    def rows(self) -> list[list[str]]:
        """The calibration as a table (for ``explain``)."""
        ns = 1e9
        return [["Python bytecode instruction", f"{self.python_instruction * ns:.1f} ns"],
                ["guard check", f"{self.guard_check * ns:.1f} ns"],
                ["NumPy call (tiny array)", f"{self.numpy_call * ns:.0f} ns"],
                ["NumPy per byte", f"{self.numpy_byte * ns:.3f} ns"],
                ["NumPy scalar op / ufunc on 0-d arrays", f"{self.numpy_scalar_op * ns:.0f} / {self.zero_d_op * ns:.0f} ns"],
                ["graph break", f"{self.graph_break * ns:.0f} ns"]]


@dataclass(frozen=True)
class GraphFacts:
    """The numbers of one call of a compiled function that the model needs (all its graphs together)."""

    array_nodes: int
    """Nodes whose result is an array with at least one axis."""
    array_bytes: int
    """Bytes those results hold."""
    scalar_nodes: int
    """Nodes whose result is 0-d."""
    instructions: int
    """Bytecode instructions capture interpreted (what eager Python runs)."""
    guards: int
    """Guards checked before the graphs run."""
    writebacks: int = 0
    """Results copied into the caller's arrays after a graph."""
    written_bytes: int = 0
    """Their bytes."""
    breaks: int = 0
    """Graph breaks in the call."""
    kernel_savings: float = 0.0
    """Seconds the fused backend's cost model predicts its C kernels save (``cost.decide``)."""


@dataclass(frozen=True)
class Prediction:
    """What the model predicts for one call, both ways, and why in words."""

    graphs_seconds: float
    eager_seconds: float
    reason: str

    @property
    def speedup(self) -> float:
        """Eager's predicted time over the graphs' (above 1: the graphs pay)."""
        return self.eager_seconds / self.graphs_seconds if self.graphs_seconds > 0 else float("inf")


def predict(facts: GraphFacts, cal: WholeCalibration) -> Prediction:
    """Both ways' predicted seconds per call, and the terms that make the difference, largest first."""
    # (the guards are checked before either way runs: they are shared, not a difference)
    shared = (facts.array_nodes * cal.numpy_call + 3 * facts.array_bytes * cal.numpy_byte
              + facts.guards * cal.guard_check)
    eager_terms = {
        f"eager interprets {facts.instructions} bytecode instructions": facts.instructions * cal.python_instruction,
        f"eager computes {facts.scalar_nodes} scalar results on NumPy scalars": facts.scalar_nodes * cal.numpy_scalar_op,
    }
    graph_terms = {
        f"{facts.writebacks} write-back copies ({facts.written_bytes / 1e3:.0f} kB)":
            facts.writebacks * cal.numpy_call + 2 * facts.written_bytes * cal.numpy_byte,
        f"{facts.scalar_nodes} 0-d results": facts.scalar_nodes * cal.zero_d_op,
        f"{facts.breaks} graph breaks": facts.breaks * cal.graph_break,
        "C kernels' predicted saving": -facts.kernel_savings,
    }
    eager_s = shared + sum(eager_terms.values())
    graphs_s = max(shared + sum(graph_terms.values()), 0.1 * shared, 1e-9)
    terms = [(abs(v), f"{name} {_time(v)}") for name, v in (*eager_terms.items(), *graph_terms.items()) if v]
    words = ", ".join(text for _, text in sorted(terms, reverse=True)[:4])
    reason = (f"predicted {_time(graphs_s)} for the graphs against {_time(eager_s)} for the function "
              f"({eager_s / graphs_s:.2f}x; {words or 'nothing differs'})")
    return Prediction(graphs_s, eager_s, reason)


def _time(seconds: float) -> str:
    return f"{seconds * 1e9:.0f} ns" if abs(seconds) < 1e-6 else _time_us(seconds)


# --- measuring

_calibration: WholeCalibration | None = None


def calibration() -> WholeCalibration:
    """This process's calibration, measured on first use."""
    global _calibration
    if _calibration is None:
        _calibration = measure()
    return _calibration


def _python_loop(n):
    total = 0
    for i in range(n):
        total = total + i
    return total


PYTHON_LOOP_INSTRUCTIONS = 6
"""Instructions per iteration of ``_python_loop`` (FOR_ITER, STORE_FAST, two LOAD_FAST, BINARY_OP, STORE_FAST,
JUMP_BACKWARD, give or take one between Python versions)."""


def measure() -> WholeCalibration:
    """Measure the calibration in this process (best of several timings: other processes' noise left out)."""
    loops = 2000
    instruction = _best_time(lambda: _python_loop(loops), 5) / (loops * PYTHON_LOOP_INSTRUCTIONS)
    array, shape, dtype = np.ones(8), (8,), np.dtype(np.float64)

    def guards():
        for _ in range(20):
            if not (type(array) is np.ndarray and array.shape == shape and array.dtype == dtype):
                break
    guard = _best_time(guards, 5, 20) / 20
    small = np.ones(16)
    numpy_call = _best_time(lambda: np.add(small, small), 5, 200)
    big = np.ones(1 << 18)
    numpy_byte = max(_best_time(lambda: np.add(big, big), 5) - numpy_call, 1e-12) / (3 * big.nbytes)
    s, t = np.float64(1.5), np.float64(2.5)
    scalar_op = _best_time(lambda: s + t, 5, 200)
    zs, zt = np.asarray(s), np.asarray(t)
    zero_d_op = _best_time(lambda: np.add(zs, zt), 5, 200)
    # a graph break: the general path looks the next segment up (its guard function), rebuilds the frame and runs
    # one instruction through the interpreter; about 40 guard checks and 100 instructions of Python each
    graph_break = 40 * guard + 100 * instruction
    return WholeCalibration(instruction, guard, numpy_call, numpy_byte, scalar_op, zero_d_op, graph_break)
