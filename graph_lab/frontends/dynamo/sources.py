"""Sources: where a value of the frame came from, so that a guard can fetch it again on the next call.

A source is a small path from the state a segment starts with (its locals and stack) or from the function's
globals and closure: ``local x``, ``global W``, ``x.counter``, ``xs[2]``. Guards and graph inputs are written in
terms of sources; ``fetch`` follows the path on a new call's state.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np


class Source:
    """A path to a value, read from a ``FrameInputs``.

    _set_fields: the sources that every capture makes (and ``Const``) have an ``__init__`` of their own, which
    stores the fields into the instance's ``__dict__`` itself, as the frozen dataclass's ``__init__`` would.
    Equality, hashing and ``repr`` are dataclass's, from the same fields."""

    def fetch(self, inputs: "FrameInputs") -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


class FrameInputs(NamedTuple):
    """What sources read from: the state a segment starts in, and the function's globals and closure. (A named
    tuple: immutable, and one is made at each offset of every call on the general path.)"""

    locals: dict
    stack: list
    globals: dict
    closure: tuple  # cells of the compiled function


@dataclass(frozen=True)
class LocalSource(Source):
    name: str

    def fetch(self, inputs):
        return inputs.locals[self.name]

    def describe(self):
        return self.name


@dataclass(frozen=True)
class StackSource(Source):
    index: int
    label: str = field(default="", compare=False)
    """How a person would name the value, e.g. "the result of `float(x.sum())` (f.py:12)"; not part of equality."""

    def fetch(self, inputs):
        return inputs.stack[self.index]

    def describe(self):
        return self.label or f"<stack {self.index}>"


@dataclass(frozen=True)
class GlobalSource(Source):
    name: str
    namespace_id: int = 0
    """id() of the globals dict it was read from (0: the compiled function's own); part of equality."""
    namespace: dict | None = field(default=None, compare=False, hash=False)
    """The globals dict of the function that read it (None: the compiled function's own)."""

    def __init__(self, name: str, namespace_id: int = 0, namespace: dict | None = None):
        fields = self.__dict__  # (see ``_set_fields``)
        fields["name"] = name
        fields["namespace_id"] = namespace_id
        fields["namespace"] = namespace

    def fetch(self, inputs):
        namespace = inputs.globals if self.namespace is None else self.namespace
        if self.name in namespace:
            return namespace[self.name]
        return getattr(builtins, self.name)

    def describe(self):
        return f"global {self.name}"


@dataclass(frozen=True)
class ClosureSource(Source):
    index: int
    name: str

    def fetch(self, inputs):
        return inputs.closure[self.index].cell_contents

    def describe(self):
        return f"closure {self.name}"


@dataclass(frozen=True)
class AttrSource(Source):
    base: Source
    name: str

    def __init__(self, base: Source, name: str):
        fields = self.__dict__  # (see ``_set_fields``)
        fields["base"] = base
        fields["name"] = name

    def fetch(self, inputs):
        return getattr(self.base.fetch(inputs), self.name)

    def describe(self):
        return f"{self.base.describe()}.{self.name}"


@dataclass(frozen=True)
class ItemSource(Source):
    base: Source
    key: Any

    def __init__(self, base: Source, key):
        fields = self.__dict__  # (see ``_set_fields``)
        fields["base"] = base
        fields["key"] = key

    def fetch(self, inputs):
        return self.base.fetch(inputs)[self.key]

    def describe(self):
        return f"{self.base.describe()}[{self.key!r}]"


@dataclass(frozen=True)
class CellContentsSource(Source):
    """A free variable of a function reached through a source (an inlined closure)."""

    func: Source
    index: int
    name: str

    def fetch(self, inputs):
        return self.func.fetch(inputs).__closure__[self.index].cell_contents

    def describe(self):
        return f"{self.func.describe()}.<closure {self.name}>"


@dataclass(frozen=True)
class CellSource(Source):
    """The contents of a closure cell held directly (a closure reached without a path, e.g. through a list the
    function built). The cell object stays the same for as long as its function does."""

    cell: Any = field(compare=False, hash=False)
    name: str = ""
    cell_id: int = 0
    """id() of the cell; part of equality."""

    def __post_init__(self):
        object.__setattr__(self, "cell_id", id(self.cell))

    def fetch(self, inputs):
        return self.cell.cell_contents

    def describe(self):
        return f"<closure {self.name}>"


@dataclass(frozen=True)
class ObjectSource(Source):
    """An object graph_lab holds on to (a function reached without a path): its current state is read through
    it, e.g. a mutable default argument."""

    obj: Any = field(compare=False, hash=False)
    label: str = ""
    obj_id: int = 0

    def __post_init__(self):
        object.__setattr__(self, "obj_id", id(self.obj))

    def fetch(self, inputs):
        return self.obj

    def describe(self):
        return self.label


@dataclass(frozen=True)
class Const:
    """A constant argument of a ``DerivedSource``."""

    value: Any

    def __init__(self, value):
        self.__dict__["value"] = value  # (see ``_set_fields``)


@dataclass(frozen=True)
class DerivedSource(Source):
    """A Python scalar computed at capture from other sources by a pure function: ``counter + 1``,
    ``float(s) * 2``, ``f"{loss:.3f}"``. Read again by computing it again, so that the capture depends on the
    result (guarded where it matters) and not on the values it was computed from."""

    fn: Any
    args: tuple
    """Each a ``Source`` or a ``Const``."""
    text: str
    """How it reads, with ``{0}, {1}, ...`` for the arguments: ``"{0} + {1}"``."""

    def __init__(self, fn, args: tuple, text: str):
        fields = self.__dict__  # (see ``_set_fields``)
        fields["fn"] = fn
        fields["args"] = args
        fields["text"] = text

    def fetch(self, inputs):
        return self.fn(*[a.fetch(inputs) if isinstance(a, Source) else a.value for a in self.args])

    def __hash__(self) -> int:
        # The hash dataclass would compute (of the fields), computed once: a loop's count ``len(xs)`` is looked
        # up in the guard set for every item the loop takes, and hashing it hashes its sources all the way down.
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.fn, self.args, self.text))
            object.__setattr__(self, "_hash", h)
        return h

    def describe(self):
        parts = []
        for a in self.args:
            text = a.describe() if isinstance(a, Source) else repr(a.value)
            operator_form = isinstance(a, DerivedSource) and a.text.startswith("{") and " " in a.text
            parts.append(f"({text})" if operator_form else text)
        return self.text.format(*parts)


@dataclass(frozen=True)
class SizesSource(Source):
    """The sizes a symbolic segment binds: one ``(array source, axis)`` per size symbol, fetched as a tuple."""

    dims: tuple
    """``((source, axis), ...)`` in the order of the symbols ``s0, s1, ...``."""

    def fetch(self, inputs):
        return tuple(source.fetch(inputs).shape[axis] for source, axis in self.dims)

    def describe(self):
        return ", ".join(source.describe() if isinstance(source, IntAsLengthSource) else
                         f"{source.describe()}.shape[{axis}]" for source, axis in self.dims)


def _empty_of_length(n) -> np.ndarray:
    if type(n) is not int:  # (a float, a bool or a NumPy integer is another capture's business)
        raise TypeError(f"a size symbol is bound from an int, got {type(n).__name__}")
    return np.empty((n, 0), np.bool_)


class IntAsLengthSource(DerivedSource):
    """A Python int that automatic dynamic made a size symbol, read as the length of an empty array: a graph
    binds its size symbols from its inputs' shapes (``ir/sizes.py``), so this is how the int reaches the graph
    (an input of type ``bool[s2,0]``). Reading anything but an int fails, so a guard on it fails."""

    def __init__(self, source: Source):
        super().__init__(_empty_of_length, (source,), "{0}")
