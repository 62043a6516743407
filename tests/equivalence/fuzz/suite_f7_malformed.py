"""F7 malformed inputs: hostile text IR, damaged saved files, wrong inputs to ``run``, bad ``shapes`` to
``trace``. Each may raise only its documented error type, and nothing may hang.

    parse(text)            GraphParseError             (a GraphLoadError)
    load(path)             GraphLoadError
    run(graph, inputs)     GraphInputError, GraphExecutionError
    graph.to_python()(...) GraphInputError, GraphExecutionError
    check_guards(...)      nothing: True or False
    trace(fn, shapes)      TraceError

Whatever parses or loads must print a text that parses back to itself, and is then run on inputs of its own
types, every size symbol set to 3 (graphs whose values would hold more than a million elements are not run: that
is a resource limit, not an answer the test could check). A graph with a while_loop or fori_loop runs under a
timer: a mutated loop condition may never become false, as in Python, and such a run is stopped and counted.
"""

from __future__ import annotations

import os
import random
import re
import signal
import tempfile
import threading
import time
import warnings
from collections import Counter
from typing import Callable

import numpy as np

from tests.equivalence.fuzz.fuzz_report import Figure, Timer
from graph_lab import (GraphExecutionError, GraphInputError, GraphLabError, GraphLoadError, GraphParseError,
                       TraceError, check_guards, load, parse, save, trace)
from graph_lab import run as run_graph
from graph_lab.ir.sizes import is_symbolic_graph
from graph_lab.ir.symbolic import evaluate, free_symbols
from graph_lab.testing.generator import generate
from graph_lab.testing.ways import BACKENDS, PIPELINES, GraphCompiler, TracedFunction

HANG_SECONDS = 5.0
"""A case that takes more CPU time than this is a hang. CPU time of this process, not wall time: on a loaded
machine (CI running tests in parallel) a case waits for a core without doing more work."""
NASTY = ["9" * 40, "1e999", "-0", "nan", "inf", "(" * 60, "[" * 60, "]", ")", "%99999", "%-1", "$9", "#", "`",
         "\"", "\\", "\x00", "\ud800", "模型", "f64[", "guard", "graph", "return", "{", "}", "...", "=", ":", ",",
         "\n", "i8[3] = const [1, 2, 3]", "f64[999999999999]", "shape=(", "key=[$9]", "axis=(0, 0)", "-1"]


def corpus(n: int, seed: int) -> list:
    """Traced random programs (with their guards) to mutate."""
    graphs = []
    s = seed
    while len(graphs) < n:
        program = generate(s)
        s += 1
        runnable = TracedFunction(program.namespace()["program"], GraphCompiler(PIPELINES["none"], BACKENDS["prepare"]))
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                runnable(*program.inputs(0))
        except GraphLabError:
            continue
        graphs.append(runnable.entries[0][0])
    return graphs


# --- mutators

_TOKENS = re.compile(r"\s+|[A-Za-z_][\w.]*|-?\d+(?:\.\d+)?(?:e-?\d+)?|\S")


def mutate_text(text: str, rng: random.Random) -> str:
    pieces = _TOKENS.findall(text)
    if not pieces:
        return text + rng.choice(NASTY)
    i, j = rng.randrange(len(pieces)), rng.randrange(len(pieces))
    action = rng.randrange(9)
    if action == 0:
        return text[:rng.randrange(len(text))]
    if action == 1:
        k = rng.randrange(len(text))
        return text[:k] + chr(ord(text[k]) ^ (1 << rng.randrange(7))) + text[k + 1:]
    if action == 2:
        del pieces[i]
    elif action == 3:
        pieces.insert(i, pieces[j])
    elif action == 4:
        pieces[i], pieces[j] = pieces[j], pieces[i]
    elif action == 5:
        pieces[i] = rng.choice(NASTY)
    elif action == 6:
        pieces.insert(i, rng.choice(NASTY))
    elif action == 7:
        pieces[i] = re.sub(r"\d+", lambda m: str(rng.choice([0, 1, 2, 7, 10**rng.randrange(25), 2**63])), pieces[i])
    else:
        lines = text.splitlines()
        k = rng.randrange(len(lines))
        return "\n".join(lines[:k] + [lines[k]] * rng.randrange(2, 50) + lines[k + 1:])
    return "".join(pieces)


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    b = bytearray(data)
    action = rng.randrange(5)
    if action == 0:
        return bytes(b[:rng.randrange(len(b))])
    if action == 1:
        for _ in range(rng.randrange(1, 5)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif action == 2:
        k = rng.randrange(len(b))
        del b[k:k + rng.randrange(1, 64)]
    elif action == 3:
        k = rng.randrange(len(b))
        b[k:k] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 32)))
    else:
        k = rng.randrange(len(b))
        b[k:k + 8] = rng.choice([b"\xff" * 8, b"\x00" * 8, (2**63 - 1).to_bytes(8, "little")])
    return bytes(b)


# --- checking one case

def attempt(fn: Callable, allowed: tuple, tally: Counter, figure: Figure, label: str, kind: str):
    """Run ``fn``; an allowed error is counted, anything else is a failure. Returns fn's result or None."""
    start = time.process_time()
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn()
        tally[f"{kind} accepted"] += 1
    except allowed:
        tally[f"{kind} refused with a documented error"] += 1
        result = None
    except Exception as e:
        tally[f"{kind} undocumented exceptions"] += 1
        figure.failures.append(f"{kind} ({label}): {type(e).__name__}: {str(e)[:300]}")
        result = None
    elapsed = time.process_time() - start
    tally["max ms"] = max(tally["max ms"], int(elapsed * 1000))
    if elapsed > HANG_SECONDS:
        tally["hangs"] += 1
        figure.failures.append(f"{kind} ({label}) took {elapsed:.1f} s")
    return result


def run_parsed(graph, tally, figure, label, kind):
    """A graph that parsed or loaded: it round-trips, and runs (or fails as documented) on its own types."""
    text = str(graph)
    if attempt(lambda: str(parse(text, dict(graph.param_values), allow_missing_params=True)) == text,
               (), tally, figure, label, f"{kind} reprint") is False:
        figure.failures.append(f"{kind} ({label}): the printed text does not parse back to itself")
    types = graph.input_types()
    looping = _has_unbounded_loop(graph)
    if looping and not _CAN_TIME_OUT:
        tally[f"{kind} with a while_loop or fori_loop: not run (no SIGALRM here)"] += 1
        return
    shapes = _example_shapes(types)
    if shapes is None:
        tally[f"{kind} with symbolic sizes that 3 cannot stand for: not run"] += 1
        return
    largest = _largest_value(graph)
    if largest > 10**6:
        tally[f"{kind} too large to run"] += 1
        return
    if is_symbolic_graph(graph):
        tally[f"{kind} with symbolic sizes: run with each size symbol = {EXAMPLE_SIZE}"] += 1
    inputs = {name: np.ones(shapes[name], t.dtype) for name, t in types.items()}
    run = (lambda: run_graph(graph, inputs))
    if not looping:
        attempt(run, (GraphExecutionError, GraphInputError), tally, figure, label, f"{kind} run")
        return
    try:
        attempt(lambda: _within_time(run), (GraphExecutionError, GraphInputError), tally, figure, label,
                f"{kind} run")
    except _OutOfTime:
        tally[f"{kind} run stopped after {LOOP_SECONDS} s (a mutated loop that may never end)"] += 1


EXAMPLE_SIZE = 3
"""The value given to every size symbol of a parsed graph's inputs (shape guards that 3 does not meet make the
run a documented GraphInputError)."""
LOOP_SECONDS = 0.25
"""How long a graph with a while_loop or fori_loop may run: a mutated condition or trip count may loop for ever,
as a Python loop may; that is not graph_lab's error, but it must be stoppable, and it is counted."""
_CAN_TIME_OUT = hasattr(signal, "setitimer")


class _OutOfTime(BaseException):
    """Raised by the timer inside a run that took longer than ``LOOP_SECONDS`` (a BaseException, so that the
    interpreter's ``except Exception`` does not turn it into a GraphExecutionError)."""


def _within_time(fn: Callable):
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("F7 runs loops only in a process's main thread (signals are delivered there)")

    def on_alarm(signum, frame):
        raise _OutOfTime()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, LOOP_SECONDS)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _example_shapes(types: dict) -> dict | None:
    """Each input's shape with every size symbol set to ``EXAMPLE_SIZE`` (None if a size comes out negative)."""
    shapes = {}
    for name, t in types.items():
        sizes = {s: EXAMPLE_SIZE for s in free_symbols(tuple(t.shape))}
        shape = tuple(d if type(d) is int else evaluate(d, sizes) for d in t.shape)
        if any(type(d) is not int or d < 0 for d in shape):
            return None
        shapes[name] = shape
    return shapes


def _largest_value(graph) -> int:
    """The element count of the graph's largest value, every size symbol set to ``EXAMPLE_SIZE``."""
    largest = 0
    for node in graph.nodes:
        for v in node.outputs:
            count = 1
            for d in v.type.shape:
                n = d if type(d) is int else evaluate(d, dict.fromkeys(free_symbols(d), EXAMPLE_SIZE))
                count *= max(int(n), 0)
            largest = max(largest, count)
    return largest


def _has_unbounded_loop(graph) -> bool:
    return any(n.op in ("while_loop", "fori_loop") or any(_has_unbounded_loop(r) for r in n.regions)
               for n in graph.nodes)


def fuzz_text(graphs, count: int, rng, tally, figure):
    texts = [str(g) for g in graphs]
    for i in range(count):
        text = rng.choice(texts)
        for _ in range(rng.randrange(1, 4)):
            text = mutate_text(text, rng)
        params = dict(rng.choice(graphs).param_values)
        parsed = attempt(lambda: parse(text, params, allow_missing_params=rng.random() < 0.7), (GraphParseError,),
                         tally, figure, f"text #{i}", "text")
        if parsed is not None:
            run_parsed(parsed, tally, figure, f"text #{i}", "text")


def fuzz_files(graphs, count: int, rng, tally, figure, folder: str):
    files = []
    for k, g in enumerate(graphs):
        path = os.path.join(folder, f"good{k}.npz")
        try:
            save(g, path)
        except GraphLabError:
            continue
        with open(path, "rb") as f:
            files.append(f.read())
    path = os.path.join(folder, "mutated.npz")
    for i in range(count):
        data = rng.choice(files)
        for _ in range(rng.randrange(1, 3)):
            data = mutate_bytes(data, rng)
        with open(path, "wb") as f:
            f.write(data)
        loaded = attempt(lambda: load(path), (GraphLoadError,), tally, figure, f"file #{i}", "file")
        if loaded is not None:
            run_parsed(loaded, tally, figure, f"file #{i}", "file")


def wrong_inputs(graph, rng) -> list[object]:
    types = graph.input_types()
    names = list(types)
    good = {n: np.ones(t.shape, t.dtype) for n, t in types.items()}
    first = names[0] if names else "x"
    cases = [{}, {**good, "extra": np.ones(2)}, {k: v for k, v in good.items() if k != first},
             {**good, first: [1.0, 2.0]}, {**good, first: None}, {**good, first: "text"},
             {**good, first: np.ones((7, 9))}, {**good, first: np.ones((), np.int8)},
             {**good, first: np.array(["a"])}, {**good, first: np.zeros(types[first].shape + (2,))} if names else {},
             {**good, first: np.full(types[first].shape, np.nan)} if names else {}, [], None, "x"]
    return cases


def fuzz_run_inputs(graphs, rng, tally, figure):
    for k, g in enumerate(graphs):
        forward = g.to_python()
        for j, inputs in enumerate(wrong_inputs(g, rng)):
            label = f"graph #{k}, inputs #{j}"
            allowed = (GraphInputError, GraphExecutionError)
            attempt(lambda: run_graph(g, inputs), allowed, tally, figure, label, "run")
            if isinstance(inputs, dict):
                attempt(lambda: forward(**inputs), allowed, tally, figure, label, "to_python")
                result = attempt(lambda: check_guards(g, inputs), (), tally, figure, label, "check_guards")
                if result not in (True, False, None):
                    figure.failures.append(f"check_guards ({label}) returned {result!r}")


BAD_SHAPES = [None, {}, [], "x", {"x": None}, {"x": -1}, {"x": (-1,)}, {"x": (2.5,)}, {"x": (True,)},
              {"x": ("a",)}, {"x": ((2,), "no_such_dtype")}, {"x": ((2,), object)}, {"x": ((2,), "U3")},
              {"x": ((2,), None, 3)}, {"x": [[2]]}, {"y": (2,)}, {"x": (2,), "y": (2,)}, {"x": (2**62, 2**62)},
              {"x": ((2,), "float128")}, {"x": ((2,), "complex64")}, {1: (2,)}, {"x": (2,) * 70}]


def fuzz_trace_specs(tally, figure):
    def fn(x):
        return np.tanh(x) * 2.0

    for k, shapes in enumerate(BAD_SHAPES):
        attempt(lambda: trace(fn, shapes), (TraceError,), tally, figure, f"shapes {shapes!r:.60}", "trace")
    for k, example in enumerate([None, {}, {"x": np.ones(3)}, {"x": [1.0, 2.0]}, {"x": np.ones(2, np.int32)}]):
        attempt(lambda: trace(fn, {"x": (2,)}, mode="guard", example=example), (TraceError,), tally, figure,
                f"example {example!r:.60}", "trace")
    attempt(lambda: trace(fn, {"x": (2,)}, mode="bogus"), (TraceError,), tally, figure, "mode", "trace")


def run_suite(texts: int, files: int, seed: int = 0, graphs: int = 30) -> Figure:
    figure = Figure("F7 malformed inputs")
    rng = random.Random(seed)
    tally: Counter = Counter()
    with Timer() as timer, tempfile.TemporaryDirectory(prefix="graph-lab-f7-") as folder:
        corpus_graphs = corpus(graphs, seed)
        fuzz_text(corpus_graphs, texts, rng, tally, figure)
        fuzz_files(corpus_graphs, files, rng, tally, figure, folder)
        fuzz_run_inputs(corpus_graphs, rng, tally, figure)
        fuzz_trace_specs(tally, figure)
    figure.seconds = timer.seconds
    figure.add("mutated IR texts", texts)
    figure.add("mutated saved files", files)
    for key in sorted(k for k in tally if k not in ("max ms", "hangs")):
        figure.add(key, tally[key])
    figure.add("hangs (over 5 s)", tally["hangs"])
    figure.add("slowest case (ms)", tally["max ms"])
    return figure


def run(count: int, seed: int = 0) -> Figure:
    """``count`` mutated texts and ``count`` mutated files."""
    return run_suite(count, count, seed)
