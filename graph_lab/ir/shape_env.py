"""What is known about the size symbols of one graph, and the shape guards that record what had to be assumed.

Shape rules ask two kinds of question about sizes (``symbolic.py`` holds the expressions):

- ``require(fact)``: the op is only valid if the fact holds (matmul's inner sizes ``B == T``, a reshape that
  keeps the element count ``d % 2 == 0``). Proved from what is known: nothing to record. Disproved: an error
  now, at capture time. Neither: the fact becomes a *shape guard*, checked on every run, with the user's line.
- ``decide(fact)``: the shape depends on the answer (``x[:4]`` has 4 rows only if ``B >= 4``; ``if T > 1:``
  in user code). Proved or disproved: that answer. Neither: the example inputs' sizes (the *hints*) decide, and
  the outcome is guarded; with ``size_branch="specialize"`` the symbols are pinned to the example's sizes
  instead. Without an example there is no answer to take, and it is an error that says how to give one.

A ``ShapeEnv`` made from a finished graph's guards (``facts_from``) is *strict*: it proves or refuses, records
nothing. ``verify()``, the parser and graph edits use one, so a graph must carry every fact its types rely on.

Sizes 0 and 1 are special, as in TorchDynamo: a symbol is assumed to be at least 2 unless declared otherwise
(``Dim("B", min=1)``). A size of 1 broadcasts and a size of 0 has no elements, and a graph that must hold for
both would need a branch at every broadcast and reduction; so those sizes get their own static graphs, and the
guard ``B >= 2`` says so.
"""

from __future__ import annotations

import keyword
from contextlib import nullcontext
from contextvars import ContextVar
from dataclasses import dataclass

from ..errors import OpError
from .guard_records import ShapeGuard
from .relations import Rel, bounds, normalize, rational_terms, relation, relaxed_bounds
from .symbolic import (FUNCTIONS, INF, Expr, add, evaluate, free_symbols, mod, mul,
                       substitute, symbol, symbol_name)

RESERVED_NAMES = frozenset({"True", "False", "None", "inf", "nan", "int", "float", "bool", "complex", "array",
                            "at", "shape", "value", "guard", "graph", "return", "size", *FUNCTIONS})


@dataclass(frozen=True)
class Dim:
    """A named symbolic size with its range: ``Dim("B")``, ``Dim("T", min=1, max=512)``.

    In a shape (``trace(f, {"x": (Dim("B"), 8)})``) a plain string ``"B"`` means ``Dim("B")``."""

    name: str
    """The symbol's name as the IR prints it: a Python identifier."""
    min: int = 2
    """The smallest size the graph must hold for. 2 by default: sizes 0 and 1 are specialized (see above)."""
    max: int | None = None
    """The largest size, or None for no limit."""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier() or keyword.iskeyword(self.name) \
                or self.name in RESERVED_NAMES or self.name.startswith("_"):
            raise ValueError(f"a size symbol needs a plain name like 'B' or 'seq_len', got {self.name!r}")
        if type(self.min) is not int or self.min < 0:
            raise ValueError(f"Dim({self.name!r}): min must be an int >= 0, got {self.min!r}")
        if self.max is not None and (type(self.max) is not int or self.max < self.min):
            raise ValueError(f"Dim({self.name!r}): max must be an int >= min={self.min}, got {self.max!r}")


class ShapeEnv:
    """The size symbols of one capture (or one finished graph), their ranges, the facts known, and the guards."""

    def __init__(self, *, hints: dict[str, int] | None = None, strict: bool = False, size_branch: str = "guard"):
        self.dims: dict[str, Dim] = {}
        """Declared symbols, in declaration order."""
        self.ranges: dict[str, tuple] = {}
        """name -> (lo, hi), narrowed by facts like ``B >= 4``; ``hi`` may be ``math.inf``."""
        self.replacements: dict[str, object] = {}
        """Symbols known equal to an expression (after ``B == T``: ``T -> B``), substituted before proving."""
        self.divisible: set[tuple] = set()
        """``(e, c)`` for each known ``e % c == 0``."""
        self.facts: set[Rel] = set()
        """Other known facts, in normal form."""
        self.hints = hints
        """The example's size of each symbol, or None (abstract capture: no example)."""
        self.strict = strict
        """True: prove or refuse, never record (checking a finished graph)."""
        self.size_branch = size_branch
        """'guard' (guard the outcome seen) or 'specialize' (pin the symbols to the example's sizes)."""
        self.guards: list = []
        """Where new shape guards go (a capture points this at its graph's guard list)."""
        self.loc = None
        """The user's source line of the operation being captured, given to new guards."""
        self.recorder = None
        """The capture's recorder, which turns a symbolic size into a graph value (``frontends.symbols``)."""
        self.where = None
        """A function giving the user's current line, for a capture whose user code does not run in Python
        frames (compile's bytecode interpreter); None: the Python stack tells."""

    def here(self):
        """The user's line being captured now."""
        from .source import user_location
        return self.where() if self.where is not None else user_location(1)

    # --- symbols

    def declare(self, dim: Dim, loc=None) -> Expr:
        """The symbol of ``dim``, recording its range as guards the first time it is seen."""
        known = self.dims.get(dim.name)
        if known is not None:
            if known != dim:
                raise OpError(f"the size {dim.name} is declared twice with different ranges: {known} and {dim}")
            return symbol(dim.name)
        self.dims[dim.name] = dim
        self.ranges[dim.name] = (dim.min, INF if dim.max is None else dim.max)
        s = symbol(dim.name)
        if self.hints is not None and dim.name in self.hints:
            hint = self.hints[dim.name]
            if hint < dim.min or (dim.max is not None and hint > dim.max):
                raise OpError(_range_message(dim, hint))
        why = "sizes 0 and 1 are specialized" if dim.min == 2 else "declared range"
        if dim.min > 0:
            self._record(relation(">=", s, dim.min), why, loc)
        if dim.max is not None:
            self._record(relation("<=", s, dim.max), "declared range", loc)
        return s

    def simplify(self, x):
        """``x`` with known equalities substituted (after ``B == T``, every ``T`` reads ``B``)."""
        return substitute(x, self.replacements) if self.replacements and isinstance(x, Expr) else x

    # --- proving

    def prove(self, rel: Rel) -> bool | None:
        """True or False when what is known settles ``rel``; None when it does not."""
        diff = self.simplify(rel.diff)
        if rel.op != ">=" and not rational_terms(diff, self.divisible):
            return rel.op == "=="
        normal = normalize(rel.op, diff)
        if normal in self.facts:
            return True
        if normal.negate() in self.facts:
            return False
        for bound in (bounds, relaxed_bounds):
            lo, hi = bound(diff, self.ranges)
            if rel.op == ">=":
                if lo >= 0 or hi < 0:
                    return lo >= 0
            elif lo > 0 or hi < 0:
                return rel.op == "!="
        return None

    def require(self, rel: Rel, why: str) -> None:
        """The caller is only valid if ``rel`` holds: proved, refused (``OpError``), or recorded as a guard."""
        known = self.prove(rel)
        if known:
            return
        if known is False:
            raise OpError(f"{why}: needs {rel}, which cannot hold ({self._known_ranges(rel)})")
        facts = self._divisibility(rel) or [rel]
        if self.strict:
            raise OpError(f"{why}: needs {' and '.join(map(str, facts))}, which the graph's shape guards do not "
                          f"imply")
        for fact in facts:
            if self.hints is not None and not fact.holds(self.hints):
                raise OpError(f"{why}: needs {fact}, which the example's sizes break ({self._hint_text(fact)})")
        for fact in facts:
            self._record(fact, why, self.loc)

    def decide(self, rel: Rel, why: str) -> bool:
        """Whether ``rel`` holds: proved, or else as for the example's sizes, with a guard on that outcome."""
        known = self.prove(rel)
        if known is not None:
            return known
        if self.strict:
            raise OpError(f"{why} depends on whether {rel}, which the graph's shape guards do not decide")
        if self.hints is None:
            raise OpError(f"{why} depends on whether {rel}, which is not the same for every size. Give bounds "
                          f"that decide it (Dim(name, min=..., max=...)), or an example (trace(..., example=...)) "
                          f"so that the outcome for its sizes is taken and guarded")
        outcome = rel.holds(self.hints)
        if self.size_branch == "specialize":
            for name in sorted(free_symbols(rel)):
                self.require(relation("==", symbol(name), self.hints[name]), f"{why} (specialized)")
        else:
            self._record(rel if outcome else rel.negate(), why, self.loc)
        return outcome

    def specialize(self, x, why: str) -> int:
        """The value ``x`` has for the example's sizes, guarded ``x == value``: for a size Python needs as an
        ``int`` (``range(T)``, ``np.zeros((T, 4))``)."""
        x = self.simplify(x)
        if not isinstance(x, Expr):
            return x
        if self.hints is None:
            raise OpError(f"{why} needs a value for {x}, and an abstract capture has no example to take one "
                          f"from. Keep the size symbolic (pass it to reshape, slicing, a tensor op, or use "
                          f"np.ones_like instead of np.ones), or trace with an example: the graph is then "
                          f"specialized to the example's size, with a guard")
        value = evaluate(x, self.hints)
        self.require(relation("==", x, value), why)
        return value

    # --- learning

    def assume(self, rel: Rel) -> None:
        """Add ``rel`` to what is known (no guard): ranges, substitutions and divisibility are kept apart."""
        diff = self.simplify(rel.diff)
        if rel.op == "==" and (self._assume_divisible(diff) or self._assume_equal(diff)):
            return
        if rel.op == ">=" and self._assume_bound(diff):
            return
        self.facts.add(normalize(rel.op, diff))

    def _assume_divisible(self, diff) -> bool:
        if isinstance(diff, Expr) and len(diff.terms) == 1:
            (m, c), = diff.terms
            if len(m) == 1 and m[0][0] == "mod" and type(m[0][2]) is int:
                self.divisible.add((m[0][1], m[0][2]))
                return True
        return False

    def _assume_equal(self, diff) -> bool:
        """``c*s + rest == 0`` with ``c`` = +-1 and ``s`` not in ``rest``: substitute ``s -> -c*rest``, for the
        symbol declared last (so after ``B == T`` the older name ``B`` is the one that stays)."""
        if not isinstance(diff, Expr):
            return False
        order = list(self.dims)
        candidates = []
        for m, c in diff.terms:
            if len(m) == 1 and m[0][0] == "sym" and c in (1, -1):
                name = m[0][1]
                rest = add(diff, mul(symbol(name), -c))
                if name not in free_symbols(rest):
                    age = order.index(name) if name in order else len(order)
                    candidates.append((age, name, c, rest))
        if not candidates:
            return False
        _, name, c, rest = max(candidates, key=lambda t: (t[0], t[1]))
        self._replace(name, mul(rest, -c))
        return True

    def _replace(self, name: str, value) -> None:
        lo, hi = self.ranges.pop(name, (0, INF))
        if isinstance(value, int):
            self.ranges[name] = (value, value)  # kept for messages; the symbol no longer appears after simplify
        elif symbol_name(value) is not None:
            other = symbol_name(value)
            olo, ohi = self.ranges.get(other, (0, INF))
            self.ranges[other] = (max(lo, olo), min(hi, ohi))
        self.replacements = {k: substitute(v, {name: value}) for k, v in self.replacements.items()}
        self.replacements[name] = value
        self.facts = {normalize(f.op, self.simplify(f.diff)) for f in self.facts}
        self.divisible = {(self.simplify(e), c) for e, c in self.divisible}

    def _assume_bound(self, diff) -> bool:
        """``s + k >= 0`` or ``-s + k >= 0``: narrow the range of ``s``."""
        if not isinstance(diff, Expr):
            return False
        terms = dict(diff.terms)
        k = terms.pop((), 0)
        if len(terms) != 1:
            return False
        (m, c), = terms.items()
        if len(m) != 1 or m[0][0] != "sym" or c not in (1, -1):
            return False
        lo, hi = self.ranges.get(m[0][1], (0, INF))
        self.ranges[m[0][1]] = (max(lo, -k), hi) if c == 1 else (lo, min(hi, k))
        return True

    # --- recording

    def _record(self, rel: Rel, why: str, loc) -> None:
        self.guards.append(ShapeGuard(rel, loc, why))
        self.assume(rel)

    def _divisibility(self, rel: Rel) -> list[Rel] | None:
        """For an unproved ``==`` that holds once some ``e // c`` divide exactly: those simpler facts
        (``d % 2 == 0`` rather than ``T*d == 2*T*(d//2)``)."""
        if rel.op != "==":
            return None
        diff = self.simplify(rel.diff)
        atoms = {(a[1], a[2]) for m, _ in getattr(diff, "terms", ()) for a in m
                 if a[0] != "sym" and type(a[2]) is int and a[2] > 0}
        if not atoms or rational_terms(diff, self.divisible | atoms):
            return None
        return [relation("==", mod(e, c), 0) for e, c in sorted(atoms, key=str)]

    def _known_ranges(self, rel: Rel) -> str:
        names = sorted(free_symbols(self.simplify(rel.diff)))
        if not names:
            return "the sizes are constants"
        return ", ".join(_range_text(n, self.ranges.get(n, (0, INF))) for n in names)

    def _hint_text(self, rel: Rel) -> str:
        return ", ".join(f"{n} = {self.hints[n]}" for n in sorted(free_symbols(rel)))


def _range_text(name: str, r: tuple) -> str:
    lo, hi = r
    if lo == hi:
        return f"{name} = {lo}"
    return f"{name} >= {lo}" if hi == INF else f"{lo} <= {name} <= {hi}"


def _range_message(dim: Dim, size: int) -> str:
    declared = _range_text(dim.name, (dim.min, INF if dim.max is None else dim.max))
    text = f"the example's size {size} for {dim.name} is outside its range {declared}"
    if size < 2 <= dim.min:
        text += (f". Sizes 0 and 1 are specialized: a symbolic size is assumed >= 2 (a size of 1 broadcasts, a "
                 f"size of 0 has no elements). Declare Dim({dim.name!r}, min={size}) to include it, or capture "
                 f"with a static size {size}")
    return text


# --- the environment shape rules consult


_CURRENT: ContextVar[ShapeEnv | None] = ContextVar("graph_lab_shape_env", default=None)
_NOTHING_KNOWN = ShapeEnv(strict=True)


def in_use() -> ShapeEnv | None:
    """The ShapeEnv that ``using`` set (the capture or check in progress), or None: shapes are static."""
    return _CURRENT.get()


def current() -> ShapeEnv:
    """The ShapeEnv of the capture or check in progress; an empty strict one when there is none."""
    env = _CURRENT.get()
    return env if env is not None else _NOTHING_KNOWN


class using:
    """``with using(env):`` makes ``env`` the one shape rules consult, for the block."""

    __slots__ = ("env", "token")

    def __init__(self, env: ShapeEnv | None):
        self.env = env

    def __enter__(self):
        self.token = _CURRENT.set(self.env)
        return self.env

    def __exit__(self, *exc) -> None:
        _CURRENT.reset(self.token)


def make_current(env: ShapeEnv) -> None:
    """Make ``env`` the one shape rules consult from now until the enclosing ``using`` block ends (which puts back
    the one it found): a capture that declares its first size symbol in the middle of a step (an inlined call)."""
    _CURRENT.set(env)


def require(rel: Rel, why: str) -> None:
    current().require(rel, why)


def decide(rel: Rel, why: str = "a shape rule") -> bool:
    return current().decide(rel, why)


def require_equal(a, b, why: str) -> None:
    """Sizes ``a`` and ``b`` must be equal (static sizes are compared by the caller, with its own message)."""
    if a != b:
        require(relation("==", a, b), why)


def facts_from(guards) -> ShapeEnv:
    """A strict ShapeEnv knowing the facts of a graph's shape guards."""
    env = ShapeEnv(strict=True)
    for g in guards:
        if isinstance(g, ShapeGuard):
            env.assume(g.fact)
    return env


_NO_FACTS = nullcontext()


def graph_facts(graph):
    """A ``with`` block in which shape rules know ``graph``'s shape guards (no-op when a capture is running or
    the graph has none)."""
    if not graph.guards or _CURRENT.get() is not None:
        return _NO_FACTS
    if not any(isinstance(g, ShapeGuard) for g in graph.guards):
        return _NO_FACTS
    return using(facts_from(graph.guards))
