"""The random program generator: valid NumPy programs over the whole op table, deterministic from a seed.

A program is grown one statement at a time. Most statements call one op of the menu (every op of the table
has a template); the rest are Python around them: ``if`` on a shape or on a Python value (decided while
capturing), ``if`` on tensor data (a guard or a graph break), ``for`` loops (unrolled), a Python float taken
out of a tensor, and, when asked, side effects (print, append, attribute and global writes) and reads of
Python state that a capture must guard (a global, a closure cell, an attribute, a container's length).

Every statement is run on small arrays before it is kept: NumPy says what shape and dtype it makes, and a
statement NumPy refuses is simply drawn again. Values stay defined because each variable carries an interval
of its values and the templates wrap operands (``np.abs(h) + 0.5`` before a ``log``) where the interval says so.
"""

from __future__ import annotations

import math
import random
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..frontends import functional as F
from ..ops import SOURCE_OPS, Op
from .menu_elementwise import BINARY, REDUCE, SOURCES, UNARY
from . import menu_writes
from .menu_control import CONTROL
from .menu_numpy import STATIC_CONSTANT_OPS, TEMPLATES
from .menu_structure import STRUCTURE
from .picker import LIMIT, Block, Expr, Picker, magnitude
from .program import HELPERS, STATE_PREAMBLE, If, Line, Loop, Program, Var, emit

MENU = {**UNARY, **BINARY, **REDUCE, **SOURCES, **STRUCTURE, **CONTROL, **TEMPLATES}
"""Op -> template: one way (or several spellings) to call every op of the table."""


NOT_IN_PROGRAMS = frozenset({Op.CALL_MODULE})
"""Ops no generated program can make: a ``call_module`` comes from a ``graph_lab.nn`` module object, which a
program written as source text over arrays has none of (tests/nn/test_nn_symbolic.py covers it)."""


def uncovered_ops() -> list[str]:
    """Ops of the table the generator cannot write (the coverage test keeps this empty)."""
    return [op.value for op in Op if op not in SOURCE_OPS and op not in MENU and op not in STATIC_CONSTANT_OPS
            and op not in NOT_IN_PROGRAMS]


@dataclass(frozen=True)
class Options:
    statements: tuple[int, int] = (3, 10)
    """How many top-level statements, at least and at most."""
    data_ifs: bool = True
    """``if`` on tensor data, and Python floats taken out of tensors."""
    static_ifs: bool = True
    loops: bool = True
    side_effects: bool = False
    """print, log.append, attribute and global writes (needs the module state)."""
    probes: bool = False
    """Reads of a global, a closure cell, a Python argument, an attribute and a container's length."""
    focus: tuple[str, ...] = ()
    """Ops to call more often (a third of the assignments): a campaign aimed at a few ops."""
    mutation: bool = False
    """In-place writes into arguments, fresh arrays and views of both (``menu_writes.py``), and arguments that
    alias: the same array twice, or overlapping slices of one."""
    python: bool = True
    """Python around the ops: loops over rows, while loops on data, comprehensions, calls of helper functions,
    an int taken out of a tensor used as an index, a reshape to sizes read from ``.shape``."""


DTYPES = [(np.float64, 55), (np.float32, 25), (np.int64, 8), (np.int32, 5), (np.bool_, 7)]


class Generator:
    def __init__(self, seed: int, options: Options = Options()):
        self.seed = seed
        self.options = options
        self.rng = random.Random(seed)
        self.counter = 0
        self.samples = self._sample_namespace()
        self.uses_helpers = False
        self.aliases: tuple = ()
        self.read_only: set[str] = set()

    def program(self) -> Program:
        args = self._arguments()
        scope = list(args)
        body = self._block(scope, self.rng.randint(*self.options.statements), depth=0, in_loop=False)
        if self.options.probes:
            body = self._with_probes(body, scope)
        returns = self._returns(body, scope)
        style = "single" if len(returns) == 1 and self.rng.random() < 0.5 else \
            self.rng.choice(["tuple", "tuple", "list", "dict"])
        stateful = self.options.side_effects or self.options.probes
        written = ("COUNTER",) if self.options.side_effects else ()
        return Program(self.seed, args, body, returns, style, stateful, self.options.probes, written,
                       self.uses_helpers, self.aliases)

    # --- arguments

    def _arguments(self) -> list[Var]:
        sizes = [self.rng.randint(1, 5) for _ in range(3)]
        if self.rng.random() < 0.05:
            sizes[self.rng.randrange(3)] = 0
        a, b, c = sizes
        shapes = [(a, b), (b,), (a, b, c), (), (b, a), (a, 1), (1, b), (a, b), (c, a, b)]
        out = []
        for i in range(self.rng.randint(1, 3)):
            dtype = np.dtype(self.rng.choices([d for d, _ in DTYPES], [w for _, w in DTYPES])[0])
            lo, hi = (0.0, 1.0) if dtype.kind == "b" else (-3.0, 3.0)
            out.append(Var(f"x{i}", self.rng.choice(shapes), dtype, lo, hi))
        if self.options.mutation and len(out) >= 2 and self.rng.random() < 0.4:
            out[1], self.aliases = self._alias(out[0])
        return out

    def _alias(self, base: Var) -> tuple[Var, tuple]:
        """The second argument as the first one again, or as an overlapping slice of it: ``(i, j, key)`` says
        argument i is argument j indexed by ``key`` (None: the same array)."""
        if base.ndim >= 1 and base.shape[0] >= 2 and self.rng.random() < 0.6:
            key = self.rng.choice([(slice(1, None),), (slice(None, -1),), (slice(None, None, -1),)])
            shape = np.zeros(base.shape)[key].shape
            return Var("x1", shape, base.dtype, base.lo, base.hi), ((1, 0, key),)
        return Var("x1", base.shape, base.dtype, base.lo, base.hi), ((1, 0, None),)

    # --- statements

    def _block(self, scope: list[Var], n: int, depth: int, in_loop: bool) -> list:
        body = []
        for _ in range(n):
            stmt = self._statement(scope, depth, in_loop)
            if stmt is not None:
                body.append(stmt)
                self._define(scope, stmt.defines)
                self._note_read_only(stmt)
        return body

    def _statement(self, scope, depth, in_loop):
        o = self.options
        kinds = {"assign": 70, "data_if": 6 * o.data_ifs * (depth < 2), "static_if": 4 * o.static_ifs * (depth < 2),
                 "loop": 6 * o.loops * (depth < 2 and not in_loop), "scalar": 4 * o.data_ifs,
                 "effect": 12 * o.side_effects, "python": 6 * o.python * (not in_loop), "write": 14 * o.mutation}
        kind = self.rng.choices(list(kinds), list(kinds.values()))[0]
        if kind == "data_if" or kind == "static_if":
            return self._if(scope, depth, in_loop, data=kind == "data_if")
        if kind == "loop":
            return self._loop(scope)
        if kind == "scalar":
            return self._scalar(scope)
        if kind == "effect":
            return self._side_effect(scope)
        if kind == "python":
            return self._python(scope)
        if kind == "write":
            return self._write(scope)
        return self._assign(scope)

    def _note_read_only(self, stmt) -> None:
        """Names that may hold a read-only array (a broadcast view, or anything made from one): never written.
        (The samples cannot tell: each statement runs on fresh zeros.)"""
        text = "\n".join(emit([stmt], ""))
        if "broadcast_to" in text or any(re.search(rf"\b{n}\b", text) for n in self.read_only):
            self.read_only |= {v.name for v in stmt.defines}

    def _write(self, scope) -> Line | None:
        writable = [v for v in scope if v.name not in self.read_only]
        made = menu_writes.write(self.rng, writable, self._name)
        if made is None:
            return None
        lines, new = made
        values = self._run_sample(lines, scope, [v.name for v in new])
        if values is None:
            return None
        typed = [Var(v.name, np.shape(a), np.asarray(a).dtype, v.lo, v.hi) for v, a in zip(new, values)]
        return Line(lines, typed, ("write",))

    def _assign(self, scope: list[Var], ops: list | None = None) -> Line | None:
        picker = Picker(self.rng, scope)
        focus = [Op(name) for name in self.options.focus]
        for _ in range(30):
            op = self.rng.choice(focus if focus and self.rng.random() < 0.35 else ops or list(MENU))
            made = MENU[op](picker)
            if made is None:
                continue
            stmt = self._typed(made, scope)
            if stmt is not None:
                return stmt
        return None

    def _typed(self, made: Expr | Block, scope: list[Var]) -> Line | None:
        """The statement for a template's result, with its new variables typed by running it on samples."""
        if magnitude(made.lo, made.hi) > LIMIT or not (math.isfinite(made.lo) and math.isfinite(made.hi)):
            return None
        if isinstance(made, Expr):
            names = [self._name("h")]
            lines = [f"{names[0]} = {made.text}"]
        else:
            names = [self._name("h") for _ in range(made.targets)]
            lines = [line.format(*names) for line in made.lines]
        values = self._run_sample(lines, scope, names)
        if values is None:
            return None
        new = []
        for name, value in zip(names, values):
            a = np.asarray(value)
            if a.dtype.kind not in "biuf" or a.size > 4096:
                return None
            lo, hi = (0.0, 1.0) if a.dtype.kind == "b" else (made.lo, made.hi)
            new.append(Var(name, a.shape, a.dtype, lo, hi))
        return Line(lines, new, made.ops)

    def _if(self, scope, depth, in_loop, data: bool) -> If | None:
        test = self._data_test(scope) if data else self._static_test(scope)
        if test is None:
            return None
        branch_scope = list(scope)
        then_extra = self._block(branch_scope, self.rng.randint(0, 1), depth + 1, in_loop)
        first = self._assign(branch_scope)
        if first is None or len(first.defines) != 1:
            return None
        target = first.defines[0]
        second = None
        for _ in range(15):
            candidate = self._assign(scope)
            if candidate and len(candidate.defines) == 1 and _same_type(candidate.defines[0], target):
                second = candidate
                break
        if second is None:
            rhs = first.code[0].split(" = ", 1)[1]
            negated = f"~({rhs})" if target.dtype.kind == "b" else f"-({rhs})"
            second = Line([f"{target.name} = {negated}"], [target], first.ops + ("neg",))
            if self._run_sample(second.code, scope, [target.name]) is None:
                return None  # it read a variable of the other branch
        else:
            other = second.defines[0]
            renamed = [re.sub(rf"\b{other.name}\b", target.name, line) for line in second.code]
            second = Line(renamed, [target], second.ops)
            target = Var(target.name, target.shape, target.dtype, min(target.lo, other.lo), max(target.hi, other.hi))
        if target.dtype.kind != "b":
            target = Var(target.name, target.shape, target.dtype, min(target.lo, -target.hi),
                         max(target.hi, -target.lo))
        return If(test, then_extra + [first], [second], [target], data)

    def _data_test(self, scope) -> str | None:
        v = Picker(self.rng, scope).numeric(lambda v: v.size > 0)
        if v is None:
            return None
        return self.rng.choice([f"float({v.name}.sum()) > 0.0", f"{v.name}.mean() > 0", f"({v.name} > 0).any()",
                                f"int(np.argmax({v.name})) == 0", f"{v.name}.max() >= 1.0",
                                f"bool(({v.name} < 0.5).all())"])

    def _static_test(self, scope) -> str | None:
        v = Picker(self.rng, scope).array(lambda v: v.ndim >= 1)
        if v is None:
            return None
        return self.rng.choice([f"{v.name}.shape[0] > {self.rng.randint(1, 4)}", f"{v.name}.ndim == 2",
                                f"{v.name}.dtype == np.float32", f"{v.name}.size % 2 == 0"])

    def _loop(self, scope) -> Loop | None:
        picker = Picker(self.rng, scope)
        acc = picker.numeric()
        if acc is None:
            return None
        count = self.rng.randint(1, 3)
        other = picker.partner(acc, lambda v: v.dtype.kind in "iuf" and v is not acc)
        x, xlo, xhi = picker.bounded(other, 10.0) if other is not None else ("0.5", 0.5, 0.5)
        forms = [(f"{acc.name} = {acc.name} * 0.5 + {x}", lambda lo, hi: (lo * 0.5 + xlo, hi * 0.5 + xhi)),
                 (f"{acc.name} = np.maximum({acc.name}, {x})", lambda lo, hi: (max(lo, xlo), max(hi, xhi))),
                 (f"{acc.name} = {acc.name} + {x} * i", lambda lo, hi: (lo + min(0, xlo) * count,
                                                                        hi + max(0, xhi) * count))]
        if acc.dtype.kind == "f":
            forms.append((f"{acc.name} = np.tanh({acc.name} + {x})", lambda lo, hi: (-1.0, 1.0)))
        code, step = self.rng.choice(forms)
        lo, hi = min(acc.lo, xlo), max(acc.hi, xhi)
        for _ in range(count):
            lo, hi = step(lo, hi)
            lo, hi = min(lo, acc.lo), max(hi, acc.hi)
        if magnitude(lo, hi) > LIMIT:
            return None
        values = self._run_sample([f"for i in range({count}):", "    " + code], scope, [acc.name])
        if values is None or np.asarray(values[0]).dtype != acc.dtype or np.shape(values[0]) != acc.shape:
            return None
        new = Var(acc.name, acc.shape, acc.dtype, lo, hi)
        body = [Line([code], [new], ("loop",))]
        return Loop(f"for i in range({count}):", body, [new])

    def _scalar(self, scope) -> Line | None:
        v = Picker(self.rng, scope).numeric(lambda v: v.size > 0)
        if v is None:
            return None
        name = self._name("s")
        form, lo, hi = self.rng.choice([(f"float({v.name}.sum())", min(0, v.lo * v.size), max(0, v.hi * v.size)),
                                        (f"float(np.mean({v.name}))", v.lo, v.hi),
                                        (f"{v.name}.max().item()", v.lo, v.hi)])
        if magnitude(lo, hi) > LIMIT or self._run_sample([f"{name} = {form}"], scope, [name]) is None:
            return None
        return Line([f"{name} = {form}"], [Var(name, (), np.dtype(np.float64), lo, hi, scalar=True)], ("item",))

    # --- Python around the ops

    def _python(self, scope) -> Line | None:
        picker = Picker(self.rng, scope)
        v = picker.numeric(lambda v: v.size > 0 and v.ndim >= 1)
        if v is None:
            return None
        t, n = self._name("h"), self._name("n")
        n_rows, m = v.shape[0], magnitude(v.lo, v.hi)
        forms = [  # (lines, interval of t)
            ([f"{t} = np.zeros_like({v.name}[0])", f"for row in {v.name}:", f"    {t} = {t} + row"],
             (min(0.0, n_rows * v.lo), max(0.0, n_rows * v.hi))),
            ([f"{t} = np.stack([{v.name} * c for c in (0.5, 1.0, 2.0)])"], (min(2 * v.lo, 0.5 * v.lo),
                                                                           max(2 * v.hi, 0.5 * v.hi))),
            ([f"{t} = scaled({v.name})"], (-0.5, 0.5)),
            ([f"{t}, {n} = both({v.name}, {v.name} * 0.5)"], (-1.5 * m, 1.5 * m)),
            ([f"{n} = int(np.argmax({v.name}))", f"{t} = {v.name}.reshape(-1)[{n}]"], (v.lo, v.hi)),
            ([f"{t} = {v.name}.reshape({v.name}.shape[0], -1)"], (v.lo, v.hi)),
        ]
        if v.dtype.kind == "f":
            forms.append(([f"{t} = {v.name} * 1.0", f"{n} = 0",
                           f"while float(np.abs({t}).max()) > 1.0 and {n} < 4:", f"    {t} = {t} * 0.5",
                           f"    {n} += 1"], (min(v.lo, 0.0), max(v.hi, 0.0))))
        lines, (lo, hi) = self.rng.choice(forms)
        if magnitude(lo, hi) > LIMIT:
            return None
        self.uses_helpers = self.uses_helpers or any("scaled(" in line or "both(" in line for line in lines)
        values = self._run_sample(lines, scope, [t])
        if values is None:
            return None
        a = np.asarray(values[0])
        return Line(lines, [Var(t, a.shape, a.dtype, lo, hi)], ("python",))

    # --- side effects and reads of Python state

    def _side_effect(self, scope) -> Line | None:
        v = Picker(self.rng, scope).numeric()
        if v is None:
            return None
        n = self._name("p")
        options = [f'print("{n}", {v.name}.shape, {v.name}.dtype)',
                   f'print("{n}", round(float({v.name}.sum()), 4))',
                   f"log.append({v.name})",
                   f"log.append(round(float({v.name}.sum()), 4))",
                   "state.calls = state.calls + 1",
                   f"state.last = {v.name}",
                   f"state.total = state.total + round(float({v.name}.sum()), 4)",
                   "COUNTER = COUNTER + 1",
                   'print("effects", len(log), state.calls, COUNTER)']
        code = self.rng.choice(options)
        return Line([code], [], ("effect",), effect=True)

    def _with_probes(self, body: list, scope: list[Var]) -> list:
        """Append one read of each kind of Python state the captures must guard."""
        out = list(body)
        for form in ("{0} * G", "{0} + k", "{0} * c", "{0} * state.scale"):
            v = Picker(self.rng, scope).floating()
            if v is None:
                continue
            var = Var(self._name("h"), v.shape, v.dtype, v.lo * 2 - 2, v.hi * 2 + 2)
            out.append(Line([f"{var.name} = {form.format(v.name)}"], [var], ("probe",)))
            scope.append(var)
        acc = Picker(self.rng, scope).floating()
        if acc is not None:
            out.append(Loop("for w in items:", [Line([f"{acc.name} = {acc.name} * w"], [acc], ("probe",))], [acc]))
        return out

    # --- helpers

    def _returns(self, body: list, scope: list[Var]) -> list[str]:
        """The variables nothing reads (the last few), and sometimes one more."""
        used = _names_read(body)
        leaves = [v.name for v in scope if v.name not in used]
        chosen = leaves[-6:] if self.options.probes else leaves[-3:]
        chosen = chosen or [scope[-1].name]
        if self.rng.random() < 0.3:
            chosen.append(self.rng.choice(scope).name)
        return list(dict.fromkeys(chosen))

    def _define(self, scope: list[Var], new: list[Var]) -> None:
        for v in new:
            scope[:] = [s for s in scope if s.name != v.name] + [v]

    def _name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def _sample_namespace(self) -> dict[str, Any]:
        namespace: dict[str, Any] = {"np": np, "F": F, "math": math, "k": 0.25, "c": 0.75, "i": 0, "w": 0.5}
        exec(STATE_PREAMBLE + HELPERS, namespace)  # our own text: the module state and helpers programs use
        return namespace

    def _run_sample(self, lines: list[str], scope: list[Var], names: list[str]) -> list | None:
        """Run ``lines`` on zero-filled arrays of the variables' types; the new values, or None if NumPy refused."""
        namespace = dict(self.samples)
        for v in scope:
            namespace[v.name] = 0.0 if v.scalar else np.zeros(v.shape, v.dtype)
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec("\n".join(lines), namespace)  # generated from our templates only
        except Exception:
            return None
        return [namespace[n] for n in names]


def _same_type(a: Var, b: Var) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and not a.scalar and not b.scalar


def _names_read(body: list) -> set[str]:
    """Names each statement reads, other than the ones it defines itself."""
    used: set[str] = set()
    for s in body:
        if isinstance(s, Line):
            used |= set(re.findall(r"\b[a-z]\w*\b", " ".join(s.code))) - {v.name for v in s.defines}
        elif isinstance(s, If):
            used |= set(re.findall(r"\b[a-z]\w*\b", s.test)) | _names_read(s.body) | _names_read(s.orelse)
        elif isinstance(s, Loop):
            used |= _names_read(s.body)
    return used


def generate(seed: int, options: Options = Options()) -> Program:
    """The program of ``seed``: the same text on every run."""
    return Generator(seed, options).program()
