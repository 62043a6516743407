"""What a loop iteration starts from: the Python state a capture can read, written down so that two iterations'
starting states can be compared.

A loop is kept as a region only when iteration 2 would be captured exactly as iteration 1 was. Capture is
deterministic in what it reads: the frames' locals and stacks, what they hold (containers, cells, iterators,
closures), and the stand-ins of the inputs. So ``LoopState`` walks all of that, in a fixed order, into a list of
tokens: a token says what kind of thing is at that place and everything capture may act on (a number's value, a
tensor's type, which objects are one object, whether a view is still fresh), and the graph value a stand-in holds
is set apart in ``values``. Two states *match* when their tokens are equal; the values, paired place by place,
are then what the loop carries: a place holding the same value at both starts is loop-invariant, a place holding
another value is carried from one iteration to the next.

A state that holds something whose behaviour the tokens cannot describe (an object made inside the capture that
is no container, a large array made by Python) raises ``NotComparable``: the loop stays unrolled.
"""

from __future__ import annotations

import types

import numpy as np

from ...ir.graph import Value
from ..symbols import SymInt
from ..tensor import Tensor
from .frame import IterState, Var
from .values import IMMUTABLE, is_namedtuple

_EXACT_IMMUTABLE = (float, complex, np.generic)
"""Numbers whose ``==`` hides a difference Python code can see (``-0.0 == 0.0``; NaN is not equal to itself):
compared by their repr, which shows both."""

_SMALL_ARRAY = 4096
"""A real array made by Python during capture is compared by its bytes, up to this many elements."""


def _shown(tokens: list, at: int) -> str:
    if at >= len(tokens):
        return "nothing more"
    token = tokens[at]
    if token[0] == "value":
        return repr(token[2])
    if token[0] == "var":
        return f"a value read from {token[1].describe()}" if token[1] is not None else "a value made in the loop"
    if token[0] == "same as":
        return "an object held elsewhere too"
    return f"a {token[0]}"


class NotComparable(Exception):
    """The state holds something two iterations' states cannot be compared on; the message says what."""


class LoopState:
    """The tokens and values of one iteration's starting state (see the module docstring)."""

    def __init__(self, ctx, loop_iterator, variable: str):
        self.ctx = ctx
        self.loop_iterator = loop_iterator
        self.tokens: list = []
        self.values: list[Value] = []
        self._seen: dict[int, int] = {}  # id(object) -> its number in this walk, for objects reached twice
        frame = ctx.frame
        while frame is not None:
            for name in sorted(frame.locals):
                if frame is ctx.frame and name == variable:
                    continue  # the loop's variable, which the loop's body never reads (see loop_regions)
                self.tokens.append(("local", frame.depth, name))
                self._var(frame.locals[name])
            self.tokens.append(("stack", frame.depth, len(frame.stack)))
            for var in frame.stack:
                self._var(var)
            frame = frame.parent
        for t, source in ctx.arrays_by_id.values():
            self.tokens.append(("input", source))
            self._object(t)
        for t in ctx.scalar_inputs.values():
            self._object(t)

    def difference(self, later: "LoopState") -> str | None:
        """Where ``later`` differs from this state (the first differing token), or None when they match."""
        if self.tokens == later.tokens:
            return None
        at = next((i for i, (a, b) in enumerate(zip(self.tokens, later.tokens)) if a != b), len(self.tokens))
        where = next((t for t in reversed(self.tokens[:at]) if t[0] in ("local", "stack", "input")), None)
        place = f"{where[0]} {where[2]!r}" if where and where[0] == "local" else where[0] if where else "the state"
        return f"{place} holds {_shown(self.tokens, at)}, then {_shown(later.tokens, at)}"

    # --- the walk

    def _var(self, var: Var) -> None:
        self.tokens.append(("var", var.source))
        self._object(var.value)

    def _first_time(self, obj) -> bool:
        """Whether ``obj`` is met for the first time in this walk; if not, a token says which earlier one it is."""
        number = self._seen.get(id(obj))
        if number is not None:
            self.tokens.append(("same as", number))
            return False
        self._seen[id(obj)] = len(self._seen)
        return True

    def _object(self, x) -> None:
        kind = type(x)
        if isinstance(x, IMMUTABLE):
            self.tokens.append(("value", kind, repr(x) if isinstance(x, _EXACT_IMMUTABLE) else x))
        elif kind is Tensor:
            if self._first_time(x):
                self._tensor(x)
        elif x is self.loop_iterator:
            self.tokens.append(("the loop's iterator",))
        elif isinstance(x, SymInt):
            self.tokens.append(("size", kind, str(x)))
        elif kind in (list, tuple, dict, set, frozenset) or is_namedtuple(x):
            if self._first_time(x):
                self._container(x)
        elif isinstance(x, IterState):
            if self._first_time(x):
                self.tokens.append(("iterator", kind, x.pos, len(x.items)))
                for var in x.items[x.pos:]:
                    self._var(var)
        elif kind is types.CellType:
            if self._first_time(x):
                self._cell(x)
        elif kind is types.MethodType:
            self.tokens.append(("method",))
            self._object(x.__self__)
            self._object(x.__func__)
        elif kind is np.ndarray:
            self._array(x)
        elif id(x) in self.ctx.created_ids and kind is types.FunctionType:
            if self._first_time(x):  # a function made inside the capture: what its closure and defaults hold
                self.tokens.append(("function", x.__code__))
                for part in (x.__closure__ or ()) + tuple(x.__defaults__ or ()):
                    self._object(part)
                self._object(dict(x.__kwdefaults__ or {}))
        elif id(x) in self.ctx.created_ids:
            raise NotComparable(f"a {kind.__name__} object made during capture is part of the loop's state")
        else:  # made before the capture (a module, a function, an argument's object): capture never changes it
            self.tokens.append(("object", id(x)))

    def _tensor(self, t: Tensor) -> None:
        storage = t._storage
        fresh = t._version == storage.version
        alias = None if t._maybe_alias is None else t._maybe_alias[0].version == t._maybe_alias[1]
        self.tokens.append(("tensor", t.type, t._rec is self.ctx.recorder, storage.is_input, fresh, alias))
        self.values.append(t._value)
        self._first_time(storage)  # (which tensors share memory)
        if t._view is not None:
            base, op, attrs = t._view
            self.tokens.append(("view of", str(op), repr(sorted(attrs.items()))))
            self._object(base)

    def _container(self, x) -> None:
        tracked = self.ctx.containers.tracked(x)
        if isinstance(tracked, dict):
            self.tokens.append(("dict", tuple(map(repr, tracked))))
            for var in tracked.values():
                self._var(var)
        elif tracked is not None:
            self.tokens.append(("container", type(x), len(tracked)))
            for var in tracked:
                self._var(var)
        elif type(x) is dict:
            self.tokens.append(("dict", tuple(map(repr, x))))
            for item in x.values():
                self._object(item)
        else:
            items = sorted(x, key=repr) if type(x) in (set, frozenset) else x
            self.tokens.append(("container", type(x), len(x)))
            for item in items:
                self._object(item)

    def _cell(self, cell) -> None:
        if id(cell) in self.ctx.cell_vars:  # made during capture: it holds a Var of the frame, or nothing
            var = self.ctx.cell_vars[id(cell)]
            self.tokens.append(("cell", var is None))
            if var is not None:
                self._var(var)
        else:  # a cell from before the capture: capture breaks rather than assign to it
            self.tokens.append(("outer cell", id(cell)))

    def _array(self, a: np.ndarray) -> None:
        if a.size > _SMALL_ARRAY:
            raise NotComparable(f"a real array of {a.size} elements is part of the loop's state")
        self.tokens.append(("array", id(a), a.dtype, a.shape, a.tobytes()))
