"""Shrinking a failing program to a small reproducer.

Greedy, as in delta debugging: try each simplification (drop a statement, keep one branch of an ``if``,
inline a loop body, drop a line of a block, a return value, an unused argument), keep it when the program
still fails the same way, and start over until nothing simplifies. ``still_fails`` decides; a candidate whose
eager run raises (it read a variable that is gone) is not failing, so it is never kept.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, Iterator

from .program import If, Line, Loop, Program


def shrink(program: Program, still_fails: Callable[[Program], bool], budget: int = 400) -> Program:
    """The smallest program found, within ``budget`` calls of ``still_fails``, that still fails."""
    tries = 0
    progress = True
    while progress and tries < budget:
        progress = False
        for candidate in candidates(program):
            tries += 1
            if still_fails(candidate):
                program, progress = candidate, True
                break
            if tries >= budget:
                break
    return program


def candidates(program: Program) -> Iterator[Program]:
    for body in _bodies(program.body):
        yield dataclasses.replace(program, body=body)
    if len(program.returns) > 1:
        for i in range(len(program.returns)):
            yield dataclasses.replace(program, returns=program.returns[:i] + program.returns[i + 1:],
                                      return_style="tuple" if program.return_style == "single" else
                                      program.return_style)
    text = program.source()
    for i, arg in enumerate(program.args):
        if len(re.findall(rf"\b{arg.name}\b", text)) == 1:
            yield dataclasses.replace(program, args=program.args[:i] + program.args[i + 1:])


def _bodies(body: list) -> Iterator[list]:
    """Simpler versions of a statement list: one simplification each, last statements first."""
    for i in reversed(range(len(body))):
        s, before, after = body[i], body[:i], body[i + 1:]
        yield before + after
        if isinstance(s, If):
            yield before + s.body + after
            yield before + s.orelse + after
            for inner in _bodies(s.body):
                yield before + [dataclasses.replace(s, body=inner)] + after
            for inner in _bodies(s.orelse):
                yield before + [dataclasses.replace(s, orelse=inner)] + after
        elif isinstance(s, Loop):
            head = [Line(["i = 0"])] if "range(" in s.header else [Line(["w = items[0]"])]
            yield before + head + s.body + after
            for inner in _bodies(s.body):
                yield before + [dataclasses.replace(s, body=inner)] + after
        elif isinstance(s, Line) and len(s.code) > 1:
            for j in reversed(range(1, len(s.code))):
                yield before + [dataclasses.replace(s, code=s.code[:j] + s.code[j + 1:])] + after
