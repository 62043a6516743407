"""``compile(fn)``: capture a function's bytecode segment by segment, cache each segment under its guards, and
run cached segments on later calls, with the instruction at each graph break run as ordinary Python between them.
"""

from __future__ import annotations

import dis
import gc
import inspect
import sys
from time import perf_counter as now
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ...errors import GraphLabError
from ...ir.shape_env import in_use, using
from ...ir.source import user_stacklevel
from ... import logs
from .capture import CaptureContext
from .dynamic_ints import mark_dynamic_ints
from .concrete import ConcreteContext
from .fallback import warn_eager_fallback
from .frame import NULL, BreakGraph, CodeCache, Frame, Return, Unsupported, Var, instructions_of, step_error
from .mutation import donated_inputs
from .handlers import cannot_interpret
from .opcodes import JUMPS_IF_FALSE, JUMPS_IF_TRUE
from .fastpath import make_fast_path
from ...ops import Op
from ..tensor import Tensor
from ..dead_code_check import nothing_dead
from .recorder import MAX_GRAPH_NODES
from .resume import CallBudget, finish_as_python, resumable, resume_function
from .segment import EMPTY_STACK, PLAIN_TOP_TYPES, PLAIN_TOPS, RecipeMaker, Segment, backend_runner, uses_top_of
from .sources import ClosureSource, FrameInputs, LocalSource


class GraphBreak(GraphLabError):
    """With ``fullgraph=True``: capture had to stop. Names the cause, the line and the instruction."""


class RecompileLimitWarning(UserWarning):
    """A compiled function hit its recompile limit and runs eagerly from then on."""


@dataclass
class _Attempt:
    steps: int
    reason: str
    hint: str


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

    def __init__(self, fn, backend: str = "auto", fullgraph: bool = False, dynamic=None, recompile_limit: int = 8,
                 max_graph_nodes: int = MAX_GRAPH_NODES):
        if not isinstance(fn, types.FunctionType):  # (inspect.isfunction)
            raise TypeError(f"compile() takes a Python function, a bound method or an object whose class defines "
                            f"__call__ in Python; got {type(fn).__name__}")
        self.fn = fn
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.recompile_limit = recompile_limit
        self.max_graph_nodes = max_graph_nodes
        self.code = fn.__code__
        self._signature: inspect.Signature | None = None
        # Calls with exactly the positional arguments skip inspect's binding (it costs microseconds per call).
        self._simple_argcount = self.code.co_argcount if _plain_parameters(fn) else -1
        self.cache: dict[int, list[Segment]] = {}
        self.captures = 0
        self.recompiles = 0
        self.eager_fallback: str | None = None
        self.body_runs = 0
        self._events: list[CallEvent] = []
        self._fast_hit: Segment | None = None  # set by the fast path: the entry it ran (last_events is made lazily)
        self._fast = None
        """The generated fast path for the first offset's entries (``fastpath``), or None."""
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
        parameters binds its arguments with it, and making it costs as much as a short capture's guards."""
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
        """What happened at each offset during the last call."""
        if self._fast_hit is not None:
            self._events = [CallEvent(self._first, self._fast_hit, False)]
            self._fast_hit = None
        return self._events

    def __call__(self, *args, **kwargs):
        # Once a whole-function graph is cached, ``fastpath`` generates a ``__call__`` for this object alone
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
        it, and for a short function generating it costs as much as the capture."""
        self._set_fast_path(*make_fast_path(self, self.cache[self._first]))

    def _set_fast_path(self, call, source: str) -> None:
        """Install ``call`` (or None: remove the fast path) as this object's ``__call__``; Python looks special
        methods up on the type, so the object gets a subclass of its own holding it."""
        self._fast, self._fast_path_source = call, source
        self._fast_path_due = False
        if call is None:
            if self.__class__ is not CompiledFunction:  # (as at the first capture: nothing to remove)
                self.__class__ = CompiledFunction
        else:
            self.__class__ = type(CompiledFunction.__name__, (CompiledFunction,),
                                  {"__call__": call, "__module__": __name__, "__qualname__": "CompiledFunction",
                                   "__doc__": CompiledFunction.__doc__})

    def _call(self, args: tuple, kwargs: dict):
        """The general path: every entry of each offset, captures, recompiles and graph breaks."""
        if self.eager_fallback is not None:
            return self.fn(*args, **kwargs)
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
        reasons = []
        for seg in entries:
            failed = seg.check(inputs)
            if failed < 0:
                self._events.append(CallEvent(offset, seg, False))
                return seg
            guard = seg.guards.guards[failed]
            try:
                value = guard.source.fetch(inputs)
                reasons.append(guard.explain_failure(value))
            except Exception as e:  # the source itself is gone (a missing attribute, a shorter list)
                reasons.append(f"{guard.source.describe()} could not be read ({type(e).__name__})")
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
        started = now()
        self.captures += 1
        # As trace does: a capture makes many objects that all live on (see gc_paused, written out here).
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            try:
                seg = self._capture_once(offset, inputs, None)
            except _Restart as r:
                seg = self._capture_once(offset, inputs, r.attempt)
            seg.compile_seconds = now() - started
            seg.check = _guard_function_on_first_use(seg)
            seg.runner = backend_runner(seg.graph, self.backend, seg.symbolic, donated_inputs(seg))
            seg.backend_seconds = now() - started - seg.compile_seconds
        finally:
            if gc_was_enabled:
                gc.enable()
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

    def _capture_once(self, offset: int, inputs: FrameInputs, stop: "_Attempt | None") -> Segment:
        """Capture from ``offset`` with the state ``inputs``: run the frame's instructions one by one until it
        returns, or up to the instruction ``stop`` says to break at. Each step runs the instruction's handler as
        ``Frame.step`` would (inlined: the loop runs thousands of steps) and logs what it did."""
        static = self.dynamic is False or (self.dynamic is None and not self.dynamic_dims)  # every size static
        ctx = CaptureContext(self.fn.__globals__, None if static else self._dynamic_axes)
        ctx.dynamic_ints = self.dynamic_ints
        ctx.recorder.max_nodes = self.max_graph_nodes
        cells, closure_sources = {}, {}
        code = self.code
        if code.co_freevars:
            for i, (name, cell) in enumerate(zip(code.co_freevars, self.fn.__closure__ or ())):
                cells[name] = cell
                closure_sources[name] = ClosureSource(i, name)
        frame = Frame(code, self.fn.__globals__, cells, {}, ctx, closure_sources)
        frame.ip = frame.index_of[offset]  # (frame.jump(offset))
        ctx.frame = frame  # guards on the entry state point at the line where capture starts
        tables = _capture_cache.get(code)  # (what depends on the code alone: see _capture_tables)
        if tables is None:
            tables = _capture_cache.put(code, _capture_tables(code))
        local_sources, tops = tables
        local_vars = frame.locals
        for name, v in inputs.locals.items():
            source = local_sources.get(name)
            local_vars[name] = ctx.wrap(v, source if source is not None else LocalSource(name))
        if inputs.stack:  # (empty where a call starts)
            frame.stack = [ctx.wrap(v, ctx.stack_source(i, len(inputs.stack))) if v is not NULL else Var(NULL)
                           for i, v in enumerate(inputs.stack)]

        # The capture loop.
        steps = 0
        log: list[tuple] = []
        append = log.append
        instructions, handlers = frame.instructions, frame.handlers
        stop_at = stop.steps if stop is not None else -1
        graph = ctx.graph
        # The shape env that rules consult outside this capture. A step leaves it as it found it (``using``
        # restores it), so comparing with it here is ``in_use() is ctx.shape_env`` without asking on every step.
        outside = in_use()
        while True:
            ip = frame.ip
            ins = instructions[ip]
            if steps == stop_at:
                nodes = list(graph.nodes)  # (before _finish adds outputs and removes dead code)
                seg = self._finish(ctx, frame, offset, "break", stop=stop, ins=ins)
                seg.step_log, seg.step_nodes = log + [(ins, "graph break: " + stop.reason)], nodes
                return seg
            n_nodes = len(graph.nodes)
            frame.ip = ip + 1
            try:
                if ctx.shape_env is outside:  # (usually both None: nothing to set for this step)
                    result = handlers[ip](frame, ins)
                else:
                    with using(ctx.shape_env):  # shape rules consult the capture's symbolic sizes
                        result = handlers[ip](frame, ins)
            except (BreakGraph, Unsupported) as e:
                if stop is not None:
                    raise
                raise _Restart(_Attempt(steps, str(e), getattr(e, "hint", ""))) from None
            except Exception as e:  # as Frame.step: eager Python raises it too, so it runs for real, at a break
                brk = step_error(e)
                if stop is not None:
                    raise brk from None
                raise _Restart(_Attempt(steps, brk.reason, brk.hint)) from None
            # (ctx.frame is this frame again: a call inlined by the step set it back when it returned)
            steps += 1
            # What the step did, to be put in words only if someone asks (Segment.steps): where its nodes start
            # in the graph, and what it left on top of the stack (``top_of_stack``, written out here: the same
            # cases, the commonest first), where the words may depend on it.
            if tops[ip]:
                stack = frame.stack
                if stack:
                    top = stack[-1].value
                    if top is NULL and len(stack) > 1:  # (3.13 pushes a call's NULL above the callable)
                        top = stack[-2].value
                    kind = type(top)
                    if kind is Tensor:
                        top = top._value.type  # (its ``type``)
                    elif kind not in PLAIN_TOPS:
                        top = top if isinstance(top, PLAIN_TOP_TYPES) else \
                            top.type if isinstance(top, Tensor) else kind
                else:
                    top = EMPTY_STACK
            else:
                top = None
            append((ins, n_nodes, top))
            if result is not None and type(result) is Return:
                nodes = list(graph.nodes)  # (before _finish adds outputs and removes dead code)
                seg = self._finish(ctx, frame, offset, "return", result=result.var)
                seg.step_log, seg.step_nodes = log, nodes
                return seg

    def _finish(self, ctx, frame, offset, end, stop=None, ins=None, result=None) -> Segment:
        value = result.value if result is not None else None
        writebacks = ()
        if end == "return" and type(value) is Tensor and value._view is None and value._maybe_alias is None and \
                value._version == value._storage.version and value._value.node.op != Op.INPUT and not ctx.writes:
            # The commonest end, a tensor the graph computed returned: what RecipeMaker gives it (its freshness
            # checked, as ``RecipeMaker.tensor`` checks it; not a view, not an input), without making one. After a
            # return nothing of the frame is used again.
            local_recipes, stack_recipes, result_recipe = {}, [], ("out", 0)
            ctx.graph.outputs = [value._value]
        else:
            maker = RecipeMaker(ctx)
            live = end == "break"  # after a return nothing of the frame is used again: no graph outputs for it
            local_recipes = {name: maker.var(v) for name, v in frame.locals.items()} if live else {}
            stack_recipes = [maker.var(v) for v in frame.stack] if live else []
            result_recipe = maker.var(result) if result is not None else None
            if ctx.writes:
                writebacks = ctx.writes.finish(maker)
            ctx.graph.outputs = list(maker.outputs)
        ctx.graph.name = self.fn.__name__
        if ctx.shape_env is not None:
            ctx.size_guard()
        # (No ``ctx.guards.merge_lower_bounds(counts=(len, iterators.items_left))``: the set was made with these counts, so it
        # merged the lower bounds as they came; see GuardSet.merge_lower_bounds.)
        if not nothing_dead(ctx.graph):  # (usually nothing is: told in one pass, without remove_dead_code's walks)
            ctx.graph.remove_dead_code()
        # The graph's inputs are those of ``ctx.input_sources``, in its order: capture adds each input to the
        # graph and to it together, and removing dead code keeps every input. A size symbol is declared with a
        # ShapeEnv, made for the first: the graph is symbolic exactly when the capture has one.
        sources = ctx.input_sources
        seg = Segment(offset, ctx.graph, list(sources.values()), ctx.guards, local_recipes, stack_recipes, end,
                      result_recipe, input_names=list(sources), symbolic=ctx.shape_env is not None)
        if writebacks:
            seg.writebacks = tuple(writebacks)
        if end == "break":
            seg.break_offset = ins.offset
            seg.break_reason, seg.break_hint = stop.reason, stop.hint
            seg.break_loc = frame.loc()
            seg.break_instruction = f"{ins.opname} {ins.argrepr}".strip()
        return seg

    # --- running Python at a break

    def _concrete_step(self, offset: int, local_vars: dict, stack: list):
        """Run the one instruction at ``offset`` for real. Returns (next offset, locals, stack, done, value)."""
        self.body_runs += 1
        jump = self._conditional_jumps.get(offset)
        if jump is not None and stack and type(stack[-1]) in _PLAIN_TRUTH:
            # ``if tensor_expr:``, the most common break: the truth of an array or a number has no side effect
            # and reads nothing else, so the jump is decided here without a Frame. (When bool() raises, the Frame
            # below raises it again, and looks for the function's own exception handler.)
            jump_if, target, fall_through = jump
            try:
                taken = bool(stack[-1]) is jump_if
            except Exception:
                pass
            else:
                return (target if taken else fall_through), local_vars, stack[:-1], False, None
        frame = self._concrete_frame(offset, local_vars, stack)
        frame.ctx.compile_callee = self._compile_callee
        try:
            result = frame.step()
        except Exception as exc:
            if not self._to_handler(frame, offset, exc):
                raise
            result = None
        if isinstance(result, Return):
            return None, None, None, True, result.var.value
        next_offset = frame.instructions[frame.ip].offset
        return (next_offset, {k: v.value for k, v in frame.locals.items()}, [v.value for v in frame.stack],
                False, None)

    def _compile_callee(self, fn) -> "CompiledFunction | None":
        """A Python function called by the instruction at a break runs compiled too (not the function itself)."""
        if fn is self.fn:
            return None
        if fn not in self.nested:
            self.nested[fn] = CompiledFunction(fn, self.backend, self.fullgraph, self.dynamic, self.recompile_limit,
                                               self.max_graph_nodes)
        return self.nested[fn]

    def _concrete_frame(self, offset, local_vars, stack) -> Frame:
        cells = dict(self._cells)  # (a copy: the frame is the instruction's to change)
        frame = Frame(self.code, self.fn.__globals__, cells, {k: Var(v) for k, v in local_vars.items()},
                      ConcreteContext())
        frame.stack = [Var(v) for v in stack]
        frame.jump(offset)
        return frame

    def _to_handler(self, frame: Frame, offset: int, exc: BaseException) -> bool:
        for entry in dis.Bytecode(self.code).exception_entries:
            if entry.start <= offset < entry.end:
                del frame.stack[entry.depth:]
                if entry.lasti:
                    frame.push(Var(offset))
                frame.push(Var(exc))
                frame.jump(entry.target)
                return True
        return False

    def _run_rest(self, offset, local_vars, stack):
        """Finish a call whose next segment may not be captured (recompile limit): as plain Python from there
        (``resume``), or for a generator's frame, every instruction by this interpreter, for real."""
        if resumable(self.fn):
            return resume_function(self.fn, offset, local_vars, stack, NULL)()
        frame = self._concrete_frame(offset, local_vars, stack)
        while True:
            at = frame.instructions[frame.ip].offset
            try:
                result = frame.step()
            except Exception as exc:
                if not self._to_handler(frame, at, exc):
                    raise
                continue
            if isinstance(result, Return):
                return result.var.value



def _wraps(wrapper, fn: types.FunctionType) -> None:
    """``functools.update_wrapper(wrapper, fn)`` for a Python function ``fn``, written out: a function has every
    attribute of ``WRAPPER_ASSIGNMENTS`` (reading ``__annotations__`` makes it an empty dict if it had none, as
    update_wrapper's ``getattr`` does), so none of update_wrapper's checks for a missing one is needed, and each
    compile() makes one of these. The same attributes, set in the same order (a test compares the two)."""
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


_PLAIN_TRUTH = (np.ndarray, np.bool_, np.float64, np.float32, np.int64, np.int32, bool, int, float)
"""Types whose bool() only looks at the value: a conditional jump on one is decided by ``_concrete_step`` itself."""


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


_capture_cache = CodeCache()


def _capture_tables(code: types.CodeType) -> tuple[dict, list[bool]]:
    """What a capture of ``code`` reads from the code alone: a LocalSource for each local variable's name (sources
    are immutable values: one object serves every capture), and ``uses_top_of(code)``."""
    names = code.co_varnames + code.co_cellvars
    return {name: LocalSource(name) for name in names}, uses_top_of(code)


_jumps_cache = CodeCache()
_cannot_interpret_cache = CodeCache()
_facts_cache = CodeCache()


def _code_facts(code: types.CodeType) -> tuple[int, dict, str | None]:
    """``(offset of the first instruction, conditional_jumps_of(code), _cannot_interpret_of(code))``: what
    ``CompiledFunction`` reads from its code, looked up once per compile() rather than three times."""
    facts = _facts_cache.get(code)
    if facts is None:
        facts = _facts_cache.put(code, (instructions_of(code)[0].offset, conditional_jumps_of(code),
                                        _cannot_interpret_of(code)))
    return facts


def conditional_jumps_of(code: types.CodeType) -> dict[int, tuple[bool, int, int]]:
    """``_conditional_jumps(code)``, made once per code object (as ``instructions_of``): every compile() of the
    same function asks again, and nothing writes to the map."""
    jumps = _jumps_cache.get(code)
    if jumps is None:
        jumps = _jumps_cache.put(code, _conditional_jumps(code))
    return jumps


def _cannot_interpret_of(code: types.CodeType) -> str | None:
    """``cannot_interpret(code)``, asked once per code object (it depends on the code alone)."""
    try:
        return _cannot_interpret_cache[code]
    except KeyError:
        reason = _cannot_interpret_cache.put(code, cannot_interpret(code))
        return reason


def _conditional_jumps(code: types.CodeType) -> dict[int, tuple[bool, int, int]]:
    """offset -> (jump when the value's truth is this, target offset, offset after it) for each
    ``POP_JUMP_*IF_TRUE/FALSE`` of ``code``, the instructions of ``if tensor_expr:`` (handlers.py runs them
    the same way: pop the value, jump on its truth)."""
    instructions = instructions_of(code)
    jumps = {}
    for ins, after in zip(instructions, instructions[1:]):
        if ins.opname in JUMPS_IF_TRUE:
            jumps[ins.offset] = (True, ins.argval, after.offset)
        elif ins.opname in JUMPS_IF_FALSE:
            jumps[ins.offset] = (False, ins.argval, after.offset)
    return jumps


def _guard_function_on_first_use(seg: Segment):
    """A stand-in for ``seg``'s guard function that generates it when first called, and from then on is replaced
    by it. A whole-function graph may never need it (its cache hits take the fast path, which checks the guards
    itself), and for a long program it is the largest piece of generated code."""
    def check(inputs: FrameInputs) -> int:
        seg.check = seg.guards.compile()
        return seg.check(inputs)
    return check


class _Restart(Exception):
    def __init__(self, attempt: _Attempt):
        self.attempt = attempt


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


