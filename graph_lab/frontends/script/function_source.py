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
    """The parsed source of one Python function (``kept_between_captures.source_of`` keeps one per code object)."""

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

    def ask(self, question, node: ast.AST, stmts: list[ast.stmt]):
        """``question(stmts)`` (``assigned_names``, ``contains``...; ``stmts`` made from ``node`` alone, as
        ``node.body + node.orelse``), a list as a tuple, which no caller can change."""
        answer = question(stmts)
        return tuple(answer) if type(answer) is list else answer

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
