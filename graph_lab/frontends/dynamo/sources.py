"""Sources: where a value of the frame came from, so that a guard can fetch it again on the next call.

A source is a small path from the state a segment starts with (its locals and stack) or from the function's
globals and closure: ``local x``, ``global W``, ``x.counter``, ``xs[2]``. Guards and graph inputs are written in
terms of sources; ``fetch`` follows the path on a new call's state.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Any


class Source:
    """A path to a value, read from a ``FrameInputs``."""

    def fetch(self, inputs: "FrameInputs") -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class FrameInputs:
    """What sources read from: the state a segment starts in, and the function's globals and closure."""

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

    def fetch(self, inputs):
        return inputs.stack[self.index]

    def describe(self):
        return f"<stack {self.index}>"


@dataclass(frozen=True)
class GlobalSource(Source):
    name: str
    namespace_id: int = 0
    """id() of the globals dict it was read from (0: the compiled function's own); part of equality."""
    namespace: dict | None = field(default=None, compare=False, hash=False)
    """The globals dict of the function that read it (None: the compiled function's own)."""

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

    def fetch(self, inputs):
        return getattr(self.base.fetch(inputs), self.name)

    def describe(self):
        return f"{self.base.describe()}.{self.name}"


@dataclass(frozen=True)
class ItemSource(Source):
    base: Source
    key: Any

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
class SizesSource(Source):
    """The sizes a symbolic segment binds: one ``(array source, axis)`` per size symbol, fetched as a tuple."""

    dims: tuple
    """``((source, axis), ...)`` in the order of the symbols ``s0, s1, ...``."""

    def fetch(self, inputs):
        return tuple(source.fetch(inputs).shape[axis] for source, axis in self.dims)

    def describe(self):
        return ", ".join(f"{source.describe()}.shape[{axis}]" for source, axis in self.dims)
