"""A random program: a small tree of statements, written out as Python source and run from that source.

The source is built only from the generator's own templates, its own variable names and numbers it chose;
nothing in it comes from outside. Each run executes it in a fresh namespace, so eager code and every capture
get their own module state (``log``, ``state``, globals) to compare afterwards.

Programs read like this::

    def program(x0, x1):
        h0 = np.tanh(x0) * 0.5
        if float(h0.sum()) > 0.0:          # a data-dependent branch
            h1 = F.relu(h0)
        else:
            h1 = -h0
        for i in range(2):                 # a static loop: unrolled by every capture
            h1 = np.maximum(h1, x1 * i)
        return (h1, h0.sum(axis=-1))
"""

from __future__ import annotations

import linecache
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..frontends import functional as F

INDENT = "    "


@dataclass
class Var:
    """A value in scope while generating: its name, type, and an interval holding all its values."""

    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    lo: float
    hi: float
    scalar: bool = False
    """A Python float taken out of a tensor (``s = float(h.mean())``), not an array."""

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)


@dataclass
class Line:
    """A simple statement: one or a few source lines that belong together (``t = x.copy(); t[0] = 1``)."""

    code: list[str]
    defines: list[Var] = field(default_factory=list)
    ops: tuple[str, ...] = ()
    """The op-table ops it exercises."""
    effect: bool = False
    """It prints, appends or assigns outside the function."""


@dataclass
class If:
    test: str
    body: list
    orelse: list
    defines: list[Var] = field(default_factory=list)
    """Variables both branches assign (same type), visible after the ``if``."""
    data: bool = False
    """The test reads tensor data (a guard, or a graph break)."""


@dataclass
class Loop:
    header: str
    """``for i in range(3):`` or ``for w in items:``."""
    body: list
    defines: list[Var] = field(default_factory=list)


STATE_PREAMBLE = '''\
class State:
    pass


G = 0.5
COUNTER = 0
state = State()
state.scale = 1.5
state.calls = 0
state.total = 0.0
log = []
items = [0.5, 1.25]
'''


HELPERS = '''\
def scaled(a, factor=0.5):
    return np.tanh(a) * factor


def both(a, b):
    return a + b, a - b
'''
"""Module-level functions a program may call (compile() captures through the call)."""


@dataclass
class Program:
    """A generated program and how to make its inputs."""

    seed: int
    args: list[Var]
    """The array arguments, in order."""
    body: list
    returns: list[str]
    return_style: str = "tuple"
    """How the results are returned: 'single', 'tuple', 'list' or 'dict'."""
    stateful: bool = False
    """Emit the module state (``log``, ``state``, ``G``, ``items``) and the closure variable ``k``."""
    python_arg: bool = False
    """The program takes a last argument ``c``: a Python float."""
    globals_written: tuple[str, ...] = ()
    helpers: bool = False
    """Emit ``HELPERS`` (the program calls them)."""
    aliases: tuple = ()
    """Arguments passed as views of others: ``(i, j, key)``, argument i is argument j indexed by ``key`` (None:
    the same array), so ``program(x, x)`` and overlapping slices are called as generated."""

    # --- source

    def source(self) -> str:
        params = [a.name for a in self.args] + (["c"] if self.python_arg else [])
        lines = [f"# graph_lab random program, seed {self.seed}"]
        if self.helpers:
            lines += HELPERS.splitlines() + ["", ""]
        if self.stateful:
            lines += STATE_PREAMBLE.splitlines() + ["", "", "def make(k):"]
        pad = INDENT if self.stateful else ""
        lines.append(f"{pad}def program({', '.join(params)}):")
        if self.globals_written:
            lines.append(f"{pad}{INDENT}global {', '.join(self.globals_written)}")
        lines += emit(self.body, pad + INDENT)
        lines.append(f"{pad}{INDENT}return {self._return_text()}")
        if self.stateful:
            lines += [f"{INDENT}return program", "", "", "program = make(0.25)"]
        return "\n".join(lines) + "\n"

    def _return_text(self) -> str:
        names = self.returns
        if self.return_style == "single" and len(names) == 1:
            return names[0]
        if self.return_style == "dict":
            return "{" + ", ".join(f"'r{i}': {n}" for i, n in enumerate(names)) + "}"
        if self.return_style == "list":
            return "[" + ", ".join(names) + "]"
        return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"

    # --- running

    @property
    def filename(self) -> str:
        return f"<graph_lab program {self.seed}>"

    def namespace(self) -> dict[str, Any]:
        """A fresh module namespace with the program (and its state) defined in it."""
        return load(self.source(), self.filename)

    def inputs(self, k: int, shapes: dict[str, tuple] | None = None,
               dtypes: dict[str, np.dtype] | None = None) -> list:
        """The ``k``-th input set, the same on every run: random for k = 0, 1; an edge case after that
        (zeros, negatives, ties for argmax). ``shapes``/``dtypes`` replace an argument's type. Each argument has
        its own random stream, so dropping one (when shrinking) leaves the others' values alone."""
        edge = ("random", "random", "zeros", "negatives", "ties")[min(k, 4)]
        out = []
        for a in self.args:
            rng = np.random.default_rng([self.seed, k, int(a.name[1:])])
            shape = (shapes or {}).get(a.name, a.shape)
            dtype = np.dtype((dtypes or {}).get(a.name, a.dtype))
            out.append(make_array(rng, shape, dtype, edge))
        if self.python_arg:
            out.append(0.75 if k % 2 == 0 else -0.5)
        return out


def load(source: str, filename: str) -> dict[str, Any]:
    """Run a generated module's source in a fresh namespace (registered with linecache, so the captures can
    show its lines) and return the namespace."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, Any] = {"__name__": "graph_lab_program", "np": np, "F": F, "math": math}
    exec(compile(source, filename, "exec"), namespace)  # generated text: see the module docstring
    return namespace


def make_array(rng, shape: tuple, dtype: np.dtype, edge: str) -> np.ndarray:
    """Values in [-3, 3] (the interval the generator assumed for arguments)."""
    if dtype.kind == "b":
        values = rng.random(shape) < 0.5 if edge == "random" else np.full(shape, edge != "zeros")
    elif edge == "zeros":  # both zeros: 0.0 and -0.0 (1 / x, x + 0.0 and copysign tell them apart)
        values = np.where(np.arange(int(np.prod(shape))).reshape(shape) % 2 == 1, -0.0, 0.0)
    elif edge == "negatives":
        values = -np.minimum(np.abs(rng.standard_normal(shape)) + 0.1, 3.0)
    elif edge == "ties":
        values = rng.integers(0, 2, shape).astype(np.float64)
    elif dtype.kind in "iu":
        values = rng.integers(-3, 4, shape)
    else:
        values = np.clip(rng.standard_normal(shape), -3.0, 3.0)
    return np.asarray(values).astype(dtype)


def emit(stmts: list, indent: str) -> list[str]:
    lines: list[str] = []
    for s in stmts:
        if isinstance(s, Line):
            lines += [indent + c for c in s.code]
        elif isinstance(s, If):
            lines.append(f"{indent}if {s.test}:")
            lines += emit(s.body, indent + INDENT) or [indent + INDENT + "pass"]
            if s.orelse:
                lines.append(f"{indent}else:")
                lines += emit(s.orelse, indent + INDENT)
        elif isinstance(s, Loop):
            lines.append(f"{indent}{s.header}")
            lines += emit(s.body, indent + INDENT) or [indent + INDENT + "pass"]
    return lines
