"""The op table's one speed-up: a memo of the type rules' answers, for captures whose sizes are all static.

A capture asks the same rule the same question over and over (every layer of a network adds, multiplies and
applies ``tanh`` to arrays of the same types). ``infer_static`` is ``definition.infer(types, attrs)`` with the
answer kept; the recorder (``frontends/recorder.py``) and ``verify`` ask it when no ShapeEnv is active, and the
rule itself otherwise.

Measured reason (instructions, so the machine's load does not matter: ``PYTHONPATH=. python3
benchmarks/shortcut_instructions.py --sizes=8 infer-memo infer-memo@compile``, callgrind): the W2 chain at 8
layers, 9.8% and 15.7% fewer instructions in a trace() capture (two runs), 10.3% in compile()'s first call; CPU
time of a trace() capture, interleaved, 21%. A second level that looked the types up by identity first saved 0.1%
of a trace() capture and is gone; so are ``broadcast_shapes``' and ``broadcast``'s shortcuts for operands of one
shape (see ``frontends/recording_shortcuts.py``). ``tests/frontends/test_shortcuts_recording.py`` checks captures
with the memo against captures without it, and the memo's own rules.
"""

from __future__ import annotations

from .base import Op, OpDef

_MEMO_ATTR_TYPES = frozenset({int, bool, str, type(None), Op})
_infer_memo: dict[tuple, tuple] = {}
_INFER_MEMO_SIZE = 4096


def infer_static(definition: OpDef, types: tuple, attrs: dict) -> tuple:
    """``definition.infer(types, attrs)``, remembered: for captures whose shapes are all static.

    With no ShapeEnv active a rule is a pure function of the operand types and the attributes, so its answer can
    be kept. Only attributes that are ints, bools, strings, None, ops, or tuples of ints and None are keyed, each
    with its Python type (``True`` and ``1`` are equal keys in a dict, but not the same attribute); anything else
    (a float, an array, a region) is inferred anew. Errors are never remembered: a failing rule raises again each
    time."""
    if attrs:
        parts = [definition.op, types]
        for k, v in attrs.items():
            t = type(v)
            if t is tuple:
                if not all(type(x) is int or x is None for x in v):
                    return definition.infer(types, attrs)
            elif t not in _MEMO_ATTR_TYPES:
                return definition.infer(types, attrs)
            parts.append((k, t, v))
        key = tuple(parts)
    else:
        key = (definition.op, types)
    hit = _infer_memo.get(key)
    if hit is None:
        hit = tuple(definition.infer(types, attrs))
        if len(_infer_memo) >= _INFER_MEMO_SIZE:
            _infer_memo.clear()
        _infer_memo[key] = hit
    return hit
