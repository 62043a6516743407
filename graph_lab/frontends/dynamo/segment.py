"""A segment: the graph captured from one bytecode offset up to a graph break or a return.

At the end of a capture, every live value of the frame (locals, stack, the returned value) gets a *recipe*
that rebuilds it on later calls: a graph output, a view of another rebuilt value, an object read again through
its source, a container rebuilt from recipes, or a constant. ``Segment.execute`` checks nothing (the guards were
checked before): it fetches the graph's inputs, runs the graph, and rebuilds the frame.
"""

from __future__ import annotations

import time
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...backends.compiled import compile_captured
from ...backends.prepared import prepare
from ...ir.graph import Graph, Value
from ...ir.sizes import bind_attrs, bind_sizes, is_symbolic_graph
from ...ir.symbolic import SymbolicValue
from ...ir.types import TensorType
from ...ops import Op, opdef
from ...ops.indexing import fill_key
from ..tensor import Tensor
from . import loop_index
from .frame import NULL, CodeCache, IterState, Var, instructions_of
from .guard_set import Guard, GuardSet
from .iterators import LazyIter
from .masked import Selection
from .returned_scalars import ReturnedScalar
from .mutation import write_back
from .source_reads import input_reader
from .sources import DerivedSource, FrameInputs, LocalSource, Source


@dataclass(init=False)
class Segment:
    start: int
    """Bytecode offset where capture started."""
    graph: Graph
    """The captured graph (its inputs are named by their sources)."""
    input_sources: list[Source]
    """Source of each graph input, in graph-input order."""
    guards: Any
    """The GuardSet that must hold for the segment's state."""
    local_recipes: dict[str, tuple]
    stack_recipes: list[tuple]
    end: str
    """'return' or 'break'."""
    result_recipe: tuple | None = None
    """For 'return': the returned value's recipe."""
    break_offset: int | None = None
    """For 'break': offset of the instruction that runs as ordinary Python."""
    break_reason: str = ""
    break_hint: str = ""
    break_loc: Any = None
    break_instruction: str = ""
    compile_seconds: float = 0.0
    """How long capture took: interpreting the bytecode into the graph and its guards."""
    backend_seconds: float = 0.0
    """How long ``compile_graph`` took to make the graph runnable (passes, code generation, kernels)."""
    check: Any = None
    """The compiled guard function: check(FrameInputs) -> index of the first failing guard, or -1."""
    runner: Any = None
    step_log: list = field(default_factory=list)
    """What capture did at each instruction: ``(instruction, number of nodes of the graph before it, what
    top_of_stack said after it)``, the last None where ``describe_step`` does not need it (``uses_top``); or
    ``(instruction, text)`` for the instruction at a break (see ``steps``)."""
    step_nodes: list = field(default_factory=list)
    """The graph's nodes as capture left them, dead code included: the nodes step i recorded are those from its
    count to the next step's."""
    input_names: list | None = None
    """The names of the graph's inputs, in order (``graph.input_names``, as capture knew them)."""
    symbolic: bool | None = None
    """Whether the graph's sizes are symbolic (``is_symbolic_graph(graph)``, as capture knew it)."""
    writebacks: tuple = ()
    """``(source, output index)`` of each array of the caller's that the graph writes into: the output is
    copied into it when the graph has run (``mutation.write_back``)."""

    def __init__(self, start: int, graph: Graph, input_sources: list, guards, local_recipes: dict,
                 stack_recipes: list, end: str, result_recipe: tuple | None = None, *, input_names: list | None = None,
                 symbolic: bool | None = None):
        # (Only the fields a capture knows here: one left at its default is read from the class, as dataclass puts
        # the defaults there. A break's
        # fields are set by ``capture_loop.finish_segment``, the times and the runner by ``capture_segment``.)
        self.start = start
        self.graph = graph
        self.input_sources = input_sources
        self.guards = guards
        self.local_recipes = local_recipes
        self.stack_recipes = stack_recipes
        self.end = end
        self.result_recipe = result_recipe
        self.input_names = input_names
        self.symbolic = symbolic
        self.step_log = []  # (the two fields made by a factory: they have no default on the class)
        self.step_nodes = []

    @property
    def steps(self) -> list[tuple]:
        """(offset, opname, argrepr, what capture did) for each instruction captured, put in words on first use
        (capture runs thousands of instructions; few segments are ever explained)."""
        if "_steps" not in self.__dict__:
            log, nodes, steps = self.step_log, self.step_nodes, []
            for i, entry in enumerate(log):
                ins = entry[0]
                if len(entry) == 2:
                    what = entry[1]
                else:
                    end = log[i + 1][1] if i + 1 < len(log) and len(log[i + 1]) == 3 else len(nodes)
                    what = describe_step(ins, nodes[entry[1]:end], entry[2])
                steps.append((ins.offset, ins.opname, ins.argrepr, what))
            self._steps = steps
        return self._steps

    def _sizes_of(self, inputs: FrameInputs):
        """A function giving the size symbols' values on this call (bound from the inputs' shapes by name), for
        the views whose attributes hold them: asked only by a recipe that needs them."""
        names = self.input_names if self.input_names is not None else self.graph.input_names
        return lambda: bind_sizes(self.graph, {name: s.fetch(inputs) for name, s in zip(names, self.input_sources)})[0]

    def execute(self, inputs: FrameInputs):
        plan = self.__dict__.get("_plan")
        if plan is None or plan.runner is not self.runner:
            # The graph and recipes do not change after capture: work out once how to run them (again only if
            # someone puts another runner in, as the equivalence checker's tests do).
            plan = self._plan = ExecutePlan(self)
        if plan.symbolic and plan.direct is None:
            outs = self.runner(dict(zip(plan.names, plan.read_all(inputs)))) if self.graph.outputs else []
            rebuild = Rebuilder(inputs, outs, self._sizes_of(inputs))
        else:
            if plan.direct is not None:  # (for a symbolic graph too: the guards checked its sizes)
                try:
                    outs = plan.direct(plan.read(inputs), plan.params, plan.consts)
                except Exception as e:
                    raise plan.named_error(e)
            elif plan.run is not None:
                outs = plan.run(plan.read(inputs), plan.params)
            elif self.graph.outputs:
                outs = self.runner(dict(zip(plan.names, plan.read_all(inputs))))
            else:
                outs = []
            rebuild = Rebuilder(inputs, outs, self._sizes_of(inputs)) if plan.symbolic else None
        if self.writebacks:
            write_back(self.writebacks, inputs, outs)
        if self.end == "return":
            if plan.result_out is not None and type(outs[plan.result_out]) is np.ndarray:
                return outs[plan.result_out], None, None  # (what escape() returns for an array)
            return escape((rebuild or Rebuilder(inputs, outs))(self.result_recipe)), None, None
        local_vars = {}
        for name, kind, arg in plan.locals:
            if kind == "out":
                local_vars[name] = outs[arg]
            elif kind == "local":  # (unbound in this call: it stays unbound, see _unbound)
                if arg.name in inputs.locals:
                    local_vars[name] = inputs.locals[arg.name]
            else:
                if rebuild is None:
                    rebuild = Rebuilder(inputs, outs)
                if not _unbound(arg, inputs):
                    local_vars[name] = rebuild(arg)
        if plan.stack_outs is not None:
            stack = [outs[k] for k in plan.stack_outs]
        else:
            if rebuild is None:
                rebuild = Rebuilder(inputs, outs)
            stack = [rebuild(r) for r in self.stack_recipes]
        return None, local_vars, stack


class ExecutePlan:
    """What ``Segment.execute`` would otherwise work out on every call, worked out once per segment: the order
    of the graph's inputs, the compiled graph's own entry point, and which recipes are a plain graph output or a
    local passed through (most of them), so that only the others go through a ``Rebuilder``."""

    def __init__(self, seg: Segment):
        self.runner = seg.runner
        """The runner this plan was made for."""
        self.names = seg.input_names if seg.input_names is not None else seg.graph.input_names
        self.symbolic = seg.symbolic if seg.symbolic is not None else is_symbolic_graph(seg.graph)
        self.run = None
        """``run(inputs in the compiled graph's order, params)``: the compiled graph without ``run``'s dict."""
        self.direct = self.consts = self.named_error = None
        """``direct(inputs, params, consts)``: codegen's function itself, when it is the whole run (as the fast
        path of cache_hit_fast_path.py calls it); its errors are named as ``run`` names them, by ``named_error``."""
        self.ordered: list[Source] = []
        self.params = None
        compiled = getattr(seg.runner, "__self__", None)
        if seg.graph.outputs and compiled is not None and hasattr(compiled, "_run") and \
                getattr(seg.runner, "__func__", None) is type(compiled).run:
            if compiled.input_names == self.names:  # (the usual: the passes kept the graph's inputs in order)
                self.ordered = list(seg.input_sources)
            else:
                by_name = dict(zip(self.names, seg.input_sources))
                self.ordered = [by_name[name] for name in compiled.input_names]
            self.run, self.params = compiled._run, compiled._params
            if getattr(compiled, "direct", None) is not None:
                (self.direct, self.consts), self.named_error = compiled.direct, compiled._named_error
        self.read = input_reader(self.ordered)
        """The values of ``ordered`` for a call's ``FrameInputs``, as a tuple (``source_reads.py``)."""
        self.read_all = input_reader(seg.input_sources)
        """The values of every graph input, in the graph's order."""
        self.locals: list[tuple] = []
        """(name, kind, arg), in the frame's order: ("out", index), ("local", LocalSource), or ("recipe", recipe)
        for anything a ``Rebuilder`` follows."""
        for name, recipe in seg.local_recipes.items():
            if recipe[0] == "out":
                self.locals.append((name, "out", recipe[1]))
            elif recipe[0] == "source" and type(recipe[1]) is LocalSource:
                self.locals.append((name, "local", recipe[1]))
            else:
                self.locals.append((name, "recipe", recipe))
        result = seg.result_recipe
        self.result_out = result[1] if result is not None and result[0] == "out" else None
        """The graph output returned, when the result is one."""
        outs_only = all(r[0] == "out" for r in seg.stack_recipes)
        self.stack_outs = [r[1] for r in seg.stack_recipes] if outs_only else None
        """The graph output of each stack slot, when every one is a graph output (the usual ``if tensor:``)."""


MOVES = frozenset({"NOP", "RESUME", "PRECALL", "PUSH_NULL", "KW_NAMES", "EXTENDED_ARG", "CACHE", "LOAD_FAST",
                   "LOAD_FAST_CHECK", "LOAD_CONST", "STORE_FAST", "POP_TOP", "COPY", "SWAP"})
"""Instructions that move values on the stack and between locals (or do nothing), never looking at them."""


def guards_needed(seg: Segment, log: list):
    """The guards ``seg`` needs: its own, or none at all when it breaks after instructions that only moved values
    and passes every value on as it was (no graph output, each recipe a source or a constant). Such a segment (the
    resume after a break, stopped again at once by ``ids.append(token)``) computes nothing and holds for any
    state; the guards its capture added when it wrapped the values (an array's shape, a size symbol) would only
    make it capture again when they change."""
    recipes = list(seg.local_recipes.values()) + list(seg.stack_recipes)
    if seg.graph.outputs or seg.writebacks or any(entry[0].opname not in MOVES for entry in log) or \
            not all(_passes_on(r) for r in recipes):
        return seg.guards
    return GuardSet()


def _passes_on(recipe: tuple) -> bool:
    """The value read again as it was (a loop's iterator not advanced: an IterState at the same place)."""
    if recipe[0] == "ref":
        recipe = recipe[1][recipe[2]]
        return recipe[0] == "advance" and recipe[2] == 0
    return recipe[0] in ("source", "const", "null")


EMPTY_STACK = object()
"""In a step log: the stack was empty after the step."""


def top_of_stack(stack: list):
    """What ``describe_step`` needs to know of the value on top of the stack, without keeping the value itself
    alive (a stand-in tensor holds on to its whole capture): a stand-in's type, a Python scalar, or the type of
    anything else (below a NULL: the callable); EMPTY_STACK when the stack is empty."""
    if not stack:
        return EMPTY_STACK
    value = stack[-1].value
    if value is NULL and len(stack) > 1:  # 3.13 pushes a call's NULL above the callable: what is called
        value = stack[-2].value
    if isinstance(value, Tensor):
        return value.type
    if isinstance(value, PLAIN_TOP_TYPES):
        return value
    return type(value)


PLAIN_TOP_TYPES = (int, float, str, bool, type(None))
"""Values ``top_of_stack`` keeps as they are (small, and shown as they are)."""
PLAIN_TOPS = frozenset(PLAIN_TOP_TYPES)


_WORDED_BY_NAME = ("STORE", "RETURN_VALUE", "RETURN_CONST", "POP_JUMP", "JUMP", "FOR_ITER", "PRECALL", "RESUME",
                   "NOP", "PUSH_NULL", "KW_NAMES", "TO_BOOL")
"""Prefixes of the opnames that ``describe_step`` puts in words without the top of the stack."""


def uses_top(opname: str) -> bool:
    """Whether ``describe_step`` may read what was on top of the stack after an instruction (capture only asks
    ``top_of_stack`` where it does)."""
    return not opname.startswith(_WORDED_BY_NAME)


_uses_top_cache = CodeCache()


def uses_top_of(code: types.CodeType) -> list[bool]:
    """``uses_top`` of each instruction of ``instructions_of(code)`` (made once per code object)."""
    flags = _uses_top_cache.get(code)
    if flags is None:
        flags = _uses_top_cache.put(code, [uses_top(ins.opname) for ins in instructions_of(code)])
    return flags


def describe_step(ins, new_nodes, top) -> str:
    """What one captured instruction did, in a few words (for lectures and explain()): ``new_nodes`` are the
    nodes it recorded, ``top`` what ``top_of_stack`` said of the stack after it."""
    ops = [str(n.op) for n in new_nodes if n.op not in ("input", "const", "param")]
    if ops:
        return "recorded " + ", ".join(ops)
    if any(n.op == "input" for n in new_nodes):
        return "new graph input"
    if ins.opname.startswith("STORE"):
        return f"Python binding {ins.argval}"
    if ins.opname in ("RETURN_VALUE", "RETURN_CONST"):
        return "return"
    if ins.opname.startswith(("POP_JUMP", "JUMP", "FOR_ITER")):
        return "Python control flow, decided at capture"
    if ins.opname in ("PRECALL", "RESUME", "NOP", "PUSH_NULL", "KW_NAMES", "TO_BOOL"):
        return "stack bookkeeping"
    if top is EMPTY_STACK:
        return "stack bookkeeping"
    if isinstance(top, TensorType):
        return f"tensor {top}"
    text = top.__name__ if isinstance(top, type) else repr(top)
    return f"Python value {text[:24]}"


def _unbound(recipe: tuple, inputs: FrameInputs) -> bool:
    """A local passed through unchanged that this call has not bound (the capture saw it bound on another path,
    ``for i in ...`` inside an ``if`` not taken now): it stays unbound, as in eager code."""
    return recipe[0] == "source" and isinstance(recipe[1], LocalSource) and recipe[1].name not in inputs.locals


def escape(value, seen=None):
    """A returned value as the caller may see it: an iterator the function made (a generator expression,
    ``zip(...)``) becomes a real generator over its remaining items, never graph_lab's IterState. Lists and
    dicts are fixed in place, so that a list both returned and stored elsewhere stays one list."""
    if isinstance(value, IterState):
        return (x for x in [v.value for v in value.pending()])
    seen = set() if seen is None else seen
    if id(value) in seen or type(value) not in (list, tuple, dict):
        return value
    seen.add(id(value))
    if type(value) is tuple:
        items = [escape(x, seen) for x in value]
        return value if all(a is b for a, b in zip(items, value)) else tuple(items)
    keys = range(len(value)) if type(value) is list else list(value)
    for k in keys:
        value[k] = escape(value[k], seen)
    return value


def interpret_runner(graph: Graph):
    """Run a graph with the reference interpreter (prepared once), returning its outputs in order."""
    return prepare(graph)


def backend_runner(graph: Graph, backend: str, symbolic: bool | None = None, donated: dict | None = None):
    """Run a graph with ``compile(backend=...)``'s backend: ``auto`` (fused where a C compiler is found, which
    leaves small graphs to codegen), ``fused``, ``codegen`` or ``interpret``. Same calling convention.
    (``symbolic``: ``is_symbolic_graph(graph)``, when the caller knows it; ``donated``: the inputs written back,
    see ``mutation.donated_inputs``.)"""
    if backend == "interpret":
        return interpret_runner(graph)
    # (compile_graph, without a copy of a graph left as it is)
    return compile_captured(graph, backend=backend, passes="exact", verify=False, symbolic=symbolic,
                            donated=donated).run


class RecipeMaker:
    """Turns the live values at the end of a capture into recipes, adding graph outputs as needed.

    A mutable object (a list, a dict, a cell, a function made during capture...) gets one slot in a table
    shared by all recipes of the segment, so that two live references to it are rebuilt as one object."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.outputs: list[Value] = []
        self._out_index: dict[Value, int] = {}
        self.shared: list[tuple | None] = []
        self._slots: dict[int, int] = {}

    def var(self, var: Var) -> tuple:
        if type(var.value) is Tensor:  # (what ``value`` does with it: the commonest case, a returned tensor)
            return self.tensor(var.value)
        if var.source is not None and not isinstance(var.value, Tensor):
            if isinstance(var.source, DerivedSource):  # computed again on each call: that must succeed
                self.ctx.guards.add(Guard("type", var.source, type(var.value), None))
                if type(var.value) is list:  # (a slice of a list, new on each call: one object wherever it is)
                    slot = self._slots.setdefault(id(var.value), len(self.shared))
                    if slot == len(self.shared):
                        self.shared.append(("source", var.source))
                    return ("ref", self.shared, slot)
            return ("source", var.source)
        return self.value(var.value)

    def value(self, x) -> tuple:
        if isinstance(x, Tensor):
            return self.tensor(x)
        if isinstance(x, ReturnedScalar):  # ``return int(t)``: converted when the graph has run
            return ("convert", x.convert, self.tensor(x.tensor))
        if isinstance(x, Selection):  # x[mask], made for real at a break: NumPy's copy of the selected elements
            return ("select", self.tensor(x.full), self.tensor(x.mask))
        if isinstance(x, SymbolicValue):  # a size (T, d // 2): computed by the graph on each call
            return self.tensor(self.ctx.recorder.size_tensor(x.expr))
        source = self.ctx.sourced.get(id(x))
        if source is not None:
            return ("source", source)
        if x is NULL:
            return ("null",)
        if type(x) is slice and any(isinstance(p, (Tensor, SymbolicValue)) for p in (x.start, x.stop, x.step)):
            # 3.11's BUILD_SLICE of bounds the graph computes (``v[p[0]:p[1]]``), on the stack at a break
            return ("slice", [self.value(x.start), self.value(x.stop), self.value(x.step)])
        if isinstance(x, tuple):
            tracked = self.ctx.containers.tracked(x)
            items = [self.var(v) for v in tracked] if tracked is not None else [self.value(v) for v in x]
            return ("namedtuple", type(x), items) if hasattr(type(x), "_fields") else ("tuple", items)
        if isinstance(x, (list, dict, set, IterState, np.ndarray, types.CellType, types.FunctionType,
                          types.MethodType, types.BuiltinMethodType)) or id(x) in self.ctx.dict_views:
            if id(x) not in self._slots:
                self._slots[id(x)] = len(self.shared)
                self.shared.append(None)
                self.shared[self._slots[id(x)]] = self._mutable(x)
            return ("ref", self.shared, self._slots[id(x)])
        return ("const", x)

    def _mutable(self, x) -> tuple:
        created = id(x) in self.ctx.created_ids
        tracked = self.ctx.containers.tracked(x)
        if isinstance(x, list):
            return ("list", [self.var(v) for v in tracked] if tracked is not None else [self.value(v) for v in x])
        if isinstance(x, dict):
            values = tracked.values() if tracked is not None else x.values()
            return ("dict", list(x.keys()), [self.var(v) if tracked is not None else self.value(v) for v in values])
        if isinstance(x, set):
            return ("set", [self.value(v) for v in x])
        if isinstance(x, LazyIter):  # an iterator over items of the inputs, advanced by what capture took
            return x.recipe()
        if isinstance(x, IterState):
            return ("iter", [self.var(v) for v in x.items], x.pos)
        if isinstance(x, np.ndarray):
            return self._array(x)
        if isinstance(x, types.CellType) and id(x) in self.ctx.cell_vars:
            var = self.ctx.cell_vars[id(x)]
            return ("cell", None if var is None else self.var(var))
        if isinstance(x, types.FunctionType) and created:
            return ("function", x.__code__, x.__globals__, x.__name__, self.value(x.__defaults__),
                    self.value(x.__kwdefaults__), self.value(x.__closure__))
        if isinstance(x, (types.MethodType, types.BuiltinMethodType)) and not isinstance(x.__self__, types.ModuleType):
            return ("method", self.value(x.__self__), x.__name__)
        if id(x) in self.ctx.dict_views:
            owner, name = self.ctx.dict_views[id(x)]
            return ("call_method", self.var(owner), name)
        return ("const", x)

    def _array(self, x: np.ndarray) -> tuple:
        """A NumPy array made during capture (``np.zeros((4, 4))`` run for real): a new copy on each call. A view
        of another such array is rebuilt as a view of that array's copy, at the same offset and strides, so that
        a write through either one is seen through both, as in eager code."""
        root = x
        while isinstance(root.base, np.ndarray):
            root = root.base
        if root is x or not (root.flags.c_contiguous or root.flags.f_contiguous):
            return ("array", x.copy(order="K"), x.flags.writeable)
        offset = x.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        # (read-only stays read-only: a broadcast view written through would change all its elements at once)
        return ("array_view", self.value(root), offset, x.shape, x.dtype, x.strides, x.flags.writeable)

    def tensor(self, t: Tensor) -> tuple:
        if t._view is None or t._maybe_alias is not None:
            # A view is rebuilt from its base's final value, which is NumPy's aliasing; other stale values fail.
            t._check_fresh()
        node = t._value.node
        if node.op == Op.INPUT:
            return ("source", self.ctx.input_sources[node.attrs["name"]])
        alias = t._maybe_alias
        if alias is not None and len(alias) == 3 and node.op in (Op.RESHAPE, Op.EINSUM) and \
                node.inputs[0] is alias[2]._value:
            # A reshape that is a view or a copy by the memory layout (or a one-operand einsum, a view NumPy
            # makes): NumPy run on the real array decides, as in eager code (``x.reshape(6, -1)`` of a contiguous
            # argument is a view the caller can write into).
            return ("view", self.tensor(alias[2]), node.op, node.attrs)
        if t._view is not None:
            base, op, attrs = t._view
            return ("view", self.tensor(base), op, loop_index.concrete_view_attrs(attrs) if op == Op.INDEX else attrs)
        source = self.ctx.writes.source_of(t) if self.ctx.writes else None
        if source is not None:  # an array of the caller's, written into: it is the caller's array again
            return ("source", source)
        return ("out", self.output(t._value))

    def output(self, value: Value) -> int:
        """The position of ``value`` among the graph's outputs (added once)."""
        if value not in self._out_index:
            self._out_index[value] = len(self.outputs)
            self.outputs.append(value)
        return self._out_index[value]


class Rebuilder:
    """Follows recipes on a new call: real arrays and objects, with NumPy's own aliasing for views."""

    def __init__(self, inputs: FrameInputs, outs: list, sizes_of=None):
        self.inputs = inputs
        self.outs = outs
        self._sizes_of = sizes_of
        """Gives the size symbols' values, for views whose attributes hold them (None: no symbol)."""
        self._sizes: dict | None = None
        self.built: dict[int, object] = {}  # slot -> object, for shared ("ref") recipes

    def __call__(self, recipe: tuple):
        kind = recipe[0]
        if kind == "out":
            return self.outs[recipe[1]]
        if kind == "source":
            return recipe[1].fetch(self.inputs)
        if kind == "const":
            return recipe[1]
        if kind == "ref":
            _, table, slot = recipe
            if slot not in self.built:
                self.built[slot] = self(table[slot])
            return self.built[slot]
        if kind == "array":
            return _with_writeable(recipe[1].copy(order="K"), recipe[2])
        if kind == "array_view":
            _, root, offset, shape, dtype, strides, writeable = recipe
            return _with_writeable(np.ndarray(shape, dtype, buffer=self(root), offset=offset, strides=strides),
                                   writeable)
        if kind == "null":
            return NULL
        if kind == "list":
            return [self(r) for r in recipe[1]]
        if kind == "tuple":
            return tuple(self(r) for r in recipe[1])
        if kind == "slice":
            return slice(*[self(r) for r in recipe[1]])
        if kind == "namedtuple":
            return recipe[1](*(self(r) for r in recipe[2]))
        if kind == "dict":
            return dict(zip(recipe[1], (self(r) for r in recipe[2])))
        if kind == "set":
            return {self(r) for r in recipe[1]}
        if kind == "iter":
            return IterState([Var(self(r)) for r in recipe[1]], recipe[2])
        if kind == "advance":
            state = recipe[1].fetch(self.inputs)
            return IterState(state.items, state.pos + recipe[2])
        if kind == "sequence_iter":
            return IterState([Var(x) for x in recipe[1].fetch(self.inputs)], recipe[2])
        if kind == "enumerate_iter":
            _, source, pos, start = recipe
            return IterState([Var(pair) for pair in enumerate(source.fetch(self.inputs), start)], pos)
        if kind == "select":
            return self(recipe[1])[self(recipe[2])]
        if kind == "convert":
            return recipe[1](self(recipe[2]))
        if kind == "view":
            _, base_recipe, op, attrs = recipe
            if self._sizes_of is not None and self._sizes is None:
                self._sizes = self._sizes_of()
            return apply_view(self(base_recipe), op, bind_attrs(attrs, self._sizes) if self._sizes else attrs)
        if kind == "cell":
            return types.CellType() if recipe[1] is None else types.CellType(self(recipe[1]))
        if kind == "function":
            _, code, f_globals, name, defaults, kwdefaults, closure = recipe
            fn = types.FunctionType(code, f_globals, name, self(defaults), self(closure))
            fn.__kwdefaults__ = self(kwdefaults)
            return fn
        if kind == "method":
            return getattr(self(recipe[1]), recipe[2])
        if kind == "call_method":
            return getattr(self(recipe[1]), recipe[2])()
        raise ValueError(f"unknown recipe {kind}")


def _with_writeable(a: np.ndarray, writeable: bool) -> np.ndarray:
    if not writeable:
        a.flags.writeable = False
    return a


def apply_view(base: np.ndarray, op: Op, attrs: dict) -> np.ndarray:
    if op == Op.INDEX:
        return base[fill_key(attrs["key"], [base])]
    if op == Op.TRANSPOSE:
        return np.transpose(base, attrs["perm"])
    if op == Op.RESHAPE:  # a view where NumPy's reshape of this base is one (always, when it splits dimensions)
        return np.reshape(base, attrs["shape"])
    if op == Op.EXPAND_DIMS:
        return np.expand_dims(base, attrs["axis"])
    if op == Op.SQUEEZE:
        return np.squeeze(base, attrs["axis"])
    if op == Op.BROADCAST_TO:
        return np.broadcast_to(base, attrs["shape"])
    if op == Op.EINSUM:
        return np.einsum(attrs["subscripts"], base)
    if opdef(op).view:  # real, imag, flip, diagonal, diag: NumPy's own function returns the view
        return opdef(op).impl(base, **attrs)
    raise ValueError(f"{op} is not a view op")


def now() -> float:
    return time.perf_counter()
