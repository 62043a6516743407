"""The strict comparison: what a user of ``graph_lab.compile(fn)`` can observe, compared with eager code's.

The differential oracle's ordinary comparison (``equivalence.compare``) takes a 0-d array and a number as the
same value, since a graph hands back arrays. A user calls the compiled function itself, and sees more than
values: ``type(r)`` (a NumPy scalar, a 0-d array, a Python float), which results are the argument they passed
(``return x``) or a view of it, which results share memory with each other, and whether a result is writeable.
Code that writes into a result, or tests ``isinstance(r, float)``, behaves differently when any of these differ,
so the ways that call ``compile(fn)`` as a user does (``ways.USER_WAYS``) are held to all of them:

    type        every container and leaf has eager's exact type (tuple vs list, np.float64 vs float vs 0-d array)
    value       shape, dtype and bits, as an exact way's (``compare(..., exact=True)``)
    aliasing    each result array is (or shares memory with) the same arguments and other results as eager's
    flags       each result array is writeable exactly when eager's is
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..equivalence.compare import Mismatch, compare


def strict_difference(want: Any, got: Any, path: str = "output") -> Mismatch | None:
    """The first difference of type between two results, then of value (bit for bit), or None."""
    found = _type_difference(want, got, path)
    return found if found is not None else compare(want, got, exact=True, path=path)


def _type_difference(want: Any, got: Any, path: str) -> Mismatch | None:
    if type(want) is not type(got):
        return Mismatch(path, "type", want, got, f"eager gave a {_type_name(want)}, compile() gave a "
                                                 f"{_type_name(got)}")
    if isinstance(want, dict):
        if list(want) != list(got):
            return Mismatch(path, "structure", want, got, f"keys {list(got)}, eager gives {list(want)}")
        items = [(f"{path}[{k!r}]", want[k], got[k]) for k in want]
    elif isinstance(want, (list, tuple)):
        if len(want) != len(got):
            return Mismatch(path, "structure", want, got, f"{len(got)} items, eager gives {len(want)}")
        items = [(f"{path}[{i}]", w, g) for i, (w, g) in enumerate(zip(want, got))]
    else:
        if isinstance(want, np.ndarray) and want.flags.writeable != got.flags.writeable:
            return Mismatch(path, "flags", want, got, f"writeable is {got.flags.writeable}, eager's is "
                                                      f"{want.flags.writeable}")
        return None
    for sub_path, w, g in items:
        found = _type_difference(w, g, sub_path)
        if found is not None:
            return found
    return None


def _type_name(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return f"{x.ndim}-d numpy.ndarray"
    kind = type(x)
    return kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def result_arrays(result: Any, path: str = "output") -> list[tuple[str, np.ndarray]]:
    """The arrays of a result with their paths, in the order a walk over dicts, lists and tuples meets them."""
    if isinstance(result, dict):
        return [leaf for k, v in result.items() for leaf in result_arrays(v, f"{path}[{k!r}]")]
    if isinstance(result, (list, tuple)):
        return [leaf for i, v in enumerate(result) for leaf in result_arrays(v, f"{path}[{i}]")]
    return [(path, result)] if isinstance(result, np.ndarray) else []


def aliasing_of(result: Any, args: list) -> list[tuple[str, str]]:
    """What the caller can see of how a result's arrays relate to the arguments and to each other: one
    ``(path, relation)`` per pair that is the same array or shares memory. Taken right after the call, before
    anything else can write into them."""
    arrays = result_arrays(result)
    named = [(f"argument {i}", a) for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    relations = []
    for k, (path, r) in enumerate(arrays):
        for name, other in named + arrays[:k]:
            if r is other:
                relations.append((path, f"is {name}"))
            elif np.shares_memory(r, other):
                relations.append((path, f"shares memory with {name}"))
    return relations


def aliasing_difference(want: list[tuple[str, str]], got: list[tuple[str, str]]) -> Mismatch | None:
    """The first relation that holds on one side only (``aliasing_of`` of eager's call and of the way's)."""
    for path, relation in want:
        if (path, relation) not in got:
            return Mismatch(path, "aliasing", relation, None, f"eager's result {relation}; compile()'s does not "
                                                              f"(a write into one would show in the other in eager "
                                                              f"code only)")
    for path, relation in got:
        if (path, relation) not in want:
            return Mismatch(path, "aliasing", None, relation, f"compile()'s result {relation}; eager's does not "
                                                              f"(a write into one would change the other)")
    return None
