"""Console output for the lecture scripts: headers, aligned tables, numbered observations.

The course text is Chinese, so a character is not always one terminal column: CJK characters and
full-width punctuation take two, combining marks take none. Every width here is a *display* width,
measured by `display_width`; `len()` would misalign any column that holds Chinese text.

Text may contain `**bold**` markup. In a terminal it becomes ANSI bold; anywhere else (a pipe, a file,
a test) the markers are simply removed, so logs and diffs stay plain text.
"""

from __future__ import annotations

import numbers
import os
import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence

__all__ = ["display_width", "pad", "print_header", "print_table", "print_observations"]

MIN_RULE_WIDTH = 60
WRAP_WIDTH = 100
COLUMN_GAP = "  "

_BOLD_MARKUP = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
_BOLD_ON, _BOLD_OFF = "\x1b[1m", "\x1b[0m"

# Chinese typesetting never starts a line with these, so the wrapper keeps them on the line before.
_NO_LINE_START = set("，。、；：！？）》」』】〕”’,.;:!?)]}%…")


# --- widths -----------------------------------------------------------------------------------------


def char_width(ch: str) -> int:
    """Columns one character takes in a terminal: 2 for wide/full-width, 0 for combining marks."""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 2
    return 1


def display_width(s: str) -> int:
    """Columns `s` takes on screen. ANSI escape codes (bold on/off) take none."""
    return sum(char_width(ch) for ch in _ANSI_ESCAPE.sub("", s))


def pad(s: str, width: int, align: str = "left") -> str:
    """Pad `s` with spaces to `width` display columns; `align` is "left" or "right".

    str.ljust counts characters, not columns, so it under-pads every CJK string.
    """
    fill = " " * max(0, width - display_width(s))
    if align == "left":
        return s + fill
    if align == "right":
        return fill + s
    raise ValueError(f"pad(): align must be 'left' or 'right', got {align!r}")


# --- markup and cell text ---------------------------------------------------------------------------


def _use_bold() -> bool:
    """Bold only for a person at a terminal; NO_COLOR (https://no-color.org) turns it off."""
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def _render(text: str, bold: bool) -> str:
    """Turn `**x**` into ANSI bold, or drop the markers when `bold` is False."""
    replacement = _BOLD_ON + r"\1" + _BOLD_OFF if bold else r"\1"
    return _BOLD_MARKUP.sub(replacement, text)


def _is_number(value: object) -> bool:
    # bool is an int in Python, but True/False read as words, so they align like text.
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _format_float(x: float) -> str:
    """The shorter of repr (exact) and `:g` (six significant digits).

    `:g` keeps 0.1 + 0.2 readable as 0.3 and writes tiny values as 1e-07 instead of rounding them to 0;
    but it would turn 1234567.0 into 1.23457e+06, where repr is exact and no longer, so repr wins ties.
    """
    exact, short = repr(float(x)), f"{x:g}"
    return exact if len(exact) <= len(short) else short


def _cell_text(value: object) -> str:
    if _is_number(value) and not isinstance(value, numbers.Integral):
        return _format_float(value)
    return str(value)


# --- printing ---------------------------------------------------------------------------------------


def print_header(title: str) -> None:
    """A blank line, a rule, the title, a rule: marks where each demo of a script begins."""
    bold = _use_bold()
    rule = "=" * max(display_width(_render(title, False)), MIN_RULE_WIDTH)
    print()
    print(rule)
    print(_render(title, bold))
    print(rule)


def print_table(headers: Sequence[object], rows: Iterable[Sequence[object]]) -> None:
    """Print rows under headers, columns aligned by display width.

    Cells may be any object; floats are shortened (see `_format_float`). Numbers are right-aligned so
    their digits line up; a column holding only numbers right-aligns its header too.
    """
    rows = [list(row) for row in rows]
    for i, row in enumerate(rows):
        if len(row) != len(headers):
            raise ValueError(f"print_table(): row {i} has {len(row)} cells but there are "
                             f"{len(headers)} headers: {row!r}")
    bold = _use_bold()
    header_cells = [_render(str(h), bold) for h in headers]
    body_cells = [[_render(_cell_text(v), bold) for v in row] for row in rows]
    widths = [max(display_width(cell) for cell in column) for column in zip(header_cells, *body_cells)]
    numeric_column = [bool(rows) and all(_is_number(row[c]) for row in rows) for c in range(len(headers))]

    def line(cells: list[str], aligns: list[str]) -> str:
        return COLUMN_GAP.join(pad(cell, w, a) for cell, w, a in zip(cells, widths, aligns)).rstrip()

    print(line(header_cells, ["right" if numeric else "left" for numeric in numeric_column]))
    print(line(["-" * w for w in widths], ["left"] * len(widths)))
    for row, cells in zip(rows, body_cells):
        print(line(cells, ["right" if _is_number(v) else "left" for v in row]))


def print_observations(items: Iterable[str]) -> None:
    """Print the numbered take-aways of a demo, each wrapped with its text aligned under the first line."""
    items = list(items)
    bold = _use_bold()
    print()
    print("观察：")
    number_width = len(str(len(items)))
    for n, item in enumerate(items, start=1):
        prefix = f"{n:>{number_width}}. "
        indent = " " * len(prefix)
        lines = wrap(_render(item, bold), WRAP_WIDTH - len(prefix))
        for i, text in enumerate(lines):
            print(((prefix if i == 0 else indent) + text).rstrip())


# --- wrapping ---------------------------------------------------------------------------------------

_PIECE = re.compile(r"\x1b\[[0-9;]*m|\s+|.", re.DOTALL)  # an ANSI escape, a run of spaces, or one character


def _is_word(token: str) -> bool:
    """A run of narrow characters (an ASCII word), as opposed to spaces, an escape or a CJK character."""
    return bool(token) and not token.isspace() and token[0] != "\x1b" and char_width(token[0]) == 1


def _tokens(text: str) -> list[str]:
    """Split text into the units a line may break between.

    Narrow characters join into words (English breaks only at spaces), but each wide character stays a
    unit of its own, because Chinese may break between any two characters. Zero-width marks stay with
    the character they modify.
    """
    tokens: list[str] = []
    for piece in _PIECE.findall(text):
        previous = tokens[-1] if tokens else ""
        joins_mark = char_width(piece[0]) == 0 and previous and not previous.isspace()
        joins_word = not piece.isspace() and char_width(piece[0]) == 1 and _is_word(previous)
        if piece[0] != "\x1b" and (joins_mark or joins_word):
            tokens[-1] += piece
        else:
            tokens.append(piece)
    return tokens


def wrap(text: str, width: int) -> list[str]:
    """Break `text` into lines of at most `width` display columns (CJK-aware; newlines are kept).

    Lines break at spaces or next to a CJK character. Punctuation that Chinese never puts at the start
    of a line (，。）...) hangs past `width` instead; a word longer than a whole line is cut.
    """
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines.extend(_wrap_paragraph(paragraph, width))
    return lines


def _wrap_paragraph(text: str, width: int) -> list[str]:
    lines: list[str] = []
    line, line_width, space = "", 0, ""
    for token in _tokens(text):
        if token.isspace():
            space = " " if line_width else ""  # spaces collapse to one, and vanish at a line start
            continue
        token_width = display_width(token)
        hangs = len(token) == 1 and token in _NO_LINE_START
        if line_width and line_width + len(space) + token_width > width and not hangs:
            lines.append(line)
            line, line_width, space = "", 0, ""
        while token_width > width:  # only an over-long word gets here, on a fresh line
            head, token = _cut(token, width)
            lines.append(line + head)
            line = ""
            token_width = display_width(token)
        line += space + token
        line_width += len(space) + token_width
        space = ""
    lines.append(line)
    return [ln.rstrip() for ln in lines]


def _cut(word: str, width: int) -> tuple[str, str]:
    """Split `word` so that the head takes at most `width` columns (but at least one character)."""
    used = 0
    for i, ch in enumerate(word):
        used += char_width(ch)
        if used > width and i > 0:
            return word[:i], word[i:]
    return word, ""
