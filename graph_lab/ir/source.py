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
        hit = filename.startswith(_SKIP_PREFIXES) or filename.startswith("<frozen")
        _skip_cache[filename] = hit
    return hit


_locations: dict[tuple[str, int], SourceLoc] = {}


def user_location(skip: int = 1) -> SourceLoc | None:
    """The innermost stack frame that is not graph_lab's or NumPy's own code.

    A capture asks this for every node, mostly for the same few lines (a loop body), so each line's
    ``SourceLoc`` (immutable) is made once and shared."""
    frame = sys._getframe(skip)
    skip_cache = _skip_cache
    while frame is not None:
        filename = frame.f_code.co_filename
        internal = skip_cache.get(filename)  # (``_is_internal``'s cache, read here: a capture asks per frame)
        if internal is None:
            internal = _is_internal(filename)
        if not internal:
            key = (filename, frame.f_lineno)
            loc = _locations.get(key)
            if loc is None:
                if len(_locations) >= 65536:
                    _locations.clear()
                loc = _locations[key] = SourceLoc(*key)
            return loc
        frame = frame.f_back
    return None
