"""When each array of generated code may be dropped: ``del v4, v6`` after the line that reads it last.

Eager NumPy code drops a temporary as soon as the expression that made it is done (``A[:-2] + A[1:-1] + A[2:]``
frees the first sum at once), so the next one reuses its memory while it is still in the caches. Generated code
names every value, and a name keeps its array alive until the function returns: an unrolled loop of 40 small
stencil steps then holds 200 arrays at once, and ran 20% slower than the same calls in eager code (measured on a
400-element Jacobi loop). Dropping each array's last name after its last reader restores eager's memory use; no
value changes (only the references go).

The text of a function is written by ``python_source._text_to_compile``; this module says, for each row of its body,
which names die after it (``dying_names``), and the text gets one ``del`` line there.
"""

from __future__ import annotations

import re
from typing import Any

_VARIABLE = re.compile(r"\bv\d+\b")


def dying_names(rows: list[tuple[list[str], list[str], bool]], returned: set[str]) -> dict[int, list[str]]:
    """``row -> names to drop after it``: for each row, ``(names it defines, names it reads, whether what it
    defines are arrays)``. A name is dropped after the last row that reads it, unless the function returns it or
    it holds no array (dropping a scalar frees nothing). A name defined again later (a value written in place
    keeps its base's name) is dropped only after its last reader overall."""
    last_read: dict[str, int] = {}
    arrays: set[str] = set()
    for i, (defined, read, are_arrays) in enumerate(rows):
        for name in read:
            last_read[name] = i
        for name in defined:
            last_read.setdefault(name, i)  # (never read: dropped after its own row)
            if are_arrays:
                arrays.add(name)
    dying: dict[int, list[str]] = {}
    for name, i in last_read.items():
        if name in arrays and name not in returned:
            dying.setdefault(i, []).append(name)
    return dying


def names_in(code: str) -> list[str]:
    """The value names a line of generated code mentions (for the lines a backend wrote itself)."""
    return _VARIABLE.findall(code)


def row_names(node: Any, code: str, numbering: dict, custom: bool) -> tuple[list[str], list[str], bool]:
    """What ``dying_names`` needs of one row: the names it defines and reads, and whether it defines arrays. A
    row the backend wrote itself reads every name it mentions (``v1[1:-1] = v8`` needs ``v1``) and defines the
    names left of its ``=`` when they are names only."""
    are_arrays = bool(node.outputs) and node.outputs[0].type.ndim > 0
    if custom:
        lhs, copied = code.partition(" = ")[0], _COPY_WRITTEN.match(code)  # (``(v9 := copy)[1:] = v8`` defines v9)
        defined = names_in(lhs) if _NAMES_ONLY.fullmatch(lhs) else [copied.group(1)] if copied else []
        return defined, names_in(code), are_arrays
    return [f"v{numbering[v]}" for v in node.outputs], [f"v{numbering[v]}" for v in node.inputs], are_arrays


_NAMES_ONLY = re.compile(r"[v\d, ()]+")
_COPY_WRITTEN = re.compile(r"\((v\d+) := ")
