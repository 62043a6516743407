"""Guards on a model's structure, checked once after each change instead of on every call.

Capturing ``model(x)`` reads each module's type, its ``__dict__`` and its ``_parameters``, ``_modules`` and hook
dicts, its ``training`` flag, and guards every fact where it was read: 63 guards for a 3-layer MLP, most of them
on the structure. None of these facts can change without the module's class knowing, when the class keeps a
*structure clock* (``graph_lab.nn.Module`` does: ``nn/structure.py``). So the facts reached from one module
through its structure (its submodules', their dicts', their flags') are folded into one guard per model, a
``StructureGuard``: it checks them all, as before, the first time and whenever the clock has moved since, and
otherwise answers as it did last time for the same model object. A call then costs one comparison for the
structure, and the guards that must be checked on every call stay as they are:

- parameters and buffers (arrays: fetched, and their shape and dtype checked, on every call);
- what a module's methods are: class state, which no clock sees. A bound method's guards
  (``self._modules['0'].forward.__func__.__code__``) are moved to its class (``Linear.forward.__code__``, once
  for all the Linears), which is the same function while the module's type holds and its ``__dict__`` does not
  shadow the name (both folded);
- anything reached through an object that is not module structure (a hook function, a list attribute, a global).

The protocol, for any class: ``_structure_clock`` (a one-item list its code increments on each change),
``_structure_dicts`` (the instance attributes holding structure) and ``_structure_globals`` (names of the
defining module's globals that are structure too).
"""

from __future__ import annotations

import inspect
import operator
import sys
import types
import weakref

from .guard_set import Guard, GuardSet, _key
from .sources import (AttrSource, Const, DerivedSource, FrameInputs, GlobalSource, ItemSource, LocalSource,
                      ObjectSource, Source)

FOLDED_KINDS = ("type", "keys", "len", "equals", "id")
"""Kinds of guard that may fold: facts about one value (not an array's shape, which an in-place ``.shape =``
may change without a clock)."""
_SCALARS = (bool, int, float, str, type(None))
_ROOT = "<model>"
"""The name the folded guards read their model from."""


def structure_clock(t: type) -> list | None:
    clock = getattr(t, "_structure_clock", None)
    return clock if type(clock) is list and len(clock) == 1 else None


def _immutable(value) -> bool:
    return type(value) in _SCALARS or (type(value) is tuple and all(_immutable(v) for v in value))


class StructureCheck:
    """The folded guards of one model, called with the model: True while they hold. A result is kept until the
    clock moves or another object is passed."""

    def __init__(self, guards: list[Guard], root: Source, clock: list, globals_: dict):
        self.guards = guards
        """The folded guards, as captured (for describing them)."""
        self.root = root
        self.clock = clock
        self.globals = globals_
        self._rebased = GuardSet()
        self._rebased.guards = [Guard(g.kind, _rebase(g.source, root), g.expected, g.loc) for g in guards]
        self._check = None
        self._seen = None  # (clock value, weak reference to the model, result)
        self.failure: str | None = None
        """Why the last full check failed, in the words of the guard that failed."""

    def __call__(self, model) -> bool:
        seen = self._seen
        if seen is not None and seen[0] == self.clock[0] and seen[1]() is model:
            return seen[2]
        stamp = self.clock[0]
        if self._check is None:
            self._check = self._rebased.compile()
        inputs = FrameInputs({_ROOT: model}, [], self.globals, ())
        failed = self._check(inputs)
        if failed >= 0:
            self.failure = _failure(self.guards[failed], self._rebased.guards[failed].source, inputs)
        try:
            self._seen = (stamp, weakref.ref(model), failed < 0)
        except TypeError:  # (no weak reference to it: checked in full on every call)
            self._seen = None
        return failed < 0


class StructureGuard(Guard):
    """One guard standing for the folded guards of a model (``StructureCheck``): to the guard functions and the
    fast path an "equals True" on a derived source, to a person the list of what it checks."""

    def __init__(self, check: StructureCheck, loc):
        super().__init__("equals", DerivedSource(check, (check.root,), "structure of {0}"), True, loc)
        self.check = check

    def describe(self) -> str:
        head = f"the structure of {self.check.root.describe()} is as captured ({len(self.check.guards)} facts, " \
               f"checked again after a change)"
        return "\n".join([head] + [f"      {g.describe()}" for g in self.check.guards])

    def explain_failure(self, value) -> str:
        return self.check.failure or f"the structure of {self.check.root.describe()} changed"


def _failure(guard: Guard, rebased: Source, inputs: FrameInputs) -> str:
    """``guard``'s explanation of the value its ``rebased`` source reads."""
    try:
        return guard.explain_failure(rebased.fetch(inputs))
    except Exception as e:
        return f"{guard.source.describe()} could not be read ({type(e).__name__})"


def _rebase(source, root: Source):
    """``source`` with ``root`` replaced by the local the folded guards read their model from."""
    if source == root:
        return LocalSource(_ROOT)
    if isinstance(source, AttrSource):
        return AttrSource(_rebase(source.base, root), source.name)
    if isinstance(source, ItemSource):
        return ItemSource(_rebase(source.base, root), source.key)
    if isinstance(source, DerivedSource):
        return DerivedSource(source.fn, tuple(_rebase(a, root) if isinstance(a, Source) else a for a in source.args),
                             source.text)
    return source


class _Folding:
    """One pass over a segment's guards in order: which sources are modules (a type guard with a clock), which
    guards are facts about their structure, and the model (root) each belongs to."""

    def __init__(self, inputs: FrameInputs):
        self.inputs = inputs
        self.modules: dict[Source, Source] = {}  # module source -> its root
        self.values: dict[Source, object] = {}  # module source -> the module at capture
        self.folded: dict[Source, list[Guard]] = {}  # root -> its folded guards, in order
        self.clock: list | None = None

    def step(self, source):
        """(module source, attribute name) when ``source`` is one attribute of a module: ``m.name``,
        ``m.__dict__[name]``, or ``m.__dict__`` itself (name ``__dict__``)."""
        if isinstance(source, AttrSource) and source.base in self.modules:
            return source.base, source.name
        if isinstance(source, ItemSource) and type(source.key) is str and isinstance(source.base, AttrSource) \
                and source.base.name == "__dict__" and source.base.base in self.modules:
            return source.base.base, source.key
        return None

    def owner(self, g: Guard) -> Source | None:
        """The module source whose structure ``g`` is a fact of (registering a new module on the way), or None."""
        if g.kind not in FOLDED_KINDS:
            return None
        source = g.source
        clock = structure_clock(g.expected) if g.kind == "type" else None
        if clock is not None and source not in self.modules and (self.clock is None or clock is self.clock):
            parent = self._parent(source)
            try:
                value = source.fetch(self.inputs)
            except Exception:  # (not a path from the state the capture started with)
                return None
            self.modules[source] = self.modules[parent] if parent is not None else source
            self.values[source] = value
            self.clock = clock
            return source
        if source in self.modules:
            return source if g.kind in ("type", "id") else None
        if g.kind == "type" and self._parent(source) is not None:  # (an empty slot of _modules: None)
            return self._parent(source)
        step = self.step(source)
        if step is None:
            return None
        module, name = step
        value = self.values[module]
        if name == "__dict__" or name in getattr(type(value), "_structure_dicts", ()):
            return module if g.kind in ("type", "keys", "len") else None
        if name in vars(value) and not _data_descriptor(type(value), name) and \
                (g.kind == "type" or g.kind == "equals" and _immutable(g.expected)):
            return module  # (an instance attribute: changed only by assigning it, which moves the clock)
        return None

    def _parent(self, source) -> Source | None:
        """The module whose ``_modules`` dict ``source`` is an item of."""
        if isinstance(source, ItemSource):
            step = self.step(source.base)
            if step is not None and step[1] == "_modules":
                return step[0]
        return None


def _data_descriptor(t: type, name: str) -> bool:
    attr = inspect.getattr_static(t, name, None)
    return attr is not None and hasattr(type(attr), "__set__")


def _structure_global(g: Guard, folding: _Folding, compiled_globals: dict) -> bool:
    """A guard on one of a module class's ``_structure_globals`` (the state bindings, the interceptors)."""
    if not isinstance(g.source, GlobalSource) or g.kind not in FOLDED_KINDS or g.kind == "id":
        return False
    namespace = compiled_globals if g.source.namespace is None else g.source.namespace
    for module in folding.values.values():
        for cls in type(module).__mro__:
            names = cls.__dict__.get("_structure_globals")
            if names and g.source.name in names and getattr(sys.modules.get(cls.__module__), "__dict__", None) \
                    is namespace:
                return True
    return False


def _method_moved_to_class(g: Guard, folding: _Folding, extra: dict) -> Guard:
    """``g`` on ``m.name.__func__...`` (a method of module ``m``) as the same guard on ``type(m).name...``,
    with the fact that ``m.__dict__`` does not shadow ``name`` added to ``m``'s folded guards; else ``g``."""
    prefix, rest = g.source, []
    while isinstance(prefix, AttrSource):
        if prefix.name == "__func__" and isinstance(prefix.base, AttrSource) and prefix.base.base in folding.modules:
            module_source, name = prefix.base.base, prefix.base.name
            module = folding.values[module_source]
            cls = type(module)
            if name in vars(module) or cls.__getattribute__ is not object.__getattribute__ or \
                    not isinstance(inspect.getattr_static(cls, name, None), types.FunctionType):
                return g  # (found another way than as the class's function)
            moved = AttrSource(ObjectSource(cls, cls.__qualname__), name)
            for attr in reversed(rest):
                moved = AttrSource(moved, attr)
            shadow = Guard("equals", DerivedSource(operator.contains, (AttrSource(module_source, "__dict__"),
                                                                        Const(name)), "{1} in {0}"), False, g.loc)
            extra.setdefault(folding.modules[module_source], {})[_key(shadow)] = shadow
            return Guard(g.kind, moved, g.expected, g.loc)
        rest.append(prefix.name)
        prefix = prefix.base
    return g


def fold_structure_guards(guards: GuardSet, inputs: FrameInputs, compiled_globals: dict) -> GuardSet:
    """``guards`` with the facts about each model's structure folded into one ``StructureGuard`` per model, at
    the place of its first fact (the guards before it make reading the model safe); ``guards`` itself when
    there is nothing to fold."""
    folding = _Folding(inputs)
    kept: list = []  # guards, and roots where a StructureGuard goes
    global_facts: list[Guard] = []
    for g in guards.guards:
        module = folding.owner(g)
        if module is not None:
            root = folding.modules[module]
            if root not in folding.folded:
                folding.folded[root] = []
                kept.append(root)
            folding.folded[root].append(g)
        else:
            kept.append(g)
    if not folding.folded:
        return guards
    extra: dict = {}
    out, seen = [], set()
    first_root = next(iter(folding.folded))
    for item in kept:
        if isinstance(item, Guard) and _structure_global(item, folding, compiled_globals):
            global_facts.append(item)
            continue
        if isinstance(item, Guard):
            item = _method_moved_to_class(item, folding, extra)
        out.append(item)
    folding.folded[first_root] = global_facts + folding.folded[first_root]
    result = []
    for item in out:
        if not isinstance(item, Guard):  # a root: its StructureGuard
            facts = folding.folded[item] + list(extra.get(item, {}).values())
            item = StructureGuard(StructureCheck(facts, item, folding.clock, compiled_globals), facts[0].loc)
        if _key(item) not in seen:
            seen.add(_key(item))
            result.append(item)
    folded = GuardSet(counts=guards.counts)
    folded.guards = result
    folded._keys = seen
    return folded
