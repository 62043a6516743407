"""``compile(fn)``: capture a function's bytecode segment by segment, cache each segment under its guards, and
run cached segments on later calls, with the instruction at each graph break run as ordinary Python between them.
"""

from __future__ import annotations

import inspect
import sys
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ...errors import GraphLabError
from ...ir.source import user_stacklevel
from ... import logs
from .break_step import concrete_step, conditional_jumps_of, run_rest
from .capture_loop import capture_segment
from .capture_loop_inlined import capture_once_inlined
from .dynamic_ints import mark_dynamic_ints
from .fallback import called_in_another_capture, warn_eager_fallback
from .frame import NULL, CodeCache, instructions_of
from .handlers import cannot_interpret
from .cache_hit_fast_path import make_fast_path
from .way_choice import WayChoice
from .recorder import MAX_GRAPH_NODES
from .resume import CallBudget, finish_as_python, resumable
from .segment import Segment
from .segment_guards import first_failing
from .sources import FrameInputs


class GraphBreak(GraphLabError):
    """With ``fullgraph=True``: capture had to stop. Names the cause, the line and the instruction."""


class RecompileLimitWarning(UserWarning):
    """A compiled function hit its recompile limit and runs eagerly from then on."""


@dataclass
class CallEvent:
    """What happened at one offset during one call: a cache hit or a capture, and why."""

    offset: int
    segment: Segment
    captured: bool
    reasons: list[str] = field(default_factory=list)


class CompiledFunction:
    """``dynamic`` says which array sizes a graph holds for: False, exactly the sizes of the call that captured
    it; True, any size (each size >= 2 of every array argument is a symbol); None (automatic, the default),
    static first, and a size whose change caused a recompile is symbolic in the graphs captured after it."""

    capture_loop = staticmethod(capture_once_inlined)
    """The loop that captures one segment: ``capture_loop.capture_once`` (the reference) with its step written
    out, which is faster (see its module); tests set the reference here to compare the two."""

    def __init__(self, fn, backend: str = "auto", fullgraph: bool = False, dynamic=None, recompile_limit: int = 8,
                 max_graph_nodes: int = MAX_GRAPH_NODES):
        if not isinstance(fn, types.FunctionType):  # (inspect.isfunction)
            raise TypeError(f"compile() takes a Python function, a bound method or an object whose class defines "
                            f"__call__ in Python; got {type(fn).__name__}")
        self.fn = fn
        self._general_class = type(self)
        """The class this object goes back to when its fast path is removed (a subclass keeps its overrides)."""
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.recompile_limit = recompile_limit
        self.max_graph_nodes = max_graph_nodes
        self.code = fn.__code__
        self._signature: inspect.Signature | None = None
        # A call that passes exactly the positional parameters binds them by position, without the signature.
        self._simple_argcount = self.code.co_argcount if _plain_parameters(fn) else -1
        self.cache: dict[int, list[Segment]] = {}
        self.captures = 0
        self.recompiles = 0
        self.eager_fallback: str | None = None
        self.body_runs = 0
        self._events: list[CallEvent] = []
        self._fast_hit: Segment | None = None  # set by the fast path: the entry it ran (last_events is made lazily)
        self._fast = None
        """The generated fast path for the first offset's entries (``cache_hit_fast_path``), or None."""
        self._fast_path_source = ""
        self._fast_path_due = False
        """The first offset has an entry the fast path does not cover yet: it is made on the next call."""
        # (what depends on the code alone, made once per code object: see _code_facts)
        self._first, self._conditional_jumps, reason = _code_facts(self.code)
        self._cells = dict(zip(self.code.co_freevars, fn.__closure__ or ()))
        """The free variables' cells (the function object's own: they never change)."""
        self.recompile_log: list[str] = []
        self.dynamic_dims: set[tuple] = set()
        """(source, axis) of each size that automatic dynamic made symbolic."""
        self.dynamic_ints: set = set()
        """The source of each Python int that automatic dynamic made a size symbol (see ``dynamic_ints``)."""
        if dynamic not in (None, True, False):
            raise TypeError(f"dynamic must be None (automatic), True or False, got {dynamic!r}")
        self.nested: dict = {}  # function -> CompiledFunction, for Python functions called at graph breaks
        self.ways = WayChoice("" if backend == "auto" else f"backend={backend!r} was asked for by name")
        _wraps(self, fn)
        if reason is not None:  # not even one instruction could run at a break: all of it runs eagerly
            if fullgraph:
                raise GraphBreak(f"fullgraph=True but {fn.__qualname__} cannot be captured: {reason}")
            self.eager_fallback = reason
            logs.emit("graph_breaks", f"{fn.__qualname__} runs eagerly: {reason}")
            warn_eager_fallback(fn, reason)

    @property
    def signature(self) -> inspect.Signature:
        """``inspect.signature(fn)``, made when first needed: only a call that does not pass exactly the positional
        parameters binds its arguments with it."""
        if self._signature is None:
            self._signature = inspect.signature(self.fn)
        return self._signature

    # --- calling

    def __get__(self, obj, objtype=None):
        """As a method (``@graph_lab.compile`` on a ``def`` in a class body), bound to its object as a function
        would be; one compiled function serves every object, with guards on what it reads from ``self``."""
        return self if obj is None else types.MethodType(self, obj)

    @property
    def last_events(self) -> list[CallEvent]:
        """What happened at each offset during the last call (nothing, if it ran the function unchecked)."""
        if self.ways.unchecked:  # (way_choice.unchecked_call: no guards, no segment)
            return []
        if self._fast_hit is not None:
            self._events = [CallEvent(self._first, self._fast_hit, False)]
            self._fast_hit = None
        return self._events

    def __call__(self, *args, **kwargs):
        # Once a whole-function graph is cached, ``cache_hit_fast_path`` generates a ``__call__`` for this object alone
        # (guards, graph and result in one function; see _set_fast_path) on the call after the capture, the first
        # that may hit; until then, and after, this one.
        if self._fast_path_due:
            self._make_fast_path()
            if self._fast is not None:
                return self._fast(self, *args, **kwargs)
        return self._call(args, kwargs)

    @property
    def fast_path_source(self) -> str:
        """The source of the generated fast path, or why there is none (for explain())."""
        if self._fast_path_due:
            self._make_fast_path()
        return self._fast_path_source

    def _make_fast_path(self) -> None:
        """Generate the fast path for the first offset's entries (each capture there makes it due again). It is
        made when next needed, not at capture: a function called once, or recompiled on every call, never needs
        it."""
        self._set_fast_path(*make_fast_path(self, self.cache[self._first]))

    def _set_fast_path(self, call, source: str) -> None:
        """Install ``call`` (or None: remove the fast path) as this object's ``__call__``; Python looks special
        methods up on the type, so the object gets a subclass of its own holding it."""
        self._fast, self._fast_path_source = call, source
        self._fast_path_due = False
        call = self.ways.call_for(self, call, self._general_class.__call__)  # (timed while the way is measured)
        if call is None:
            if self.__class__ is not self._general_class:  # (as at the first capture: nothing to remove)
                self.__class__ = self._general_class
        else:
            self.__class__ = type(CompiledFunction.__name__, (self._general_class,),
                                  {"__call__": call, "__module__": __name__, "__qualname__": "CompiledFunction",
                                   "__doc__": CompiledFunction.__doc__})

    def _call(self, args: tuple, kwargs: dict):
        """The general path: every entry of each offset, captures, recompiles and graph breaks."""
        if self.eager_fallback is not None or called_in_another_capture(args, kwargs):
            return self.fn(*args, **kwargs)  # (inside grad or trace: the capture around records its ops)
        if not kwargs and len(args) == self._simple_argcount:
            local_vars = dict(zip(self.code.co_varnames, args))
        else:
            try:
                bound = self.signature.bind(*args, **kwargs)
            except TypeError:  # Python's own error for this call, raised before the body runs
                return self.fn(*args, **kwargs)
            bound.apply_defaults()
            local_vars = dict(bound.arguments)
        stack: list = []
        offset = self._first
        self._fast_hit = None
        self._events = []
        f_globals, closure = self.fn.__globals__, self.fn.__closure__ or ()
        budget = CallBudget()
        while True:
            inputs = FrameInputs(local_vars, stack, f_globals, closure)
            segment = self._lookup(offset, inputs)
            if segment is None:  # over the recompile limit, in the middle of a call: finish it for real
                return self._run_rest(offset, local_vars, stack)
            if self._events[-1].captured:
                budget.captured(offset)
            elif self.ways.eager and offset == self._first:  # (way_choice: this cache hit runs the function)
                return self.fn(*args, **kwargs)
            result, local_vars, stack = segment.execute(inputs)
            if segment.end == "return":
                return result
            offset, local_vars, stack, done, value = self._concrete_step(segment.break_offset, local_vars, stack)
            if done:
                return value
            spent = budget.spent()
            if spent and resumable(self.fn):  # (see resume.py)
                return finish_as_python(self, spent, offset, local_vars, stack, NULL)

    def _lookup(self, offset: int, inputs: FrameInputs) -> Segment | None:
        entries = self.cache.setdefault(offset, [])
        failed_guards = []
        for seg in entries:
            failed = first_failing(self, seg, inputs)
            if failed < 0:
                self._events.append(CallEvent(offset, seg, False))
                return seg
            failed_guards.append(seg.guards.guards[failed])
        reasons = [g.failure_reason(inputs) for g in failed_guards]  # (put in words only when no entry holds)
        if entries:
            if self.recompiles >= self.recompile_limit:
                self._give_up(reasons)
                return None
            self.recompiles += 1
            message = (f"recompiling {self.fn.__qualname__} at offset {offset}: " + "; ".join(reasons))
            if self.dynamic is None:
                notes = self._mark_dynamic(entries[-1], inputs) + \
                    mark_dynamic_ints(entries[-1].guards.guards, inputs, self.dynamic_ints)
                message += "".join(f"; {note}" for note in notes)
            self.recompile_log.append(message)
            logs.emit("recompiles", message)
        seg = self._capture(offset, inputs)
        entries.append(seg)
        self._events.append(CallEvent(offset, seg, True, reasons))
        if offset == self._first:  # the fast path misses the new entry: made again, with it, when next needed
            self._set_fast_path(None, "")
            self._fast_path_due = True
        return seg

    def _mark_dynamic(self, seg: Segment, inputs: FrameInputs) -> list[str]:
        """Automatic dynamic: each array size that differs from what ``seg`` was built for becomes symbolic in
        the next capture (a size of 0 or 1 stays specialized). Returns what changed, in words."""
        notes = []
        for g in seg.guards.guards:
            if g.kind not in ("array", "dims"):
                continue
            try:
                value = g.source.fetch(inputs)
            except Exception:
                continue
            shape = g.expected[0]
            if not isinstance(value, np.ndarray) or value.ndim != len(shape):
                continue
            for axis, (old, new) in enumerate(zip(shape, value.shape)):
                key = (g.source, axis)
                if old is None or old == new or key in self.dynamic_dims:
                    continue
                where = f"{g.source.describe()}.shape[{axis}]"
                if new < 2:
                    notes.append(f"{where} is {new}: sizes 0 and 1 are specialized, so it stays static")
                    continue
                self.dynamic_dims.add(key)
                notes.append(f"{where} changed from {old} to {new}, so it becomes dynamic: the new graph holds for "
                             f"any size >= 2 of it")
        return notes

    def _dynamic_axes(self, source, array) -> tuple:
        if self.dynamic is True:
            return tuple(range(array.ndim))
        if not self.dynamic_dims:
            return ()
        return tuple(axis for s, axis in self.dynamic_dims if s == source)

    def _give_up(self, reasons: list[str]) -> None:
        self.eager_fallback = "; ".join(reasons)
        self._set_fast_path(None, "the function runs eagerly (recompile limit)")
        warnings.warn(f"graph_lab.compile: {self.fn.__qualname__} hit recompile_limit={self.recompile_limit}; "
                      f"it runs eagerly from now on. Last reason: {self.eager_fallback}. Mark varying sizes "
                      f"dynamic or raise recompile_limit", RecompileLimitWarning, stacklevel=user_stacklevel())

    # --- capture

    def _capture(self, offset: int, inputs: FrameInputs) -> Segment:
        """Capture the segment at ``offset`` (``capture_loop``) and report it in the logs; with ``fullgraph``, a
        graph break is an error."""
        self.captures += 1
        seg = capture_segment(self, offset, inputs)
        if seg.end == "break":
            logs.emit("graph_breaks", f"graph break in {self.fn.__qualname__} at {seg.break_loc}: "
                                      f"{seg.break_reason} [{seg.break_instruction}]")
            if self.fullgraph:
                raise GraphBreak(f"fullgraph=True but capture of {self.fn.__qualname__} breaks at {seg.break_loc} "
                                 f"({seg.break_instruction}): {seg.break_reason}. {seg.break_hint}")
        if logs.on("graphs"):
            logs.emit("graphs", f"graph of {self.fn.__qualname__} from offset {offset}:\n{seg.graph}")
        if logs.on("guards"):
            for g in seg.guards.guards:
                logs.emit("guards", f"guard: {g.describe()}")
        return seg

    # --- running Python at a break

    def _concrete_step(self, offset: int, local_vars: dict, stack: list):
        return concrete_step(self, offset, local_vars, stack)

    def _compile_callee(self, fn) -> "CompiledFunction | None":
        """A Python function called by the instruction at a break runs compiled too (not the function itself)."""
        if fn is self.fn:
            return None
        if fn not in self.nested:
            self.nested[fn] = CompiledFunction(fn, self.backend, self.fullgraph, self.dynamic, self.recompile_limit,
                                               self.max_graph_nodes)
        return self.nested[fn]

    def _run_rest(self, offset, local_vars, stack):
        return run_rest(self, offset, local_vars, stack)


def _wraps(wrapper, fn: types.FunctionType) -> None:
    """``functools.update_wrapper(wrapper, fn)`` for a Python function ``fn``: a function has every attribute of
    ``WRAPPER_ASSIGNMENTS`` (reading ``__annotations__`` makes it an empty dict if it had none, as update_wrapper's
    ``getattr`` does), so none of update_wrapper's checks for a missing one is needed. The same attributes, set in
    the same order (a test compares the two)."""
    wrapper.__module__ = fn.__module__
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__annotations__ = fn.__annotations__
    if sys.version_info >= (3, 12):  # (PEP 695's type parameters, which update_wrapper copies since 3.12)
        wrapper.__type_params__ = fn.__type_params__
    if fn.__dict__:
        wrapper.__dict__.update(fn.__dict__)
    wrapper.__wrapped__ = fn


def _plain_parameters(fn) -> bool:
    """Whether every parameter of ``fn`` is positional-or-keyword (``def f(a, b=1)``: no ``/``, ``*``, ``*args``
    or ``**kwargs``), as ``inspect.signature(fn)`` would say. Read from the code object, which is what the
    signature of a plain function is made from; a function carrying ``__signature__`` or ``__wrapped__`` (which
    ``inspect.signature`` follows instead) is asked through inspect."""
    if "__signature__" in fn.__dict__ or "__wrapped__" in fn.__dict__:
        signature = inspect.signature(fn)
        return all(p.kind == p.POSITIONAL_OR_KEYWORD for p in signature.parameters.values())
    code = fn.__code__
    return (code.co_posonlyargcount == 0 and code.co_kwonlyargcount == 0
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS))


_cannot_interpret_cache = CodeCache()
_facts_cache = CodeCache()


def _code_facts(code: types.CodeType) -> tuple[int, dict, str | None]:
    """``(offset of the first instruction, conditional_jumps_of(code), _cannot_interpret_of(code))``: what
    ``CompiledFunction`` reads from its code, made once per code object."""
    facts = _facts_cache.get(code)
    if facts is None:
        facts = _facts_cache.put(code, (instructions_of(code)[0].offset, conditional_jumps_of(code),
                                        _cannot_interpret_of(code)))
    return facts


def _cannot_interpret_of(code: types.CodeType) -> str | None:
    """``cannot_interpret(code)``, asked once per code object (it depends on the code alone)."""
    try:
        return _cannot_interpret_cache[code]
    except KeyError:
        reason = _cannot_interpret_cache.put(code, cannot_interpret(code))
        return reason


def compile(fn: Callable[..., Any] | None = None, *, backend: str = "auto", fullgraph: bool = False,
            dynamic: bool | None = None, recompile_limit: int = 8, max_graph_nodes: int = MAX_GRAPH_NODES) -> Any:
    """Compile ``fn`` by symbolically running its bytecode (TorchDynamo-style); usable as a decorator.

    Each call checks the guards of the cached graphs; the first entry whose guards hold runs, otherwise the
    bytecode is captured again. Tensor operations become graphs; where Python must run (a branch on tensor data,
    ``print``, an append to a list the function did not create, a call it cannot see into) the graph breaks:
    that instruction runs as ordinary Python, in eager order, and capture resumes after it.

    Parameters:
        fn: a Python function, a bound method (``compile(model.forward)``) or an object whose class defines
            ``__call__`` in Python (``compile(model)``); for the last two the result is a bound method of the
            compiled function (its ``__func__``), so ``self`` is an argument like any other: what the capture
            reads from it is guarded. ``None`` (``@compile(fullgraph=True)``): returns a decorator.
        backend: the ``compile_graph`` backend each captured graph runs on: ``"auto"`` (fused kernels where a C
            compiler is found), ``"fused"``, ``"codegen"`` (every result bit for bit NumPy's) or ``"interpret"``.
        fullgraph: raise ``GraphBreak`` instead of breaking the graph.
        dynamic: which array sizes become symbols: ``None`` (automatic: static first, and a size whose change
            caused a recompile is symbolic from then on), ``True`` (every size >= 2 from the start), ``False``
            (never).
        recompile_limit: after this many recompiles the function warns once (``RecompileLimitWarning``) and
            runs eagerly.
        max_graph_nodes: a graph grows to at most this many nodes (a long Python loop unrolls into it); the
            next node breaks the graph there, with that reason, and capture goes on in a new graph, so that no
            graph takes longer to compile than the code it replaces takes to run.

    Returns:
        A ``CompiledFunction`` (a bound method of one for a method or callable object), called like ``fn``;
        its ``captures`` and ``recompile_log`` say what happened (``graph_lab.explain`` says why). With
        ``fn=None``, a decorator.

    Raises:
        TypeError: ``fn`` is not a Python function, method or callable object.
        GraphBreak: with ``fullgraph=True``, at the first graph break (when the compiled function is called).
    """
    if fn is None:
        return lambda f: compile(f, backend=backend, fullgraph=fullgraph, dynamic=dynamic,
                                 recompile_limit=recompile_limit, max_graph_nodes=max_graph_nodes)
    if type(fn) is types.FunctionType:  # (the usual case: the tests below all say so)
        return CompiledFunction(fn, backend, fullgraph, dynamic, recompile_limit, max_graph_nodes)
    options = (backend, fullgraph, dynamic, recompile_limit, max_graph_nodes)
    if inspect.ismethod(fn) and inspect.isfunction(fn.__func__):
        return types.MethodType(CompiledFunction(fn.__func__, *options), fn.__self__)
    call = getattr(type(fn), "__call__", None)
    if not inspect.isfunction(fn) and not isinstance(fn, type) and inspect.isfunction(call):
        return types.MethodType(CompiledFunction(call, *options), fn)
    return CompiledFunction(fn, *options)


