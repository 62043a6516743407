"""Speed-ups of ``script``: what it keeps between captures of one function, and the check it skips.

The reference path (``capture_script(..., shortcuts=False)``) works everything out anew for every capture: it
parses the shapes and binds the arguments (a new ``Prepared``), reads and parses the function's source (a new
``FunctionSource``, for the function and for every function it calls), asks ``analysis.py``'s questions each time
a block is converted, and verifies every graph it makes. The speed-ups here give the same graphs:

- ``lookup`` keeps each function's ``Prepared`` (``_prepared``) while what its answers depend on stays the same;
- ``source_of`` keeps the parse of each code object (``_parsed``), as a ``RememberingSource``, which also keeps
  ``analysis.py``'s answer about each block of the tree (``ask``);
- ``needs_verify`` skips ``verify()`` for a graph made by the shared recorder alone, which passes it by
  construction (see there);
- ``bind_by_name`` binds the arguments of a function whose parameters are all ordinary ones without ``inspect``;
- and ``script`` pauses the cyclic garbage collector for the capture (``recording_shortcuts.gc_paused``).

Measured reason (instructions, so the machine's load does not matter: ``PYTHONPATH=. python3
benchmarks/shortcut_instructions.py --sizes=8 script-prepared script-parse script-ask script-verify``), a
``script`` capture of the W2 chain at 8 layers: the kept ``Prepared`` saves 12.4% of the capture (1.74M
instructions with it, 1.98M without); the kept parse 35.9% of a capture that prepares anew; skipping ``verify``
48.2%; ``bind_by_name``'s own binding 12.1% of a capture that prepares anew (``script-bind``); the paused collector
19.1% (``script-gc``); the kept analysis answers 23.4% of a capture of the chain with an ``if`` on tensor data in
each layer. (Two cases of the same configuration differ by up to 8% between processes, so the 12% figures are
close to that floor.) ``inspect.signature`` kept per function (6.3% of a capture calling a function per layer) and
converting the body's last ``return`` without raising it (no saving) were measured too and are gone.
``tests/frontends/script/test_shortcuts_script.py`` checks them against the reference path.
"""

from __future__ import annotations

import inspect
import operator
import weakref
from types import CodeType, FunctionType
from typing import Mapping

from ...ir.graph import Graph
from ...ir.source import SourceLoc
from ..trace import bind_arguments, parse_spec
from .function_source import FunctionSource

_NO_ANSWER = object()


class RememberingSource(FunctionSource):
    """A ``FunctionSource`` that works out each of ``analysis.py``'s answers once per node of its tree."""

    def __init__(self, fn):
        super().__init__(fn)
        self.analyses: dict = {}
        """The answers, by (question, node)."""

    def ask(self, question, node, stmts):
        """``FunctionSource.ask``, remembered. The tree is never changed and lives as long as this object, so the
        answer holds for every later conversion of the node: an ``if`` on tensor data inside an unrolled loop is
        converted once per iteration. (Keyed by the node itself, which hashes by identity.)"""
        key = (question, node)
        answer = self.analyses.get(key, _NO_ANSWER)
        if answer is _NO_ANSWER:
            answer = self.analyses[key] = super().ask(question, node, stmts)
        return answer


_parsed: "weakref.WeakKeyDictionary[CodeType, RememberingSource]" = weakref.WeakKeyDictionary()


def source_of(fn) -> FunctionSource:
    """The parsed source of the plain function ``fn``, read and parsed once per code object.

    A code object is compiled from one version of the source and never changes, so its parse is kept for as long
    as the code object lives (weakly: a redefined function gets a new code object, hence a new parse, and the old
    entry goes with the old code). Nothing in ``script`` changes the syntax tree it is given, so one tree can serve
    every call (the ``FunctionSource`` holds no reference to the function or its code, which would keep the entry
    alive). A function whose source cannot be read raises each time (nothing kept)."""
    code = fn.__code__
    source = _parsed.get(code)
    if source is None or source.name != fn.__name__:  # a renamed copy of a function: messages use its name
        source = _parsed[code] = RememberingSource(fn)
    return source


def _signed(fn: types.FunctionType) -> tuple:
    """``(signature, by_name, names)`` for ``bind_by_name``: ``by_name`` is the parameters as ``(name, default)``
    pairs when each is an ordinary one (positional or keyword, no ``*args``, ``**kwargs``, ``/`` or ``*``), and
    ``names`` the set of their names; else both None. A function that declares its own ``__signature__`` or
    wraps another is bound by ``inspect``."""
    signature = inspect.signature(fn)
    if hasattr(fn, "__signature__") or hasattr(fn, "__wrapped__"):
        return signature, None, None
    params = signature.parameters.values()
    if not all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params):
        return signature, None, None
    by_name = tuple((p.name, p.default) for p in params)
    return signature, by_name, frozenset(name for name, _ in by_name)


def bind_by_name(fn: types.FunctionType, first: list, by_name: dict) -> dict:
    """The variables a call of ``fn`` starts with: ``inspect.signature(fn).bind_partial(*first, **by_name)`` with
    ``apply_defaults()``, as a dict in the order of the parameters (``first``: the object of a method, or
    nothing). A parameter given no value and having no default is left out, as ``bind_partial`` leaves it.

    A speed-up of ``Prepared``: for a function whose parameters are all ordinary ones the dict is made directly
    without ``inspect``'s ``BoundArguments`` (the same entries in the same
    order; see ``_signed``). Any other function, and a name that is not one of the parameters after ``first``, go
    through ``inspect``, which raises its ``TypeError`` as before."""
    signature, params, names = _signed(fn)
    if params is not None and len(first) <= len(params):
        rest = params[len(first):] if first else params
        if first:
            names = {name for name, _ in rest}
        if by_name.keys() <= names:  # every name is one of the parameters after ``first``
            arguments = {name: value for (name, _), value in zip(params, first)} if first else {}
            for name, default in rest:
                if name in by_name:
                    arguments[name] = by_name[name]
                elif default is not inspect.Parameter.empty:
                    arguments[name] = default
            return arguments
    bound = signature.bind_partial(*first, **by_name)
    bound.apply_defaults()
    return bound.arguments


class Prepared:
    """What ``script`` works out about a function before converting it: the parsed shapes, the order of the tensor
    arguments and the name of the params argument (``bind_arguments``), the parsed source (``source_of``), the
    input types, and how the arguments are bound (``bind_by_name``).

    One is kept per function object (``_prepared``) and used again while its ``state`` is the function's: its
    answers depend on the function's code object (the parameters' names and kinds; the source it was compiled
    from), its name (shown in messages), its defaults (given to the parameters not passed), the names in
    ``shapes``, whether params are given and whether the function is called as a method. ``state`` holds those,
    the objects by their ids: it keeps the objects themselves too, so no other object can have their ids while
    it lives, and an equal id means the very same object (an equal but other code object, or defaults tuple,
    makes a new ``Prepared``). The shapes' values are parsed again (``read_specs``) whenever they are not the very
    objects parsed last time: a tuple of ints cannot change, so the same object parses the same way, but an equal
    one may not (``(4.0, 8) == (4, 8)``, and only the second is a shape). Globals and closure cells are read by
    every capture, never kept. A function given ``__signature__`` or ``__wrapped__`` is bound by ``inspect``
    each time, as ``bind_arguments`` does: nothing is kept for it."""

    __slots__ = ("state", "kept", "reusable", "specs", "spec_values", "inputs", "order", "params_name", "source",
                 "loc", "self_name", "rest")

    def __init__(self, called, fn: FunctionType, shapes: Mapping, state: tuple):
        self.state = state
        """``(id(code), name, id(defaults), id(kwdefaults), names in shapes, has params, is a method)``."""
        self.kept = (fn.__code__, fn.__defaults__, fn.__kwdefaults__)  # (what the ids of ``state`` stand for)
        self.reusable = reusable(fn)
        has_params, is_method = state[5], state[6]
        self.read_specs(shapes)  # (first: a bad shape is reported before a bad argument name)
        self.order, self.params_name = bind_arguments(called, list(self.specs), has_params)
        self.source: FunctionSource | None = None
        """Set by ``script`` once the arguments are found good."""
        self.loc: SourceLoc | None = None
        """The ``SourceLoc`` of the ``def`` line (set with ``source``): the inputs' and parameters'."""
        self.self_name, self.rest = self._binding(fn, has_params, is_method)

    def read_specs(self, shapes: Mapping) -> None:
        specs = {}
        for name, spec in shapes.items():
            specs[name] = parse_spec(name, spec)
        self.specs, self.spec_values = specs, tuple(shapes.values())
        self.inputs = None
        """``(name, type, storage label)`` for each input, in argument order: made by the first capture (see
        ``_input_types``) when every size is static, else None."""

    def bind(self, fn: FunctionType, owner, args: dict) -> dict:
        """``bind_by_name(fn, [owner] or [], args)``: the variables the function's body starts with. ``args`` are
        the inputs then the params, in ``order``; it may be used for the result."""
        if self.rest is None:
            return bind_by_name(fn, [owner] if owner is not None else [], args)
        arguments = {self.self_name: owner, **args} if owner is not None else args  # (see _binding)
        if self.rest:
            arguments.update(self.rest)
        return arguments

    def _binding(self, fn: FunctionType, has_params: bool, is_method: bool) -> tuple:
        """``(self_name, rest)`` when the arguments ``bind_by_name`` binds are, in this order: the object of a
        method (under ``self_name``), the inputs, the params, then ``rest``, a dict of the parameters not given
        that have a default, with their defaults. Else ``(None, None)``: ``bind_by_name`` binds them in each
        capture. Worked out by asking ``bind_by_name`` itself, with a marker object for each value given; only
        for a function whose parameters are all ordinary ones, whose bound values are the given values and the
        defaults themselves (``*args`` and ``**kwargs`` get a new tuple or dict each time)."""
        if _signed(fn)[1] is None:
            return None, None
        first = [object()] if is_method else []
        given = {name: object() for name in self.order}
        if has_params:
            given[self.params_name] = object()
        try:
            bound = list(bind_by_name(fn, first, given).items())
        except TypeError:  # (raised again by bind_by_name in the capture, as before)
            return None, None
        self_name = bound[0][0] if first else None
        rest = dict(bound[len(first) + len(given):])
        expected = ([(self_name, first[0])] if first else []) + list(given.items()) + list(rest.items())
        if len(expected) != len(bound) or any(a[0] != b[0] or a[1] is not b[1] for a, b in zip(expected, bound)):
            return None, None
        return self_name, rest


_prepared: "dict[weakref.ref, Prepared]" = {}
"""The ``Prepared`` of each function scripted, by a weak reference to the function (the entry goes when the
function does). Looked up with ``weakref.ref(fn)``, which equals the key while the function lives: the lookup
hashes the function by identity, as ``WeakKeyDictionary`` does."""


def state_of(fn: FunctionType, shapes: Mapping, has_params: bool, is_method: bool) -> tuple:
    """What a ``Prepared``'s answers depend on (see there); the ids stand for the objects, which it keeps alive."""
    return (id(fn.__code__), fn.__name__, id(fn.__defaults__), id(fn.__kwdefaults__), tuple(shapes), has_params,
            is_method)


def lookup(called, fn: FunctionType, shapes: Mapping, has_params: bool, is_method: bool) -> "Prepared":
    """The kept ``Prepared`` of ``fn`` when it still holds, its shapes read again if they are other objects; else
    a new one (kept by ``keep`` once its source is read)."""
    state = state_of(fn, shapes, has_params, is_method)
    prepared = _prepared.get(weakref.ref(fn))
    if prepared is None or prepared.state != state or not prepared.reusable or not reusable(fn):
        return Prepared(called, fn, shapes, state)
    if not all(map(operator.is_, shapes.values(), prepared.spec_values)):
        prepared.read_specs(shapes)  # the same names, other objects for their shapes: parsed again
    return prepared


def reusable(fn: FunctionType) -> bool:
    """A function given ``__signature__`` or ``__wrapped__`` is bound by ``inspect`` each time, as
    ``bind_arguments`` does: nothing is kept for it."""
    return not hasattr(fn, "__signature__") and not hasattr(fn, "__wrapped__")


def keep(fn: FunctionType, prepared: "Prepared") -> None:
    if prepared.reusable:
        _prepared[weakref.ref(fn, _forget)] = prepared


def _forget(ref: weakref.ref) -> None:
    _prepared.pop(ref, None)


def needs_verify(made_regions: bool, has_shape_env: bool, graph: Graph, unique_names: bool) -> bool:
    """Whether ``script`` verifies the graph it made: only when its own code shaped it.

    What script shapes itself is verified: control-flow regions (lifted values, carries, branch outputs) and
    captures with symbolic sizes (guards, facts, size symbols). A graph without them is made by the shared
    ``Recorder`` alone (``emit``, ``const``) and ``Graph.add_input`` / ``add_param``, as ``trace`` makes its graphs
    (which it does not verify), and passes ``verify()`` by construction: each node is new and appended once;
    sources read nothing; operands are values of this capture's stand-ins (``Recorder.operand_value`` refuses
    others), made by earlier nodes; output types come from the op's rule on the operand types and attributes, with
    no shape facts in play; the names are unique (``unique_names``, checked by the caller); the outputs are this
    capture's values; and ``remove_dead_code`` keeps every node a kept node reads."""
    return made_regions or has_shape_env or bool(graph.guards) or not unique_names


__all__ = ["Prepared", "RememberingSource", "keep", "lookup", "needs_verify", "source_of"]
