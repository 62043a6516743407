"""Nested containers of arrays (dicts, lists, tuples, NamedTuples, dataclasses): flatten to leaves with readable
paths, and rebuild.

A NamedTuple is rebuilt as its own class; a dataclass instance is rebuilt from its fields alone (a new object of
its class whose fields are set one by one, as ``jax.tree_util.register_dataclass`` does), so attributes that are
not fields are not carried over.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable


def flatten(tree: Any, prefix: str = "") -> tuple[list[tuple[str, Any]], Any]:
    """``(leaves, treedef)``: each leaf with its path (``p['W1']``, ``p['layers'][0]``), and the structure."""
    leaves: list[tuple[str, Any]] = []
    return leaves, _walk(tree, prefix, leaves)


# The walks are module-level functions, not closures calling themselves: such a closure refers to itself through its
# cell, a reference cycle that keeps every leaf (a lazy tensor, an array) alive until the cyclic GC runs, and a
# lazy tensor still alive becomes an output of the graph the LazyRunner cuts.
def _walk(node, path: str, leaves: list):
    if isinstance(node, dict):
        return ("dict", tuple(node.keys()), tuple(_walk(v, f"{path}[{k!r}]", leaves) for k, v in node.items()))
    if isinstance(node, tuple) and hasattr(type(node), "_fields"):
        fields = type(node)._fields
        return ("namedtuple", type(node), tuple(_walk(v, f"{path}.{f}", leaves) for f, v in zip(fields, node)))
    if isinstance(node, (list, tuple)):
        kind = "list" if isinstance(node, list) else "tuple"
        return (kind, None, tuple(_walk(v, f"{path}[{i}]", leaves) for i, v in enumerate(node)))
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        names = tuple(f.name for f in dataclasses.fields(node))
        return ("dataclass", (type(node), names),
                tuple(_walk(getattr(node, name), f"{path}.{name}", leaves) for name in names))
    leaves.append((path, node))
    return ("leaf", None, ())


def unflatten(treedef: Any, leaves: list) -> Any:
    """Inverse of :func:`flatten` (leaves without their paths)."""
    return _build(treedef, iter(leaves))


def _build(node, it):
    kind, keys, children = node
    if kind == "leaf":
        return next(it)
    built = [_build(c, it) for c in children]
    if kind == "dict":
        return dict(zip(keys, built))
    if kind == "namedtuple":
        return keys._make(built)
    if kind == "dataclass":
        cls, names = keys
        made = cls.__new__(cls)
        for name, value in zip(names, built):
            object.__setattr__(made, name, value)  # frozen dataclasses too
        return made
    return built if kind == "list" else tuple(built)


def tree_map(fn: Callable[[str, Any], Any], tree: Any, prefix: str = "") -> Any:
    """Apply ``fn(path, leaf)`` to every leaf and rebuild the structure."""
    leaves, treedef = flatten(tree, prefix)
    return unflatten(treedef, [fn(path, leaf) for path, leaf in leaves])
