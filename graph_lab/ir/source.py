"""Where in the user's code a node was made: found by walking the Python stack past graph_lab and NumPy."""

from __future__ import annotations

import linecache
import os
import sys
from dataclasses import dataclass

import numpy as np

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))
_SKIP_PREFIXES = (_PACKAGE_DIR + os.sep, _NUMPY_DIR + os.sep)
# The code graph_lab generates and runs: a graph (backends/python_source.py), a compiled function's guards and its
# cache-hit path (frontends/dynamo/guard_set.py, cache_hit_fast_path.py). Not the user's, though it has no file in
# graph_lab.
_GENERATED_FILENAMES = ("<graph_lab generated>", "<graph_lab guards>", "<graph_lab fast path>")
_skip_cache: dict[str, bool] = {}


def lines_belong_to(filename: str) -> bool:
    """Whether linecache's lines for ``filename`` can be taken as the source of code compiled under that name.

    Not for "<string>": it names every string compiled without a name of its own (``exec``, ``compile``), and from
    Python 3.13 on linecache also holds ``python -c``'s command under it, so the lines found there may be another
    program's (an exec'd ``def`` would be read from the command line)."""
    return filename != "<string>"


@dataclass(frozen=True, slots=True)
class SourceLoc:
    """A line of user code."""

    filename: str
    """Path of the file, as Python reports it (``co_filename``)."""
    lineno: int
    """1-based line number."""

    def __str__(self) -> str:
        name = os.path.basename(self.filename)
        if not name.isprintable():  # a newline in a file name must not break a printed line
            name = name.encode("unicode_escape").decode("ascii")
        return f"{name}:{self.lineno}"

    def text(self) -> str:
        """The source line itself, stripped ('' when the file cannot be read)."""
        if not lines_belong_to(self.filename):
            return ""
        return linecache.getline(self.filename, self.lineno).strip()

    def describe(self) -> str:
        """``file.py:12: `code line```, for error messages."""
        code = self.text()
        return f"{self}: `{code}`" if code else str(self)


@dataclass(frozen=True, slots=True)
class ParsedLoc(SourceLoc):
    """A location read back from printed IR. The text keeps only ``file.py:12`` (and, for a guard, the code
    line), so the code comes from the text, never from a file: a file of the same name nearby may be another."""

    code: str = ""
    """The stripped source line the text carried ('' when it carried none)."""

    def text(self) -> str:
        return self.code


def _is_internal(filename: str) -> bool:
    hit = _skip_cache.get(filename)
    if hit is None:
        hit = filename.startswith(_SKIP_PREFIXES) or filename.startswith("<frozen") or \
            filename in _GENERATED_FILENAMES
        _skip_cache[filename] = hit
    return hit


_locations: dict[tuple[str, int], SourceLoc] = {}


def user_location(skip: int = 1) -> SourceLoc | None:
    """The innermost stack frame that is not graph_lab's or NumPy's own code.

    A capture asks this for every node, mostly for the same few lines (a loop body), so each line's
    ``SourceLoc`` (immutable) is made once and shared."""
    frame = sys._getframe(skip)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not _is_internal(filename):
            key = (filename, frame.f_lineno)
            loc = _locations.get(key)
            if loc is None:
                if len(_locations) >= 65536:
                    _locations.clear()
                loc = _locations[key] = SourceLoc(*key)
            return loc
        frame = frame.f_back
    return None


def user_stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` call that makes the warning point at the user's line.

    Pass it straight in (``warnings.warn(message, Category, stacklevel=user_stacklevel())``): level 1 is the frame
    that calls ``warnings.warn``, and each frame of graph_lab or NumPy above it adds one, except the import
    machinery's, which ``warnings`` does not count either. How deep inside graph_lab a warning is raised changes
    as the code changes; a count written by hand would go stale. When no frame is the user's (the ``graph-lab``
    command), the outermost frame is named."""
    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
        if not _is_import_machinery(frame.f_code.co_filename):
            level += 1
    return level


def _is_import_machinery(filename: str) -> bool:
    """The frames ``warnings.warn`` steps over when it counts ``stacklevel`` (CPython's own rule)."""
    return "importlib" in filename and "_bootstrap" in filename
