"""Guards of a compiled segment, and their compilation into one generated Python function.

Each guard fetches a value through its source and checks one fact: its type, its identity, its value, an
array's type/shape/dtype, a container's length or keys. ``GuardSet.compile`` writes all checks of an entry as
one function, so a cache hit costs a few attribute reads and comparisons. The generated source refers to
sources and expected values only by position (``S[3]``, ``K[3]``): no text from user data is ever written into it.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...ir.source import SourceLoc
from .overlap import block_layout, disjoint_blocks, first_overlap
from .size_checks import sizes_check
from .source_reads import SourceReads
from .sources import Const, DerivedSource, ItemSource, Source

KINDS = ("type", "id", "equals", "array", "dims", "sizes", "len", "keys", "alias", "distinct", "writeable",
         "disjoint")
PAIR_KINDS = ("alias", "distinct", "disjoint")
"""Guards on two sources: ``expected`` is the other one."""


@dataclass
class Guard:
    kind: str
    """One of KINDS."""
    source: Source
    """Where the guarded value is read from."""
    expected: Any
    """The type, object, value, (shape, dtype), length or keys seen at capture; for "alias" ("distinct"), the
    source of the array this one was (was not) the same object as; for "disjoint", the source of an array this
    one (which the graph writes into) shared no memory with; None for "writeable"."""
    loc: SourceLoc | None = None
    """The user's line whose capture depended on this fact."""

    def describe(self) -> str:
        what = self.source.describe()
        if self.kind == "type":
            text = f"type({what}) is {self.expected.__name__}"
        elif self.kind == "id":
            text = f"{what} is the same object ({_short(self.expected)})"
        elif self.kind == "equals":
            text = f"{what} == {self.expected!r}"
        elif self.kind == "array":
            shape, dtype = self.expected
            text = f"{what} is an ndarray of shape {shape} and dtype {dtype}"
        elif self.kind == "dims":
            pattern, dtype = self.expected
            shown = ", ".join("*" if p is None else str(p) for p in pattern)
            text = f"{what} is an ndarray of shape ({shown}) and dtype {dtype} (* any size)"
        elif self.kind == "sizes":
            names, facts = self.expected
            text = (f"sizes {', '.join(names)} = {what} satisfy " + ", ".join(str(g.fact) for g in facts))
        elif self.kind == "len":
            text = f"len({what}) == {self.expected}"
        elif self.kind == "alias":
            text = f"{what} is the same array as {self.expected.describe()}"
        elif self.kind == "distinct":
            text = f"{what} is not the same array as {self.expected.describe()}"
        elif self.kind == "writeable":
            text = f"{what} is writeable (the graph writes into it)"
        elif self.kind == "disjoint":
            text = f"{what} shares no memory with {self.expected.describe()} (the graph writes into it)"
        else:
            text = f"{what}.keys() == {list(self.expected)!r}"
        return text + (f"  (from {self.loc})" if self.loc else "")

    def failure_reason(self, inputs) -> str:
        """Why this guard fails for the state ``inputs``, in words (its value read again through its source)."""
        try:
            value = self.source.fetch(inputs)
        except Exception as e:  # the source itself is gone (a missing attribute, a shorter list)
            return f"{self.source.describe()} could not be read ({type(e).__name__})"
        return self.explain_failure(value)

    def explain_failure(self, value) -> str:
        """Why ``value`` breaks this guard, in words (used by the recompile log)."""
        what = self.source.describe()
        where = f" (guard from {self.loc})" if self.loc else ""
        if self.kind == "array":
            shape, dtype = self.expected
            if type(value) is not np.ndarray:  # a subclass (np.matrix) too: the guard checks the exact type
                return f"{what} is {_a(type(value).__name__)}, the cached graph was built for an ndarray{where}"
            if value.shape != shape:
                for i, (a, b) in enumerate(zip(value.shape, shape)):
                    if a != b:
                        return f"{what}.shape[{i}] is {a}, the cached graph was built for {b}{where}"
                return f"{what}.shape is {value.shape}, the cached graph was built for {shape}{where}"
            return f"{what}.dtype is {value.dtype}, the cached graph was built for {dtype}{where}"
        if self.kind == "dims":
            return _dims_failure(what, value, self.expected) + where
        if self.kind == "sizes":
            names, facts = self.expected
            sizes = dict(zip(names, value))
            failed = next(g for g in facts if not g.check(sizes))
            shown = ", ".join(f"{n} = {sizes[n]}" for n in names)
            return f"{shown} ({what}) break the cached graph's shape guard {failed.fact}" + \
                (f" ({failed.why})" if failed.why else "") + (f" (from {failed.loc})" if failed.loc else "")
        if self.kind == "equals":
            return f"{what} is {value!r}, the cached graph was built for {self.expected!r}{where}"
        if self.kind == "type":
            return f"{what} is {_a(type(value).__name__)}, the cached graph was built for " \
                   f"{_a(self.expected.__name__)}{where}"
        if self.kind == "len":
            return f"len({what}) is {len(value)}, the cached graph was built for {self.expected}{where}"
        if self.kind == "keys":
            return f"{what} has keys {list(value)!r}, the cached graph was built for {list(self.expected)!r}{where}"
        if self.kind == "alias":
            return f"{what} is not the same array as {self.expected.describe()}, the cached graph was built " \
                   f"for one array passed as both{where}"
        if self.kind == "distinct":
            return f"{what} is the same array as {self.expected.describe()}, the cached graph was built " \
                   f"for two different arrays{where}"
        if self.kind == "writeable":
            return f"{what} is read-only, the cached graph writes into it{where}"
        if self.kind == "disjoint":
            return f"{what} may share memory with {self.expected.describe()}, the cached graph writes into it " \
                   f"and was built for arrays that do not overlap{where}"
        return f"{what} is another object than the one the cached graph was built for{where}"


def same_value(a, b) -> bool:
    """``a == b``, but -0.0 is not 0.0 and NaN is NaN: a graph built with the number as a constant gives
    another result for the other zero (``1 / -0.0``, ``np.ceil(-0.5)`` returned as is)."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, (float, np.floating)) and isinstance(b, (float, np.floating)):
        return (a == b and math.copysign(1.0, a) == math.copysign(1.0, b)) or (a != a and b != b)
    return a == b


def dims_match(value, expected) -> bool:
    """An ndarray of the dtype, the number of dimensions and the static sizes of ``(pattern, dtype)``."""
    pattern, dtype = expected
    return type(value) is np.ndarray and value.dtype == dtype and len(value.shape) == len(pattern) and \
        all(p is None or p == n for p, n in zip(pattern, value.shape))


def _dims_failure(what: str, value, expected) -> str:
    pattern, dtype = expected
    if type(value) is not np.ndarray:
        return f"{what} is {_a(type(value).__name__)}, the cached graph was built for an ndarray"
    if value.ndim != len(pattern):
        return f"{what}.ndim is {value.ndim}, the cached graph was built for {len(pattern)}"
    for i, (p, n) in enumerate(zip(pattern, value.shape)):
        if p is not None and p != n:
            return f"{what}.shape[{i}] is {n}, the cached graph was built for {p}"
    return f"{what}.dtype is {value.dtype}, the cached graph was built for {dtype}"


def _a(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" or noun == "ndarray" else "a ") + noun


def _short(obj) -> str:
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return name if isinstance(name, str) else type(obj).__name__


def _check_expr(kind: str, v: str, k: str, other: str = "") -> str:
    if kind == "type":
        return f"type({v}) is {k}"
    if kind == "id":
        return f"{v} is {k}"
    if kind == "equals":
        return f"type({v}) is type({k}) and {v} == {k}"
    if kind == "same":
        return f"type({v}) is type({k}) and same({v}, {k})"
    if kind == "array":
        return f"type({v}) is ndarray and {v}.shape == {k}[0] and {v}.dtype == {k}[1]"
    if kind == "dims":
        return f"dims_match({v}, {k})"
    if kind == "sizes":  # (k: the facts as one function of the sizes, size_checks.py)
        return f"{k}(*{v})"
    if kind == "len":
        return f"len({v}) == {k}"
    if kind == "alias":
        return f"{v} is {other}"
    if kind == "distinct":
        return f"{v} is not {other}"
    if kind == "writeable":
        return f"{v}.flags.writeable"
    if kind == "disjoint":
        return f"not may_share({v}, {other})"
    return f"type({v}) is dict and tuple({v}) == {k}"


def _lower_bound(g: Guard, counts: tuple, holds: bool = True) -> tuple | None:
    """``(count source, k)`` for a guard "count(...) > k is True" (``holds``) with an int ``k``, else None."""
    source = g.source
    if g.kind != "equals" or g.expected is not holds or not isinstance(source, DerivedSource) or \
            source.fn is not operator.gt or len(source.args) != 2:
        return None
    count, k = source.args
    if not (isinstance(count, DerivedSource) and count.fn in counts and isinstance(k, Const) and
            type(k.value) is int):
        return None
    return count, k.value


_GT_TEXT = "{0} > {1}"


def _lower_bound_guard(count: Source, k: int, holds: bool, loc) -> Guard:
    """The guard "count > k is ``holds``", as ``CaptureContext.apply`` and ``guard`` make it for a derived count
    compared with a constant."""
    return Guard("equals", DerivedSource(operator.gt, (count, Const(k)), _GT_TEXT), holds, loc)


def _key(guard: Guard) -> tuple:
    """What makes two guards the same check (the set keeps the first)."""
    return guard.kind, guard.source, guard.expected if guard.kind in PAIR_KINDS else None


class GuardSet:
    """The guards of one capture, in the order they were added, each check once (see ``_key``).

    ``counts`` are functions that always return an int (``len``): a set made with them merges lower bounds on
    them as they are added, as ``merge_lower_bounds(counts)`` would merge them at the end."""

    def __init__(self, guards: list[Guard] | None = None, counts: tuple = ()):
        self._guards: list[Guard] = []
        self._keys: set = set()
        self.counts = counts
        self._bounds: dict[Source, int] = {}
        """count source -> index in the list of the strongest lower bound on it so far."""
        self._bound_k: dict[int, int] = {}
        """index of a lower bound -> its k (the pending one's, if any)."""
        self._pending: dict[int, tuple] = {}
        """index -> (count, k, holds, loc) of a bound "count > k is ``holds``" that the list holds None for or a
        weaker bound at that index, made into a Guard when the list is next read (``lower_bound``)."""
        self._ends: dict[tuple, int] = {}
        """(count, k, text) -> index of the guard "count > k is False" (text: its source's), for each such guard
        on one of ``counts``: what the set's key of it says, known without making its source (the end of a
        loop, see ``lower_bound``)."""
        if guards:
            for g in guards:
                self.add(g)

    @property
    def guards(self) -> list[Guard]:
        if self._pending:
            for at, (count, k, holds, loc) in self._pending.items():
                self._guards[at] = _lower_bound_guard(count, k, holds, loc)
            self._pending.clear()
        return self._guards

    @guards.setter
    def guards(self, guards: list[Guard]) -> None:
        self._guards, self._pending, self._bounds, self._bound_k = guards, {}, {}, {}
        self._ends = {}
        if self.counts:
            for at, g in enumerate(guards):
                end = _lower_bound(g, self.counts, False)
                if end is not None:
                    self._ends.setdefault((*end, g.source.text), at)

    def __repr__(self) -> str:
        return f"GuardSet({self.guards!r})"

    def add(self, guard: Guard) -> None:
        if self.counts and guard.kind == "equals" and type(guard.expected) is bool:
            if guard.expected:
                bound = _lower_bound(guard, self.counts)
                if bound is not None:
                    self._add_lower_bound(guard, *bound)
                    return
            else:
                end = _lower_bound(guard, self.counts, False)
                if end is not None:  # kept once, as the key below would keep it (``_ends``)
                    key = (*end, guard.source.text)
                    if key not in self._ends:
                        self._ends[key] = len(self._guards)
                        self._guards.append(guard)
                    return
        key = _key(guard)
        if key not in self._keys:
            self._keys.add(key)
            self._guards.append(guard)

    def add_new(self, guard: Guard) -> None:
        """``add`` of a guard that the caller knows is not in the set, and that it will not add again (a stand-in
        array's guard on the source it was first read from, see ``CaptureContext.tensor_input``)."""
        self._guards.append(guard)

    def _add_lower_bound(self, guard: Guard, count: Source, k: int) -> None:
        """The first bound on ``count`` takes its place in the list; a stronger one later replaces it there, a
        weaker or equal one is dropped: what ``merge_lower_bounds`` leaves, without a guard for each item of a
        loop in between. (Two bounds on one count with one ``k`` are one guard: the set keeps the first.)"""
        at = self._bounds.get(count)
        if at is None:
            self._bounds[count] = at = len(self._guards)
            self._guards.append(guard)
            self._bound_k[at] = k
        elif k > self._bound_k[at]:
            self._guards[at] = guard
            self._pending.pop(at, None)
            self._bound_k[at] = k

    def lower_bound(self, count: Source, k: int, holds: bool, loc) -> None:
        """``add`` of the guard "count > k is ``holds``" (``_lower_bound_guard``), which a lazy iterator adds for
        each item it takes. A stronger bound than the one in the list is not made into a Guard now, only when the
        list is next read (the last one of a loop over a thousand items is the one kept)."""
        if holds and type(k) is int:
            at = self._bounds.get(count)
            if at is not None:  # a bound on it is in the list (so ``count`` is one of ``counts`` of a source)
                if k > self._bound_k[at]:  # this one is stronger
                    self._pending[at] = (count, k, True, loc)
                    self._bound_k[at] = k
                return  # (a weaker or equal one: ``add`` would drop it)
            if isinstance(count, DerivedSource) and count.fn in self.counts:
                # The first bound on it: what ``add`` does with it (``_add_lower_bound``, without taking it apart
                # again), its Guard too made when the list is next read: by then a loop has usually taken more
                # items, and the stronger bound is the one made.
                self._bounds[count] = at = len(self._guards)
                self._guards.append(None)  # (a place for it, filled from ``_pending``)
                self._pending[at] = (count, k, True, loc)
                self._bound_k[at] = k
                return
        elif not holds and type(k) is int and isinstance(count, DerivedSource) and count.fn in self.counts:
            # The end of a loop, "count > k is False": what ``add`` does with it (kept once, see ``_ends``), its
            # Guard made when the list is next read.
            key = (count, k, _GT_TEXT)
            if key not in self._ends:
                self._ends[key] = at = len(self._guards)
                self._guards.append(None)
                self._pending[at] = (count, k, False, loc)
            return
        self.add(_lower_bound_guard(count, k, holds, loc))

    def merge_lower_bounds(self, counts: tuple) -> None:
        """Keep one guard of each set of facts "n > k is True" on one count ``n``: the one with the largest ``k``
        (it implies the others), checked where the first of them was. ``counts`` are functions that always return
        an int (``len``): the count is one of them applied to a source.

        A ``for`` loop over a list guards "one more item" for each item it takes: ``len(ws) > 0``, ``len(ws) > 1``,
        ..., ``len(ws) > 255``; one guard ``len(ws) > 255`` says it all. In the first one's place it is checked
        before the items' own guards (so that no item is read from a list too short), and it reads what the
        first one read (``len(ws)``), so it cannot fail to read where the first one could not.

        A set made with these ``counts`` merged its bounds as they came (``add``): nothing is left to do."""
        if counts == self.counts:
            return
        strongest: dict[Source, Guard] = {}  # count source -> the guard with the largest k
        for g in self.guards:
            bound = _lower_bound(g, counts)
            if bound is not None:
                count, k = bound
                if count not in strongest or k > _lower_bound(strongest[count], counts)[1]:
                    strongest[count] = g
        if not strongest:
            return
        kept = []
        for g in self.guards:
            bound = _lower_bound(g, counts)
            if bound is None:
                kept.append(g)
            elif bound[0] in strongest:  # the first of its count: the strongest fact goes here
                kept.append(strongest.pop(bound[0]))
        self.guards = kept
        self._keys = {_key(g) for g in kept}

    def compile(self):
        """One function ``check(inputs) -> index of the first failing guard, or -1``.

        Guards run in the order they were added (an entry's type before its length, a dict's keys before an item);
        each source is read once, before the first guard that needs it, and a source that cannot be read (a
        missing key, a computation that raises) fails that guard. A run of like guards on the items of a list
        (see ``item_runs``) is checked by a loop, in the same order, returning the same index."""
        lines = ["def check(I):"]
        reads = SourceReads(lines)

        def fetch(s: Source, n: int) -> str:
            return reads.fetch(s, f"return {n}")

        runs = item_runs(self.guards)
        blocks = disjoint_blocks(self.guards)
        layouts = {}
        n = 0
        while n < len(self.guards):
            g = self.guards[n]
            end = blocks.get(n)
            if end is not None:  # guards n .. end - 1 are "disjoint" guards, checked as one block (overlap.py)
                for k in range(n, end):
                    fetch(self.guards[k].source, k)
                    fetch(self.guards[k].expected, k)
                block_sources, layouts[n] = block_layout(self.guards[n:end])
                arrays = "".join(f"{reads.fetch(s)}, " for s in block_sources)
                lines += [f"    k = first_overlap(({arrays}), K[{n}])", "    if k >= 0:", f"        return {n} + k"]
                n = end
                continue
            end = runs.get(n)
            if end is not None:  # guards n .. end - 1 check items first .. of one list, in a loop
                first = g.source.key
                lines += [f"    for n, key in zip(range({n}, {end}), range({first}, {first + end - n})):",
                          "        try:",
                          f"            v = {fetch(g.source.base, n)}[key]",
                          "        except Exception:",
                          "            return n",
                          f"        if not ({_check_expr(g.kind, 'v', f'K[{n}]')}):",
                          "            return n"]
                n = end
                continue
            if g.kind in PAIR_KINDS:
                fetch(g.source, n)
                other = fetch(g.expected, n)
            else:
                other = ""
            kind = "same" if g.kind == "equals" and isinstance(g.expected, (float, np.floating, tuple)) else g.kind
            lines.append(f"    if not ({_check_expr(kind, fetch(g.source, n), f'K[{n}]', other)}):")
            lines.append(f"        return {n}")
            n += 1
        lines.append("    return -1")
        source_text = "\n".join(lines)
        namespace = {**reads.namespace(), "ndarray": np.ndarray, "same": same_value,
                     "dims_match": dims_match, "may_share": np.may_share_memory,
                     "first_overlap": first_overlap,
                     "K": [layouts[n] if n in layouts else tuple(g.expected) if g.kind == "keys" else None
                           if g.kind in PAIR_KINDS else sizes_check(g.expected) if g.kind == "sizes" else
                           g.expected for n, g in enumerate(self.guards)]}
        exec(compile(source_text, "<graph_lab guards>", "exec"), namespace)
        check = namespace["check"]
        check.source_text = source_text
        return check


RUN_KINDS = ("type", "array", "dims")
"""Guards that a run may hold: those whose check reads nothing but the item and the expected value."""
MIN_RUN = 4
"""Shorter runs are written out guard by guard."""


def item_runs(guards: list[Guard]) -> dict[int, int]:
    """``{first: end}`` for each run of guards ``first .. end - 1`` that generated code may check in a loop: the
    same kind (one of RUN_KINDS) and the same expected value, on the items ``k, k + 1, k + 2, ...`` of one list or
    tuple whose type an earlier guard checks (so that reading an item runs no user code). ``for w in ws`` over
    N arrays of one shape gives one run of N guards."""
    runs: dict[int, int] = {}
    sequences: set[Source] = set()  # sources that an earlier guard checks to be exactly a list or a tuple
    start = None  # the first guard of the run being grown
    for n, g in enumerate(guards):
        if start is not None and not _next_in_run(guards[start], guards[n - 1], g):
            if n - start >= MIN_RUN:
                runs[start] = n
            start = None
        if start is None and _may_start_run(g, sequences):
            start = n
        if g.kind == "type" and g.expected in (list, tuple):
            sequences.add(g.source)
    if start is not None and len(guards) - start >= MIN_RUN:
        runs[start] = len(guards)
    return runs


def _may_start_run(g: Guard, sequences: set) -> bool:
    return g.kind in RUN_KINDS and isinstance(g.source, ItemSource) and type(g.source.key) is int and \
        g.source.base in sequences


def _next_in_run(first: Guard, last: Guard, g: Guard) -> bool:
    """Guard ``g`` checks, on the item after ``last``'s, what ``first`` checks on its item."""
    if not (g.kind == first.kind and isinstance(g.source, ItemSource) and type(g.source.key) is int
            and g.source.base == first.source.base and g.source.key == last.source.key + 1):
        return False
    if g.kind == "type":
        return g.expected is first.expected
    (shape, dtype), (first_shape, first_dtype) = g.expected, first.expected
    return shape == first_shape and dtype == first_dtype
