"""The text of a generated function written for Python's compiler, whose time grows with the lines and the names
it reads (``PyCode.text``; about half of a compile for a long graph): the inputs and the parameters each bound
by one line, a value that only the next line reads nested in it, NumPy functions called by names bound once,
and ``del`` after each array's last reader. ``python_source`` writes the viewable source (``g.code``) from the
same lines, with comments."""

from __future__ import annotations

import re
from typing import Any


_NUMPY_NAME = re.compile(r"np\.(\w+)")
_VARIABLE = re.compile(r"\bv\d+\b")


def _text_to_compile(body: list[tuple[str, str | None, Any]], return_line: str, rows: dict[int, str],
                     unpacked: dict[str, list[str]], nest: set[int], dying: dict[int, list[str]] | None = None
                     ) -> tuple[str, dict[int, Any], dict[int, list[tuple[int, int, Any]]], frozenset[str]]:
    """The code of ``body`` written for Python's compiler, whose time grows with the lines and the names read:

    - the lines that read an input or a parameter (``rows``: the row of ``body`` -> ``"inputs"`` or
      ``"params"``) become one line each for the inputs and the parameters, where the first of them was:
      ``v0, v1, v5 = inputs`` (each tuple holds one value per input or parameter, in order; ``unpacked`` names
      them, ``_`` for one whose line is written otherwise);
    - a value that only the next line reads (the rows ``nest``) is written inside it, in place of its name:
      ``v4 = np.add(v0, np.tanh(np.matmul(v0, v1)))`` for three lines. The calls run in the same order (the
      nested call is the only call among the arguments of the line it is nested in: the others are names,
      numbers and ``consts[i]``), and a failure is still told by node, from the columns of the instruction
      that raised (``PyCode.node_at``);
    - each NumPy function is read by a name bound once outside the function: ``np_matmul(v0, v1)`` for
      ``np.matmul(v0, v1)``, the same function;
    - after the line that reads an array last, ``del`` drops its name (``dying``: row -> names; see
      ``lifetimes``), so that its memory is freed when eager code would free it.

    Returns the text, the node of each of its lines, the nodes of the lines with nested calls (``(first column,
    end column, node)``, for each node written in the line) and the NumPy names read."""
    lines = ["def forward(inputs, params, consts):"]
    line_nodes: dict[int, Any] = {}
    line_spans: dict[int, list[tuple[int, int, Any]]] = {}
    where: dict[str, int] = {}  # "inputs"/"params" -> the line that unpacks it

    def add(lhs: str, rhs: str, spans: list[tuple[int, int, Any]]) -> None:
        lines.append(f"    {lhs} = {rhs}")
        assigned.update(_VARIABLE.findall(lhs))
        line_nodes[len(lines)] = spans[-1][2]  # (line numbers count from 1)
        if len(spans) > 1:
            at = 4 + len(lhs) + 3
            line_spans[len(lines)] = [(first + at, last + at, node) for first, last, node in spans]

    carry = None  # (name, expression, spans) of the row to write inside this one
    dying = dying or {}
    assigned: set[str] = set()  # the names the lines so far bind (a name written inside another line is none)
    pending: list[str] = []  # names to drop after the next line written

    def drop() -> None:
        names = sorted([name for name in pending if name in assigned], key=lambda name: int(name[1:]))
        pending.clear()
        if names:
            lines.append(f"    del {', '.join(names)}")
            assigned.difference_update(names)

    for i, (code, _, node) in enumerate(body):
        pending += dying.get(i, ())
        tuple_name = rows.get(i)
        if tuple_name is not None:
            if tuple_name not in where:
                where[tuple_name] = len(lines)
                lines.append("")
            continue
        if carry is None and i not in nest:
            lines.append("    " + code)
            line_nodes[len(lines)] = node
            assigned.update(_VARIABLE.findall(code.partition(" = ")[0]))
            drop()
            continue
        lhs, rhs = code.split(" = ", 1)
        spans = []
        if carry is not None:
            name, inner, inner_spans = carry
            carry = None
            # (nested only where the line calls nothing else among its arguments but the nested call: a symbolic
            # attribute is bound by a call, consts[3](s0, s1), that must not run before it)
            at = _read_once(rhs, name) if "](" not in rhs else -1
            if at < 0:  # (not read once by its name after all: written on a line of its own)
                add(name, inner, inner_spans)
            else:
                rhs = rhs[:at] + inner + rhs[at + len(name):]
                spans = [(first + at, last + at, n) for first, last, n in inner_spans]
        spans.append((0, len(rhs), node))
        if i in nest and len(spans) < NESTED_CALLS:
            carry = (lhs, rhs, spans)
        else:
            add(lhs, rhs, spans)
            drop()
    if carry is not None:
        add(*carry)
    for tuple_name, line in where.items():
        names = unpacked[tuple_name]
        lines[line] = f"    {', '.join(names)}{',' if len(names) == 1 else ''} = {tuple_name}"
    lines.append(return_line)
    text = "\n".join(lines) + "\n"
    # ("np." is in generated code only as the NumPy module: every other name there is vN, sN, inputs, params,
    # consts, impl_<op>, kernelN or an attribute's keyword, none of them followed by a dot; "np_" has its length,
    # so the columns stand)
    return text.replace("np.", "np_"), line_nodes, line_spans, frozenset(_NUMPY_NAME.findall(text))


def _read_once(code: str, name: str) -> int:
    """Where ``code`` reads the variable ``name``, if it reads it exactly once; else -1."""
    found, start = -1, 0
    while True:
        at = code.find(name, start)
        if at < 0:
            return found
        end = at + len(name)
        if (at == 0 or not (code[at - 1].isalnum() or code[at - 1] == "_")) and \
                (end == len(code) or not (code[end].isalnum() or code[end] == "_")):
            if found >= 0:
                return -1
            found = at
        start = end


def _columns_in_tracebacks() -> bool:
    """Python records the columns of each instruction (not under ``-X no_debug_ranges``): a failure inside a
    nested call can then be told from one around it."""
    code = compile("f(g(x))", "<check>", "eval")
    return all(position[2] is not None for position in code.co_positions())


NESTING = _columns_in_tracebacks()
"""Whether the text may nest a call inside the next line (see ``_text_to_compile``)."""
NESTED_CALLS = 8
"""At most this many calls in one line of the text: Python's parser refuses an expression nested 200 deep."""
