"""The differential oracle: run a program eagerly and through each way, call by call, and compare.

Each side runs in its own fresh module namespace, so printing, ``log``, ``state`` and globals can be compared
after every call. A way's outcome on a program is one of:

    ok         every call agreed (outputs; and, for ways that keep side effects, printing and state)
    mismatch   a call gave another result (the first difference is kept)
    refused    capture raised TraceError, the documented "cannot capture this as written"
    crash      anything else was raised: a bug, since eager code ran fine

A program whose eager run raises is *discarded* (the generator should never make one).
"""

from __future__ import annotations

import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..equivalence.compare import Mismatch, compare
from ..equivalence.observe import describe, printed
from ..errors import ScriptError, TraceError
from .program import Program, load
from .strict import aliasing_difference, aliasing_of, strict_difference
from .ways import Way, way as way_named

STATE_NAMES = ("log", "state", "COUNTER", "G", "items")
"""The module state a generated program may read or write."""

Mutation = Callable[[dict], None]
"""Changes a namespace's state between calls (the same change is made on every side)."""


@dataclass
class Call:
    args: list
    mutation: Mutation | None = None
    views: tuple = ()
    """``Program.aliases``: arguments passed as views of other arguments."""


@dataclass
class Observed:
    result: Any
    printed: str
    state: dict
    args: list = field(default_factory=list)
    """The final contents of the array arguments (the function may write into them)."""
    aliasing: list = field(default_factory=list)
    """Which result arrays are, or share memory with, an argument or another result (``strict.aliasing_of``;
    taken for eager code and for the strict ways only)."""


@dataclass
class Outcome:
    way: str
    status: str
    """ok, mismatch, refused or crash."""
    call: int = -1
    """Which call went wrong."""
    detail: str = ""
    mismatch: Mismatch | None = None
    changes: list[str] = field(default_factory=list)
    """What the way's passes changed (for the pass suite)."""
    ops: set[str] = field(default_factory=set)
    """The ops of the graphs the way ran."""
    effects_differ: bool = False
    """For a way that does not keep side effects: whether they differed from eager code's (not a failure)."""


@dataclass
class Verdict:
    program: Program
    discarded: str | None = None
    """Why eager code could not run it, if it could not."""
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status in ("mismatch", "crash")]


def default_calls(program: Program, n: int = 3) -> list[Call]:
    return [Call(program.inputs(k), views=program.aliases) for k in range(n)]


def differential(program: Program, ways: list[Way], calls: list[Call] | None = None,
                 reference: Program | None = None) -> Verdict:
    """Run ``program`` eagerly and through each of ``ways`` on ``calls``; compare every call. ``reference``
    gives the expected results instead (a program the rewritten ``program`` must agree with)."""
    calls = calls if calls is not None else default_calls(program)
    try:
        eager = observe_calls((reference or program).namespace(), calls, strict=any(w.frontend.strict for w in ways))
    except Exception as e:
        return Verdict(program, discarded=f"{type(e).__name__}: {e}")
    verdict = Verdict(program)
    aliasing = any(c.views for c in calls)
    for w in ways:
        if aliasing and not w.frontend.writes_arguments:
            continue  # (lazy tensors are copies: a write through one alias cannot show in another, documented)
        verdict.outcomes.append(run_way(program, w, calls, eager))
    return verdict


def observe_calls(namespace: dict, calls: list[Call], build: Callable | None = None,
                  strict: bool = False) -> list[Observed]:
    """Call the program (built by ``build``, eager by default) once per call, recording what it did (with
    ``strict``, how its results alias the arguments too)."""
    fn = namespace["program"] if build is None else build(namespace["program"])
    out = []
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in calls:
            if call.mutation is not None:
                call.mutation(namespace)
            args = arguments(call)
            with printed() as text:
                result = fn(*args)
            out.append(Observed(result, text.getvalue(), state_of(namespace),
                                [a.copy() for a in args if isinstance(a, np.ndarray)],
                                aliasing_of(result, args) if strict else []))
    return out


def arguments(call: Call) -> list:
    """Fresh copies of the call's arrays, with the views among them made as ``call.views`` says."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in call.args]
    for i, j, key in call.views:
        args[i] = args[j] if key is None else args[j][key]
    return args


def compare_call(w: Way, want: Observed, have: Observed, ref64=None) -> Mismatch | None:
    """The first difference of one call: the result, then (for a way that keeps them) printing and state, and
    (for a way that writes into the caller's arrays) the arguments' final contents."""
    if w.frontend.strict:
        mismatch = strict_difference(want.result, have.result) or aliasing_difference(want.aliasing, have.aliasing)
    else:
        mismatch = compare(want.result, have.result, exact=w.exact)
    if mismatch is not None and not w.exact and mismatch.kind == "value" and ref64 is not None:
        mismatch = compare(want.result, have.result, ref64=ref64())
    if mismatch is None and w.frontend.keeps_side_effects:
        mismatch = compare_effects(want, have)
    if mismatch is None and w.frontend.writes_arguments:
        mismatch = compare(want.args, have.args, exact=w.exact)
        if mismatch is not None:
            mismatch = Mismatch(f"argument {mismatch.path}", mismatch.kind, mismatch.expected, mismatch.got,
                                f"an argument's contents after the call differ: {mismatch.detail}")
    return mismatch


def state_of(namespace: dict) -> dict:
    return {name: describe(namespace[name]) for name in STATE_NAMES if name in namespace}


def run_way(program: Program, w: Way, calls: list[Call], eager: list[Observed]) -> Outcome:
    runnable = None

    def build(fn):
        nonlocal runnable
        runnable = w.build(fn)
        return runnable

    def outcome(status, call=-1, detail="", mismatch=None) -> Outcome:
        compiler = getattr(runnable, "compiler", None)
        changes, ops = (list(compiler.changes), set(compiler.ops)) if compiler is not None else ([], set())
        return Outcome(w.name, status, call, detail, mismatch, changes, ops)

    try:
        got = observe_calls(program.namespace(), calls, build, strict=w.frontend.strict)
    except (TraceError, ScriptError) as e:
        return outcome("refused", detail=str(e).splitlines()[0])
    except Exception as e:
        return outcome("crash", detail="".join(traceback.format_exception_only(e)).strip())
    for k, (want, have) in enumerate(zip(eager, got)):
        mismatch = compare_call(w, want, have, lambda: _float64_results(program, calls)[k])
        if mismatch is not None:
            return outcome("mismatch", k, str(mismatch), mismatch)
    result = outcome("ok")
    result.effects_differ = any(compare_effects(want, have) for want, have in zip(eager, got))
    return result


def _float64_results(program: Program, calls: list[Call]) -> list:
    """The program run eagerly with its float arrays upcast to float64: the judge of ways that reorder sums."""
    upcast = [Call([a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
                    for a in c.args], c.mutation, c.views) for c in calls]
    try:
        return [o.result for o in observe_calls(program.namespace(), upcast)]
    except Exception:
        return [None] * len(calls)


def compare_effects(want: Observed, have: Observed) -> Mismatch | None:
    if want.printed != have.printed:
        return Mismatch("printed text", "printed", want.printed, have.printed,
                        f"eager printed {want.printed!r:.160}, the way printed {have.printed!r:.160}")
    for name, value in want.state.items():
        if have.state.get(name) != value:
            return Mismatch(f"global {name}", "state", value, have.state.get(name),
                            f"{name} after the call differs from eager code's")
    return None


# --- reproducers

REPRODUCER = '''\
"""Found by graph_lab's fuzzer: {way} differs from eager NumPy (program seed {seed}, call {call}).

Run: python3 this_file.py   (prints the first difference, or "no difference")
"""
import numpy as np

from graph_lab.testing.differential import replay

SOURCE = """\\
{source}"""

CALLS = [
{calls}]

VIEWS = {views!r}  # (i, j, key): argument i is argument j indexed by key (None: the same array)

print(replay(SOURCE, {way!r}, CALLS, VIEWS) or "no difference")
'''


def reproducer(program: Program, way_name: str, call: int, calls: list[Call] | None = None) -> str:
    """A standalone script that shows the difference: the program's source, the arguments of each call up to
    the failing one (a stale result needs the calls before it), and one ``replay``."""
    calls = calls if calls is not None else default_calls(program)
    calls = calls[:call + 1] if call >= 0 else calls  # a crash: replay every call
    rows = "".join("    [" + ", ".join(_array_literal(a) for a in c.args) + "],\n" for c in calls)
    return REPRODUCER.format(way=way_name, seed=program.seed, call=call + 1 if call >= 0 else len(calls),
                             source=program.source(), calls=rows, views=program.aliases)


def _array_literal(a) -> str:
    if not isinstance(a, np.ndarray):
        return repr(a)
    return f"np.array({a.tolist()!r}, dtype={a.dtype.name!r}).reshape({a.shape!r})"


def replay(source: str, way_name: str, calls: list[list], views: tuple = ()) -> Mismatch | None:
    """Run ``source``'s ``program`` eagerly and through the way named ``way_name``, once per argument list in
    ``calls`` (with ``views``, as ``Program.aliases``); the first difference."""
    w = way_named(way_name)
    steps = [Call(args, views=views) for args in calls]
    eager = observe_calls(load(source, "<graph_lab reproducer>"), steps, strict=w.frontend.strict)
    got = observe_calls(load(source, "<graph_lab reproducer>"), steps, w.build, strict=w.frontend.strict)
    for want, have in zip(eager, got):
        mismatch = compare_call(w, want, have)
        if mismatch is not None:
            return mismatch
    return None
