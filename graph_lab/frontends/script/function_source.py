"""A function's source, parsed, and the errors that point into it.

``script`` never runs the function: it reads its source with ``inspect`` and parses it with ``ast``. Every node
of that tree knows its line and columns in the dedented text; ``FunctionSource`` maps them back to the file, so a
``ScriptError`` shows the line as the file has it, with a caret under the construct, as Python's tracebacks do.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import textwrap
import types
import weakref

from ...errors import ScriptError
from ...ir.source import SourceLoc, lines_belong_to

# Statements whose caret goes under their keyword only (the whole statement would underline its body too).
_KEYWORDS = {ast.Try: "try", ast.With: "with", ast.AsyncWith: "async", ast.While: "while", ast.For: "for",
             ast.AsyncFor: "async", ast.If: "if", ast.Global: "global", ast.Nonlocal: "nonlocal",
             ast.Raise: "raise", ast.Return: "return", ast.Break: "break", ast.Continue: "continue",
             ast.Assert: "assert", ast.Delete: "del", ast.Import: "import", ast.ImportFrom: "from",
             ast.ClassDef: "class", ast.AsyncFunctionDef: "async", ast.Match: "match"}
if hasattr(ast, "TryStar"):
    _KEYWORDS[ast.TryStar] = "try"


_NO_ANSWER = object()

_parsed: "weakref.WeakKeyDictionary[types.CodeType, FunctionSource]" = weakref.WeakKeyDictionary()


def source_of(fn) -> "FunctionSource":
    """The parsed source of the plain function ``fn``, read and parsed once per code object.

    Reading a function's lines (``inspect``), then tokenizing and parsing them, costs more than converting a small
    function. A code object is compiled from one version of the source and never changes, so its parse is kept
    for as long as the code object lives (weakly: a redefined function gets a new code object, hence a new
    parse, and the old entry goes with the old code). Nothing in ``script`` changes the syntax tree it is given,
    so one tree can serve every call (the ``FunctionSource`` holds no reference to the function or its code,
    which would keep the entry alive). A function whose source cannot be read raises each time (nothing kept)."""
    code = fn.__code__
    source = _parsed.get(code)
    if source is None or source.name != fn.__name__:  # a renamed copy of a function: messages use its name
        source = _parsed[code] = FunctionSource(fn)
    return source


class LineLocs(dict):
    """Line of the parsed text -> ``SourceLoc`` in the file, each made on first use (``__missing__``): a plain
    dict lookup for every line seen before, which the converter does for every node it converts."""

    def __init__(self, filename: str, first_line: int):
        super().__init__()
        self.filename, self.first_line = filename, first_line

    def __missing__(self, lineno: int) -> SourceLoc:
        loc = self[lineno] = SourceLoc(self.filename, self.first_line + lineno - 1)
        return loc


class FunctionSource:
    """The parsed source of one Python function (through ``source_of``, one per code object)."""

    def __init__(self, fn):
        self.name = getattr(fn, "__name__", "function")
        code = getattr(fn, "__code__", None)
        self.filename = code.co_filename if code is not None else "<unknown>"
        try:
            if not lines_belong_to(self.filename):
                raise OSError(f"the lines linecache holds for {self.filename} may be another source's")
            lines, self.first_line = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            raise ScriptError(f"script() cannot read the source of {self.name} (defined in {self.filename}); it "
                              f"converts a function from its source, so the function must be defined with def in a "
                              f"file", filename=self.filename, construct="a function without source",
                              hint="define the function in a .py file (not in the REPL, exec or a C extension)") \
                from None
        text = "".join(lines)
        self.indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
        tree = ast.parse(textwrap.dedent(text)) if not self.name == "<lambda>" else None
        node = tree.body[0] if tree is not None and tree.body else None
        if not isinstance(node, ast.FunctionDef):
            raise ScriptError(f"script() takes a function defined with def; {self.name} is "
                              f"{'a lambda' if self.name == '<lambda>' else 'not one'}\n  File \"{self.filename}\", "
                              f"line {self.first_line}", filename=self.filename, lineno=self.first_line,
                              construct="a lambda" if self.name == "<lambda>" else "not a def",
                              hint="write it as def f(x): return ... and script f")
        self.tree: ast.FunctionDef = node
        """The function's ``def``, with line numbers counted from its first line (decorators included)."""
        self.locs = LineLocs(self.filename, self.first_line)
        """``locs[node.lineno]``: the ``SourceLoc`` of a line of the parsed text, made the first time it is asked
        for and then shared by every node made from that line (a loop body is converted over and over)."""
        self.analyses: dict = {}
        """``analysis.py``'s answers about nodes of this tree, by (question, node): see ``ask``."""

    def ask(self, question, node: ast.AST, stmts: list[ast.stmt]):
        """``question(stmts)`` (``assigned_names``, ``contains``...; ``stmts`` made from ``node`` alone, as
        ``node.body + node.orelse``), worked out once per node of this tree. The tree is never changed and lives as
        long as this object, so the answer holds for every later conversion of the node: an ``if`` on tensor data
        inside an unrolled loop is converted once per iteration, and walking its branches each time cost as much
        as converting them. (Keyed by the node itself, which hashes by identity.)"""
        key = (question, node)
        answer = self.analyses.get(key, _NO_ANSWER)
        if answer is _NO_ANSWER:
            answer = question(stmts)
            if type(answer) is list:  # shared by every caller: a tuple, which none can change
                answer = tuple(answer)
            self.analyses[key] = answer
        return answer

    def line(self, node: ast.AST) -> int:
        """The line of ``node`` in the file."""
        return self.first_line + node.lineno - 1

    def loc(self, node: ast.AST) -> SourceLoc:
        """Where in the file ``node`` is (one shared, immutable ``SourceLoc`` per line)."""
        return self.locs[node.lineno]

    def error(self, node: ast.AST, message: str, hint: str, construct: str = "") -> ScriptError:
        """A ``ScriptError`` at ``node``: the message, the file and line, the code with a caret under the
        construct, then the hint."""
        lineno = self.line(node)
        col = node.col_offset + self.indent
        code = linecache.getline(self.filename, lineno).rstrip("\n")
        keyword = _KEYWORDS.get(type(node))
        if keyword is not None:
            width = len(keyword)
        elif getattr(node, "end_lineno", node.lineno) == node.lineno and node.end_col_offset is not None:
            width = node.end_col_offset - node.col_offset
        else:
            width = len(code) - col
        stripped = code.lstrip()
        shift = len(code) - len(stripped)
        where = f'  File "{self.filename}", line {lineno}, in {self.name}'
        caret = " " * (4 + col - shift) + "^" * max(1, width)
        text = f"{message}\n{where}\n    {stripped}\n{caret}\n{hint}"
        return ScriptError(text, filename=self.filename, lineno=lineno, col=col + 1,
                           construct=construct or message, hint=hint)

    def show(self, node: ast.AST) -> str:
        """``file.py:12: `code``` for a message that cites another line (the other branch's assignment)."""
        lineno = self.line(node)
        code = linecache.getline(self.filename, lineno).strip()
        return f"{os.path.basename(self.filename)}:{lineno}: `{code}`"
