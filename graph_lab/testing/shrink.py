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

from .program import If, Line, Loop, Program, Var


def shrink(program: Program, still_fails: Callable[[Program], bool], budget: int = 1000) -> Program:
    """The smallest program found, within ``budget`` calls of ``still_fails``, that still fails."""
    tries = 0
    progress = True
    while progress and tries < budget:
        progress = False
        current = program.source()
        for candidate in candidates(program):
            if candidate.source() == current:
                continue  # a "simplification" that changes nothing would loop forever
            tries += 1
            if still_fails(candidate):
                program, progress = candidate, True
                break
            if tries >= budget:
                break
    return program


def candidates(program: Program) -> Iterator[Program]:
    """Simpler programs, the ones that remove the most first: dead statements, a return value, statements."""
    live = _without_dead(program.body, set(program.returns))
    if len(live) < len(program.body):
        yield dataclasses.replace(program, body=live)
    if len(program.returns) > 1:
        for i in range(len(program.returns)):
            yield dataclasses.replace(program, returns=program.returns[:i] + program.returns[i + 1:],
                                      return_style="tuple" if program.return_style == "single" else
                                      program.return_style)
    text = program.source()
    for i, arg in enumerate(program.args):
        if len(re.findall(rf"\b{arg.name}\b", text)) == 1 and not program.aliases:  # (aliases count by position)
            yield dataclasses.replace(program, args=program.args[:i] + program.args[i + 1:])
    for body in _bodies(program.body, list(program.args)):
        yield dataclasses.replace(program, body=body)


def _without_dead(body: list, used: set[str]) -> list:
    """``body`` without the plain statements whose variables nothing after them reads (nor the return)."""
    kept: list = []
    for s in reversed(body):
        names = {v.name for v in s.defines}
        if isinstance(s, Line) and not s.effect and names and not names & used:
            continue
        kept.append(s)
        used = used | _words(s)
    return kept[::-1]


def _words(s) -> set[str]:
    if isinstance(s, Line):
        text = " ".join(s.code)
    elif isinstance(s, If):
        return {w for w in re.findall(r"\w+", s.test)} | set().union(*map(_words, s.body + s.orelse), set())
    else:
        return {w for w in re.findall(r"\w+", s.header)} | set().union(*map(_words, s.body), set())
    return set(re.findall(r"\w+", text))


def _bodies(body: list, scope: list[Var]) -> Iterator[list]:
    """Simpler versions of a statement list: one simplification each, last statements first. ``scope`` holds
    the variables defined before ``body``."""
    scopes = [list(scope)]
    for s in body:
        scopes.append(scopes[-1] + list(s.defines))
    for i in reversed(range(len(body))):
        s, before, after = body[i], body[:i], body[i + 1:]
        yield before + after
        if isinstance(s, If):
            yield before + s.body + after
            yield before + s.orelse + after
            for inner in _bodies(s.body, scopes[i]):
                yield before + [dataclasses.replace(s, body=inner)] + after
            for inner in _bodies(s.orelse, scopes[i]):
                yield before + [dataclasses.replace(s, orelse=inner)] + after
        elif isinstance(s, Loop):
            head = [Line(["i = 0"])] if "range(" in s.header else [Line(["w = items[0]"])]
            yield before + head + s.body + after
            for inner in _bodies(s.body, scopes[i]):
                yield before + [dataclasses.replace(s, body=inner)] + after
        elif isinstance(s, Line):
            for j in reversed(range(1, len(s.code))):
                yield before + [dataclasses.replace(s, code=s.code[:j] + s.code[j + 1:])] + after
            for simpler in _simpler_assignments(s, scopes[i]):
                yield before + [simpler] + after


def _simpler_assignments(s: Line, scope: list[Var]) -> Iterator[Line]:
    """``h5 = <anything>`` -> ``h5 = x0`` for each earlier variable of the same type: the statements that only
    fed the old expression can then go too."""
    if len(s.defines) != 1 or s.defines[0].scalar:
        return
    target = s.defines[0]
    for v in scope:
        if v.name != target.name and not v.scalar and v.shape == target.shape and v.dtype == target.dtype:
            yield dataclasses.replace(s, code=[f"{target.name} = {v.name}"])

def minimize(program: Program, w, calls_for: Callable | None = None):
    """Shrink a program that fails on way ``w``, keeping the same kind of failure; (program, its outcome)."""
    from .differential import default_calls, differential
    calls_for = calls_for or default_calls

    def signature(candidate: Program):
        verdict = differential(candidate, [w], calls_for(candidate))
        if verdict.discarded:
            return None, None
        o = verdict.outcomes[0]
        return (o.status, o.mismatch.kind if o.mismatch else o.detail.split(":")[0]), o

    wanted, _ = signature(program)
    small = shrink(program, lambda candidate: signature(candidate)[0] == wanted)
    return small, signature(small)[1]
