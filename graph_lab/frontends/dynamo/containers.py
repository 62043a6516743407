"""Tuples, lists and dicts made during capture, kept element by element as Vars.

A container holds values, not where they came from. If ``return y, float(loss)`` stored the bare float in its
tuple, the capture would have to guard it (the recipe of the tuple could only repeat it), and every call with
another loss would recompile. So the capture keeps, next to each container it makes, the Vars of its elements:
a recipe rebuilds the container from them, ``t[1]`` and ``a, b = t`` give them back with their sources, and a
number read from the inputs is guarded only when native code gets the container itself (``settle``).
"""

from __future__ import annotations

from .frame import IterState, Var


class TrackedContainers:
    """The element Vars of the tuples, lists and dicts one capture made (by id; the capture keeps them alive)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.elements: dict[int, list[Var] | dict] = {}

    def build(self, kind: type, items) -> Var:
        """A new tuple or list of the Vars ``items``, or a dict of ``{key: Var}``."""
        if kind is dict:
            container = {k: v.value for k, v in items.items()}
            self.elements[id(container)] = dict(items)
        else:
            items = list(items)
            container = kind(v.value for v in items)
            self.elements[id(container)] = items
        return self.ctx.created(container)

    def tracked(self, container) -> list[Var] | dict | None:
        return self.elements.get(id(container))

    def settle(self, value) -> None:
        """Native code is about to see ``value``: guard the numbers read from the inputs that it holds, at any
        depth, and stop tracking (native code may change a list behind the capture's back)."""
        items = self.elements.pop(id(value), None)
        if items is not None:
            for var in (items.values() if isinstance(items, dict) else items):
                self.ctx.contained(var)
                self.settle(var.value)
        elif type(value) in (list, tuple):
            for x in value:
                self.settle(x)
        elif type(value) is dict:
            for x in value.values():
                self.settle(x)
        elif isinstance(value, IterState):
            for var in value.pending():
                self.ctx.contained(var)
                self.settle(var.value)

    def get(self, container, key) -> Var | None:
        """``container[key]`` as a Var, when the container is tracked (None: use the real container)."""
        items = self.elements.get(id(container))
        if items is None:
            return None
        if isinstance(items, dict):
            return items[key] if key in items else None
        if isinstance(key, slice):
            return self.build(type(container), items[key])
        if isinstance(key, int) and -len(items) <= key < len(items):
            return items[key]
        return None

    def set(self, container, key, var: Var) -> bool:
        """``container[key] = var`` on a tracked list or dict; False when it is not tracked that way."""
        items = self.elements.get(id(container))
        if isinstance(items, dict):
            try:
                container[key] = var.value
            except TypeError:
                return False
            items[key] = var
            return True
        if isinstance(items, list) and isinstance(key, int) and -len(items) <= key < len(items):
            items[key] = var
            container[key] = var.value
            return True
        return False

    def append(self, container, var: Var) -> bool:
        items = self.elements.get(id(container))
        if not isinstance(items, list) or type(container) is not list:
            return False
        items.append(var)
        container.append(var.value)
        return True

    def items(self, container) -> list[Var] | None:
        """The element Vars in iteration order (a dict's keys), or None when not tracked."""
        items = self.elements.get(id(container))
        if items is None:
            return None
        if isinstance(items, dict):
            return [Var(k) for k in items]
        return list(items)
