"""What ``script``'s variables hold: a stand-in tensor for a value of the graph, or a Python value known while
converting (a shape, a layer count, a list of parameters), or ``Undefined`` after a converted ``if`` or loop that
gives the variable no single value. Functions of the source (``lambda``, nested ``def``) are ``ScriptFunction``s."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Undefined:
    """A variable with no single value after a converted ``if`` or loop; reading it is a ``ScriptError``."""

    reason: str
    """Why, with the lines involved: "y is assigned only in the then branch (model.py:5: `y = x * 2`)"."""
    hint: str
    """What to write instead."""


class Env:
    """The variables of the function being converted: their values and where each was last assigned."""

    def __init__(self, values: dict[str, Any] | None = None, where: dict[str, ast.AST] | None = None):
        self.values: dict[str, Any] = dict(values or {})
        self.where: dict[str, ast.AST] = dict(where or {})
        """The statement that last assigned each variable (None for arguments)."""

    def copy(self) -> "Env":
        """A copy for one branch or loop body: assignments in it do not change this one."""
        return Env(self.values, self.where)

    def assign(self, name: str, value, node: ast.AST | None) -> None:
        self.values[name] = value
        self.where[name] = node

    def names_of(self, value) -> list[str]:
        """The variables holding exactly ``value``."""
        return [name for name, v in self.values.items() if v is value]


class ScriptFunction:
    """A ``lambda`` or a nested ``def`` of the scripted source. Calling it converts its body in a new frame whose
    enclosing frame is the one that made it (so it reads that frame's variables as they are when it is called);
    it is never run as Python."""

    def __init__(self, converter, node: ast.AST, frame, signature, name: str):
        self.converter = converter
        self.node = node
        """The ``Lambda`` or ``FunctionDef``."""
        self.frame = frame
        """The frame it was made in."""
        self.signature = signature
        """Its parameters, defaults evaluated when it was made (as Python does)."""
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        return self.converter.call_script_function(self, args, kwargs)

    def closure_values(self) -> list:
        """The enclosing frames' variables: F.cond looks for stand-in tensors among them."""
        values, frame = [], self.frame
        while frame is not None:
            values += list(frame.env.values.values()) + list(frame.cells.values())
            frame = frame.outer
        return values

    def __repr__(self) -> str:
        return f"<scripted function {self.__name__} at {self.frame.source.show(self.node)}>"


class ControlSignal(Exception):
    """Python's return, break and continue, while converting (raised and caught by the converter only)."""


class Return(ControlSignal):
    """A ``return`` reached while converting, with the value it returns."""

    def __init__(self, value, node: ast.AST):
        super().__init__("return")
        self.value, self.node = value, node


class Break(ControlSignal):
    """A ``break`` reached while converting an unrolled loop."""

    def __init__(self, node: ast.AST):
        super().__init__("break")
        self.node = node


class Continue(Break):
    """A ``continue`` reached while converting an unrolled loop."""
