"""In-place writes for the generator (``Options.mutation``): into arguments, fresh arrays and views of both.

Each form writes into an array already in scope (an argument, or a value the program made, which may itself be
a view of an argument): an item or a slice, the whole array, a boolean mask (``t[t > m] = m``,
``t[u > 0] = u[u > 0]``), an index array with a repeated index, ``np.maximum.at``, ``np.copyto``, ``out=``, a
time loop of updates of overlapping slices (``t[1:-1] = t[:-2] * 0.25 + t[2:] * 0.5``), a
view taken and written through (an index, ``.T``, a one-operand ``np.einsum``), with a graph break
(``float(t.sum())``) between the view and the write, and a reshape of an array just written. The values
written stay inside the target's interval, so every alias of it (which the generator does not track) keeps the
interval it was given. The generator runs each form on samples and keeps the ones NumPy accepts.
"""

from __future__ import annotations

import math
import random
import re

from .program import Var

KEYS = ["0", "-1", "1:", "::2", "...", "..., 0", ":, 0", "1:, ::-1", "None, 0"]


def inside(t: Var) -> str | None:
    """A number in the target's interval (an int for an int array)."""
    if t.dtype.kind in "iu":
        v = math.ceil(t.lo)
        return str(v) if v <= t.hi else None
    return repr(round((t.lo + t.hi) / 2, 3))


def clipped(u: Var, t: Var) -> str:
    """``u``'s values moved into ``t``'s interval."""
    lo, hi = (math.ceil(t.lo), math.floor(t.hi)) if t.dtype.kind in "iu" else (t.lo, t.hi)
    return f"np.clip({u.name}, {lo!r}, {hi!r})"


def write(rng: random.Random, scope: list[Var], name) -> tuple[list[str], list[Var]] | None:
    """One write statement (its lines, and the variables it defines), or None when nothing fits."""
    targets = [v for v in scope if v.dtype.kind in "iuf" and not v.scalar and v.ndim >= 1 and v.size > 0]
    if not targets:
        return None
    t = rng.choice(targets)
    m = inside(t)
    if m is None:
        return None
    key = rng.choice(KEYS)
    others = [v for v in scope if v.dtype.kind in "iuf" and not v.scalar]
    u = rng.choice(others)
    value = rng.choice([m, clipped(u, t)])
    halves = t.lo <= 0 <= t.hi and t.dtype.kind == "f"  # x * 0.5 stays in the interval
    same_shape = [v for v in others if v.shape == t.shape]
    w = rng.choice(same_shape)
    n = t.shape[0]
    forms = [
        [f"{t.name}[{key}] = {value}"],
        [f"{t.name}[{t.name} > {m}] = {m}"],
        [f"{t.name}[{w.name} > 0] = {clipped(w, t)}[{w.name} > 0]"],
        [f"{t.name}[np.array([0, {n - 1}, 0])] = np.array([{m}, {m}, {value}])" if value == m else
         f"{t.name}[np.array([0, {n - 1}, 0])] = {m}"],
        [f"np.maximum.at({t.name}, np.array([0, 0, {n - 1}]), {m})"],
        [f"np.minimum.at({t.name}, np.array([{n - 1}, 0, {n - 1}]), {m})"],
        [f"np.copyto({t.name}, {clipped(u, t)})"],
    ]
    new: list[Var] = []
    if halves:
        forms += [[f"{t.name}[{key}] *= 0.5"], [f"{t.name} *= 0.5"],
                  [f"{t.name}[{t.name} < {m}] -= {t.name}[{t.name} < {m}] * 0.5"],
                  [f"np.multiply({t.name}, 0.5, out={t.name})"]]
        v, s = name("h"), name("s")
        view = Var(v, (), t.dtype, t.lo, t.hi)  # (its shape: set by the generator from the sample run)
        forms += [[f"{v} = {t.name}[{key}]", f"{v} *= 0.5"],
                  [f"{v} = {t.name}[{key}]", f"{s} = float({t.name}.sum())", f"{v} *= 0.5"],
                  [f"{v} = {t.name}.T", f"{v}[0] = {m}"],
                  # a view that is a reshape taken after the write (a view of a contiguous argument the caller
                  # may write into; found by the strict ways)
                  [f"{t.name}[{key}] = {value}", f"{v} = {t.name}.reshape(-1)"]]
        if n >= 3:  # a time loop of statements over overlapping slices of one array (C programs: c_programs.py)
            forms += [["for _ in range(3):", f"    {t.name}[1:-1] = {t.name}[:-2] * 0.25 + {t.name}[2:] * 0.5",
                       f"    {t.name}[0] = {t.name}[-1] * 0.5"],
                      ["for _ in range(4):", f"    {t.name}[1:] = {t.name}[1:] * 0.5 + {t.name}[:-1] * 0.25",
                       f"    {t.name}[:-1] = {t.name}[1:] * 0.25 + {t.name}[::-1][1:] * 0.5"]]
        forms += statement_loops(t, [v for v in same_shape if v is not t and v.dtype == t.dtype
                                     and t.lo <= v.lo and v.hi <= t.hi])
        if t.ndim == 2:  # np.einsum of one operand that only permutes it returns a view (found by the strict ways)
            forms += [[f"{v} = np.einsum('ij->ji', {t.name})", f"{v}[0] = {m}"]]
        # writes through a window that the backends compute in the window itself (``backends/view_writes.py``),
        # a window read by a sum after such a write (in eager's layout), a value read from a window before a
        # write into its base, and the wrap-around of a particle code (a whole-array update, then masked ones)
        w, c = name("h"), name("h")
        forms += [[f"{v} = {t.name}[{key}]", f"{v}[{v} < {m}] *= 0.5"],
                  [f"{v} = {t.name}[{key}]", f"{v}[{v} > {m}] = {m}", f"{v} -= {v} * 0.5"],
                  [f"{v} = {t.name}[{key}]", f"{v} *= 0.5", f"{s} = {v}.sum()"],
                  [f"{w} = {t.name}[{key}]", f"{c} = {w} + 0.0", f"{t.name} *= 0.5"],
                  [f"{t.name} *= 0.5", f"{t.name}[{t.name} > {m}] -= {t.name}[{t.name} > {m}] * 0.5",
                   f"{t.name}[{t.name} < {m}] *= 0.5"]]
    if t.dtype.kind in "iu" and t.lo <= 0 <= t.hi:
        forms += integer_updates(t, m, n)
    lines = rng.choice(forms)
    if halves and any(line.startswith(f"{view.name} = ") for line in lines):
        new.append(view)
    if halves and any(line.startswith(f"{s} = {v}.sum()") for line in lines):
        n = max(1, t.size)
        new.append(Var(s, (), t.dtype, t.lo * n, t.hi * n))
    if halves and any(line.startswith(f"{c} = ") for line in lines):
        new.append(Var(c, (), t.dtype, t.lo, t.hi))
    if rng.random() < 0.2:  # a fresh array, written into
        f = name("h")
        lines = [f"{f} = {rng.choice(['np.zeros_like', 'np.copy'])}({t.name})"] + [
            re.sub(rf"\b{t.name}\b", f, line) for line in lines]
        new = [Var(f, t.shape, t.dtype, min(t.lo, 0.0), max(t.hi, 0.0))] + \
            [Var(v.name, v.shape, v.dtype, min(t.lo, 0.0), max(t.hi, 0.0)) for v in new]
    return lines, new


def integer_updates(t: Var, m: str, n: int) -> list[list[str]]:
    """In-place updates of an int array whose interval holds 0 (``x >> k`` lies between x and 0, ``maximum`` and
    ``minimum`` of values inside stay inside, a mask cast to the dtype times ``m`` is 0 or ``m``): shifts and
    compares in place and in time loops over overlapping slices, as the integer stencils and generators of the
    corpus write them (fused kernels and C programs on integers: ``backends/c_integers.py``)."""
    forms = [[f"{t.name} >>= 1"], [f"np.right_shift({t.name}, 2, out={t.name})"],
             [f"{t.name}[..., 1:] = np.maximum({t.name}[..., 1:] >> 1, {t.name}[..., :-1] >> 2)"]]
    if n >= 3:
        forms += [["for _ in range(3):", f"    {t.name}[1:-1] = np.minimum({t.name}[:-2], {t.name}[2:]) >> 1",
                   f"    {t.name}[0] = {t.name}[-1] >> 1"],
                  ["for _ in range(2):", f"    {t.name}[1:-1] = (({t.name}[:-2] > {m}) & ({t.name}[2:] <= {m}))"
                   f".astype({t.name}.dtype) * {m}"]]
    return forms


def statement_loops(t: Var, within: list[Var]) -> list[list[str]]:
    """Time loops of slice updates that C programs compute (``backends/c_programs.py``): stepped and reversed
    windows, a statement reading the array it writes, two arrays updated from each other (``within``: arrays of
    ``t``'s shape and dtype whose values lie in ``t``'s interval), a 2-D stencil. Weights add up to at most 1,
    so the values stay in ``t``'s interval (which holds 0)."""
    n, x = t.shape[0], t.name
    if n < 4:
        return []
    forms = [["for _ in range(3):", f"    {x}[2::2] = {x}[:-2:2] * 0.5 + {x}[2::2] * 0.25",
              f"    {x}[:0:-1] = {x}[1:] * 0.25 + {x}[:-1] * 0.5"],
             ["for _ in range(2):", f"    {x}[1:-1] = ({x}[:-2] + {x}[1:-1] + {x}[2:]) * 0.25",
              f"    {x}[1:] += ({x}[:-1] - {x}[1:]) * 0.25"]]
    if within:
        w = within[0].name
        forms += [["for _ in range(3):", f"    {w}[1:-1] = ({x}[:-2] + {x}[2:]) * 0.5",
                   f"    {x}[1:-1] = ({w}[:-2] + {w}[1:-1] + {w}[2:]) * 0.25"]]
    if t.ndim == 2 and t.shape[1] >= 3:
        forms += [["for _ in range(2):", f"    {x}[1:-1, 1:-1] = ({x}[:-2, 1:-1] + {x}[2:, 1:-1] + {x}[1:-1, :-2] + "
                   f"{x}[1:-1, 2:]) * 0.25"]]
    return forms
