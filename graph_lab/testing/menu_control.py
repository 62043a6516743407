"""The op menu, part 3: convolution, pooling and batch norm, and structured control flow (``F.cond``,
``F.while_loop``, ``F.fori_loop``, ``F.scan``), whose branches and bodies are small lambdas of the template's own.

Image ops want [N, C, H, W]: a 2-D or 3-D variable is given the missing leading axes with ``reshape``/``None``.
"""

from __future__ import annotations

from ..ops import Op
from .picker import Block, Expr, Picker, magnitude


def _image(p: Picker, kernel: int) -> tuple[str, int, float] | None:
    """A 4-D text of a variable whose last two sizes are at least ``kernel``: (text, channels, magnitude)."""
    v = p.floating(lambda v: 2 <= v.ndim <= 4 and v.shape[-1] >= kernel and v.shape[-2] >= kernel)
    if v is None:
        return None
    text, lo, hi = p.bounded(v, 10.0)
    if v.ndim == 2:
        return f"np.reshape({text}, (1, 1) + {v.name}.shape)", 1, magnitude(lo, hi)
    if v.ndim == 3:
        return f"({text})[None]", v.shape[0], magnitude(lo, hi)
    return text, v.shape[1], magnitude(lo, hi)


def conv2d(p: Picker) -> Expr | None:
    k = p.choice((1, 2, 3))
    found = _image(p, k)
    if found is None:
        return None
    x, c, m = found
    o = p.choice((1, 2))
    weight = f"np.linspace(-0.5, 0.5, {o * c * k * k}).reshape({o}, {c}, {k}, {k})"
    extra = p.choice(("", ", padding=1", ", stride=2", f", np.linspace(0.0, 1.0, {o})"))
    bound = c * k * k * m * 0.5 + 1.0
    return Expr(f"F.conv2d({x}, {weight}{extra})", ("conv2d",), -bound, bound)


def _pool(op: Op):
    def template(p: Picker) -> Expr | None:
        k = p.choice((1, 2))
        v = p.numeric(lambda v: v.ndim >= 2 and v.shape[-1] >= k and v.shape[-2] >= k)
        if v is None:
            return None
        extra = p.choice(("", ", stride=1", ", padding=1" if k == 2 else ""))
        lo, hi = (v.lo, v.hi) if op == Op.MAX_POOL2D else (min(v.lo, 0.0), max(v.hi, 0.0))
        return Expr(f"F.{op.value}({v.name}, {k}{extra})", (op.value,), lo, hi)
    return template


def batch_norm(p: Picker) -> Expr | None:
    v = p.floating(lambda v: v.ndim >= 2)
    if v is None:
        return None
    c = v.shape[1]
    stats = f"np.linspace(-0.5, 0.5, {c}), np.linspace(0.5, 1.5, {c})"
    weight, bias = f"np.linspace(0.5, 1.5, {c})", f"np.linspace(-1.0, 1.0, {c})"
    affine = p.choice(("", f", {weight}", f", {weight}, {bias}"))
    bound = (magnitude(v.lo, v.hi) + 0.5) * 1.5 * 1.5 + 1.0
    return Expr(f"F.batch_norm({v.name}, {stats}{affine})", ("batch_norm",), -bound, bound)


def cond(p: Picker) -> Expr | None:
    v = p.numeric(lambda v: v.size > 0)
    if v is None:
        return None
    if v.dtype.kind == "f":
        branches, lo, hi = "lambda a: np.tanh(a) * 2.0, lambda a: a * 0.5 - 1.0", -2.0, 2.0
        lo, hi = min(lo, v.lo * 0.5 - 1.0), max(hi, v.hi * 0.5 - 1.0)
    else:
        branches, lo, hi = "lambda a: a * 2, lambda a: a - 1", min(2 * v.lo, v.lo - 1), max(2 * v.hi, v.hi - 1)
    test = p.choice((f"{v.name}.sum() > 0", f"{v.name}.max() > 1", f"({v.name} < 0).any()"))
    return Expr(f"F.cond({test}, {branches}, {v.name})", ("cond",), lo, hi)


def while_loop(p: Picker) -> Expr | None:
    v = p.floating(lambda v: v.size > 0)
    if v is None:
        return None
    text, lo, hi = p.bounded(v, 1000.0)
    return Expr(f"F.while_loop(lambda c: np.abs(c).max() > 1.0, lambda c: c * 0.5, {text} * 1.0)", ("while_loop",),
                min(lo, 0.0), max(hi, 0.0))


def fori_loop(p: Picker) -> Expr | None:
    v = p.numeric(lambda v: v.ndim >= 1 and v.shape[0] >= 1 and v.dtype.kind == "f")
    if v is None:
        return None
    m = magnitude(v.lo, v.hi)
    n = v.shape[0]
    body = f"lambda i, acc: acc * 0.5 + {v.name}[i]"
    return Expr(f"F.fori_loop(0, {n}, {body}, {v.name}[0] * 0.0)", ("fori_loop",), -2 * m, 2 * m)


def scan(p: Picker) -> Block | None:
    v = p.numeric(lambda v: v.ndim >= 1 and v.dtype.kind in "if")
    if v is None:
        return None
    text, lo, hi = p.bounded(v, 10.0)
    n, m = v.shape[0], magnitude(lo, hi)
    bound = max(n, 1) * m * max(m, 1.0)
    line = f"{{0}}, {{1}} = F.scan(lambda c, row: (c + row, c * row), ({text})[0] * 0, {text})"
    return Block([line], 2, ("scan",), -bound, bound) if n >= 1 else None


CONTROL = {
    Op.CONV2D: conv2d, Op.MAX_POOL2D: _pool(Op.MAX_POOL2D), Op.AVG_POOL2D: _pool(Op.AVG_POOL2D),
    Op.BATCH_NORM: batch_norm,
    Op.COND: cond, Op.WHILE_LOOP: while_loop, Op.FORI_LOOP: fori_loop, Op.SCAN: scan,
}
