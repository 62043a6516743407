"""Values entering a capture: the segment's locals, stack entries and everything read from them become Vars
that remember their ``Source``; an array becomes a stand-in tensor on a graph input, guarded on its shape and
dtype (or, for sizes that automatic dynamic made symbolic, on the pattern of its sizes); a number used by a tensor
operation becomes a graph input. ``InputCapture`` is the part of ``CaptureContext`` that does this.
"""

from __future__ import annotations

import numpy as np

from ...ir.shape_env import Dim, ShapeEnv, make_current
from ...ir.source import SourceLoc
from ...ir.types import TensorType
from ..tensor import Storage, Tensor
from .dynamic_ints import symbolic_int
from .frame import IterState, Var
from .guard_set import Guard
from .iterators import ResumedIter
from .modules import plain_array_input, plain_array_of
from .sources import SizesSource, StackSource
from .values import COMPUTING_OPCODES, IMMUTABLE, expression_text


class InputCapture:
    """Graph inputs and the Vars of values read from the segment's inputs, for ``CaptureContext`` (which holds
    the graph, the guard set and the maps these methods fill)."""

    def wrap(self, value, source) -> Var:
        """The Var of ``value`` read from ``source``: a stand-in on a graph input for an array."""
        if self.dynamic_ints and type(value) is int and value >= 2 and source in self.dynamic_ints:
            return symbolic_int(self, value, source)
        if type(value) is np.ndarray:
            return Var(self.tensor_input(value, source), source)
        if isinstance(value, np.ndarray) and plain_array_of(value) is not None:  # an nn.Parameter
            return plain_array_input(self, value, source)
        if isinstance(value, IterState):  # a loop's iterator, rebuilt after a break
            if isinstance(source, StackSource) and not source.label:
                source = StackSource(source.index, "the for loop's iterator")
            return self.created(ResumedIter(self, value, source))
        if not isinstance(value, IMMUTABLE):
            self.sourced.setdefault(id(value), source)
            self._keep.append(value)
        return Var(value, source)

    def stack_source(self, index: int, depth: int) -> StackSource:
        """The source of a stack entry where capture resumes: the top of the stack is what the instruction Python
        just ran computed, named by its source text (``float(x.sum())``) in guards and graph inputs."""
        frame = self.frame
        if frame is None or frame.ip == 0 or index != depth - 1:
            return StackSource(index)
        if frame.instructions[frame.ip].opname == "PUSH_EXC_INFO":
            return StackSource(index, f"the exception caught at {frame.loc()}")
        if frame.instructions[frame.ip - 1].opname not in COMPUTING_OPCODES:
            return StackSource(index)
        ins = frame.instructions[frame.ip - 1]
        loc = SourceLoc(frame.code.co_filename, ins.positions.lineno) if ins.positions and \
            ins.positions.lineno else frame.loc()
        code = expression_text(frame.code.co_filename, ins.positions) if ins.positions else ""
        return StackSource(index, f"`{code}` ({loc})" if code else f"the result of {ins.opname} ({loc})")

    def tensor_input(self, array: np.ndarray, source) -> Tensor:
        loc = self.loc()
        known = self.arrays_by_id.get(id(array))
        if known is not None:
            t, first = known
            if first == source:  # read again from where it was read first: its guard is in the set
                return t
            # one array reached twice: the graph reads it once, so require it again
            self.guards.add(Guard("alias", source, first, loc))
            self.guards.add(self._array_guard(array, source, loc))
            return t
        described = source.describe()
        name = described if described not in self.input_sources else self._input_name(source, described)
        value = self.graph.add_input(name, TensorType.of(array) if self.dynamic_axes is None else
                                     self._input_type(array, source), loc)  # (of: every size static)
        t = Tensor(self.recorder, value, Storage(f"the array {described}"))
        self.writes.add_input(t, source, array)
        self.arrays_by_id[id(array)] = (t, source)
        self.input_sources[name] = source
        self._keep.append(array)
        # An array seen for the first time: no guard on its source is in the set (one source reads one array),
        # and the only guard on it of this kind added later is this one, which the branch above does not add.
        self.guards.add_new(self._array_guard(array, source, loc))
        return t

    def _array_guard(self, array: np.ndarray, source, loc) -> Guard:
        pattern = self.patterns.get(id(array))
        if pattern is None:
            return Guard("array", source, (array.shape, array.dtype), loc)
        return Guard("dims", source, (pattern, array.dtype), loc)

    def _input_type(self, array: np.ndarray, source) -> TensorType:
        """The input's type: a size the policy makes dynamic is a new symbol ``s<i>``, unless it is 0 or 1
        (specialized: such sizes broadcast or hold nothing, see ``ir/shape_env.py``)."""
        axes = self.dynamic_axes(source, array) if self.dynamic_axes is not None else ()
        if not axes:  # every size static: the array's own type (made once per dtype and shape)
            return TensorType.of(array)
        shape = list(array.shape)
        for axis in sorted(axes):
            if array.shape[axis] >= 2:
                self.symbol_env()
                name = f"s{len(self.size_dims)}"
                self.shape_env.hints[name] = array.shape[axis]
                shape[axis] = self.shape_env.declare(Dim(name), self.loc())
                self.size_dims.append((source, axis))
        if any(type(d) is not int for d in shape):
            self.patterns[id(array)] = tuple(None if type(d) is not int else d for d in shape)
        return TensorType(array.dtype, tuple(shape))

    def symbol_env(self) -> ShapeEnv:
        """The capture's shape environment, made when the first size symbol is declared."""
        if self.shape_env is None:
            self.shape_env = ShapeEnv(hints={})
            self.shape_env.guards = self.graph.guards
            self.shape_env.recorder = self.recorder
            self.shape_env.where = self.loc
            self.recorder.shape_env = self.shape_env
            make_current(self.shape_env)  # (the rest of this step too: capture_segment's ``using`` ends it)
        return self.shape_env

    def size_guard(self) -> None:
        """One guard over all size symbols: the shape guards the capture relied on, checked on each call."""
        from ...guards import ShapeGuard
        if self.size_dims:
            facts = [g for g in self.graph.guards if isinstance(g, ShapeGuard)]
            names = tuple(f"s{i}" for i in range(len(self.size_dims)))
            self.guards.add(Guard("sizes", SizesSource(tuple(self.size_dims)), (names, facts), None))

    def scalar_input(self, var: Var) -> Tensor:
        """A number read from the inputs, used by a tensor operation: a graph input, guarded by its type only."""
        t = self.scalar_inputs.get(var.source)
        if t is None:
            name = self._input_name(var.source)
            value = self.graph.add_input(name, TensorType.of(var.value), self.loc())
            t = Tensor(self.recorder, value, Storage(f"the number {var.source.describe()}"))
            self.scalar_inputs[var.source] = t
            self.input_sources[name] = var.source
        self.guards.add(Guard("type", var.source, type(var.value), self.loc()))
        return t

    def _input_name(self, source, described: str | None = None) -> str:
        described = source.describe() if described is None else described
        name, n = described, 1
        while name in self.input_sources:
            n += 1
            name = f"{described}#{n}"
        return name
