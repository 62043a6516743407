"""Whether a segment's guards hold, on the general path (a function with graph breaks, or an entry the fast path
does not cover): one generated function per segment, written by the fast path's writer (``cache_hit_fast_path``)
from the segment's locals and stack::

    def holds(L, S):
        for _ in ONCE:
            try:
                v0 = L[K0]
                if not (type(v0) is ndarray and v0.shape == K1 and v0.dtype == K2):
                    break
                v1 = S[1]
                ...
            except Exception:
                break
            return True
        return False

The segment's own guard function (``GuardSet.compile``) says *which* guard failed, for the recompile's reason;
it runs only when this one says no. This one is the cheaper of the two because it only says yes or no: one
``try`` for all the reads, and the expected values as names bound in a closure rather than items of a list
(measured on the corpus's ``llama_decode``: see docs/performance.md).
"""

from __future__ import annotations

from .cache_hit_fast_path import _NotFast, _Writer, generated_namespace
from .sources import FrameInputs, LocalSource, StackSource


class _FrameWriter(_Writer):
    """The fast path's writer, reading locals by name from the dict ``L`` and stack entries from the list ``S``."""

    def expression(self, source) -> str:
        if type(source) is LocalSource:
            return f"L[{self.const(source.name)}]"
        if type(source) is StackSource:
            return f"S[{int(source.index)}]"
        return super().expression(source)


def make_holds(cf, seg):
    """``holds(locals, stack) -> bool`` for ``seg`` of the compiled function ``cf`` (its globals and closure are
    the function's own, as on every call of the general path)."""
    writer = _FrameWriter(cf, [])
    body, _ = writer.guard_lines(seg.guards.guards)
    lines = [f"def make({', '.join(f'K{i}' for i in range(len(writer.consts)))}):",
             "    def holds(L, S):", "        for _ in ONCE:", "            try:"]
    lines += [f"                {line}" for line in body] or ["                pass"]
    lines += ["            except Exception:", "                break", "            return True",
              "        return False", "    return holds"]
    source = "\n".join(lines)
    namespace = generated_namespace()
    exec(compile(source, "<graph_lab segment guards>", "exec"), namespace)
    holds = namespace["make"](*writer.consts)
    holds.source_text = source
    return holds


def first_failing(cf, seg, inputs: FrameInputs) -> int:
    """-1 when ``seg``'s guards hold on ``inputs``, else the index of the first that fails (asked of the
    segment's own guard function only then)."""
    holds = seg.__dict__.get("_holds")
    if holds is None:
        try:
            holds = make_holds(cf, seg)
        except _NotFast:  # a source the writer cannot read: the guard function alone decides
            holds = _ask_check
        seg._holds = holds
    if holds is not _ask_check and holds(inputs.locals, inputs.stack):
        return -1
    return seg.check(inputs)


def _ask_check(L, S) -> bool:
    """The ``holds`` of a segment whose guards only its own guard function reads."""
    return False
