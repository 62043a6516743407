"""Reading sources in generated code: each source once, through the values already read.

A guard function and a segment's input list read many sources that share their beginnings (``self.layers[0].wq``,
``self.layers[0].wk``, ...). Calling each source's ``fetch`` walks its path from the frame every time, one Python
call per step; generated code reads each source once, as a variable, from its base's variable:
``v3 = getattr(v1, N[2])``, ``v4 = v3[N[3]]``, ``v0 = I[0][N[0]]`` (a local), ``v5 = I[1][2]`` (a stack entry),
and any other source through its own fetch (``S[6](I)``). Attribute names and item keys are passed in (``N``),
never written into the text, as in the guard and fast-path functions.
"""

from __future__ import annotations

from .sources import AttrSource, ItemSource, LocalSource, Source, StackSource


class SourceReads:
    """The lines that read sources into variables ``v0, v1, ...``; ``on_failure(n)`` is the line run when a read
    raises (None: the exception goes on)."""

    def __init__(self, lines: list[str], indent: str = "    "):
        self.lines = lines
        self.indent = indent
        self.sources: list[Source] = []
        self.index: dict[Source, int] = {}
        self.names: list = []

    def fetch(self, s: Source, on_failure: str | None = None) -> str:
        """The variable holding ``s``'s value, read (with its base first) the first time it is asked for."""
        if s in self.index:
            return f"v{self.index[s]}"
        kind = type(s)
        if kind is AttrSource or kind is ItemSource:
            base = self.fetch(s.base, on_failure)
            self.names.append(s.name if kind is AttrSource else s.key)
            key = f"N[{len(self.names) - 1}]"
            read = f"getattr({base}, {key})" if kind is AttrSource else f"{base}[{key}]"
        elif kind is LocalSource:
            self.names.append(s.name)
            read = f"I[0][N[{len(self.names) - 1}]]"
        elif kind is StackSource:
            read = f"I[1][{int(s.index)}]"
        else:
            read = f"S[{len(self.sources)}](I)"
        self.index[s] = len(self.sources)
        self.sources.append(s)
        name = f"v{self.index[s]}"
        if on_failure is None:
            self.lines.append(f"{self.indent}{name} = {read}")
        else:
            self.lines += [f"{self.indent}try:", f"{self.indent}    {name} = {read}", f"{self.indent}except Exception:",
                           f"{self.indent}    {on_failure}"]
        return name

    def namespace(self) -> dict:
        """What the generated lines read besides the frame's state ``I``."""
        return {"S": [s.fetch for s in self.sources], "N": self.names}


def input_reader(sources: list[Source]):
    """A function of a ``FrameInputs`` giving the tuple of ``sources``' values, in order (a segment's inputs)."""
    lines = ["def read(I):"]
    reads = SourceReads(lines)
    names = [reads.fetch(s) for s in sources]
    lines.append(f"    return ({''.join(n + ', ' for n in names)})")
    namespace = reads.namespace()
    exec(compile("\n".join(lines), "<graph_lab input reads>", "exec"), namespace)
    return namespace["read"]
