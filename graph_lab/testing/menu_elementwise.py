"""The op menu, part 1: elementwise ops, reductions and the ``*_like`` constructors.

A template writes one call of its op on variables in scope, spelled the ways NumPy code spells it (operators,
``np.*`` functions, ndarray methods, ``F.*`` for the composites NumPy lacks), and works out the interval of the
result. It returns None when nothing in scope fits. Shapes and dtypes are NumPy's business (generator.py asks
NumPy by running the text on small arrays).
"""

from __future__ import annotations

import math

from ..ops import Op
from .picker import Expr, Picker, broadcasts_to, corners, magnitude, spread

# --- one operand


def _unary(op: Op, spellings: tuple[str, ...], interval, kinds: str = "iuf", prepare=None):
    """``interval(lo, hi) -> (lo, hi)``; ``prepare(picker, var) -> (text, lo, hi)`` makes the operand safe."""
    def template(p: Picker) -> Expr | None:
        v = p.array(lambda v: v.dtype.kind in kinds)
        if v is None:
            return None
        text, lo, hi = prepare(p, v) if prepare else (v.name, v.lo, v.hi)
        return Expr(p.choice(spellings).format(text), (op.value,), *interval(lo, hi))
    return template


def _bounded(limit):
    return lambda p, v: p.bounded(v, limit)


def _positive(p, v):
    return p.positive(v)


def _abs_interval(lo, hi):
    return (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi))), magnitude(lo, hi)


def _square_interval(lo, hi):
    low, high = _abs_interval(lo, hi)
    return low * low, high * high


UNARY = {
    Op.NEG: _unary(Op.NEG, ("-{}", "np.negative({})"), lambda lo, hi: (-hi, -lo)),
    Op.ABS: _unary(Op.ABS, ("np.abs({})", "abs({})"), _abs_interval),
    Op.SIGN: _unary(Op.SIGN, ("np.sign({})",), lambda lo, hi: (-1.0, 1.0)),
    Op.EXP: _unary(Op.EXP, ("np.exp({})",), lambda lo, hi: (math.exp(lo), math.exp(hi)), prepare=_bounded(8)),
    Op.LOG: _unary(Op.LOG, ("np.log({})",), lambda lo, hi: (math.log(lo), math.log(hi)), prepare=_positive),
    Op.LOG1P: _unary(Op.LOG1P, ("np.log1p({})",), lambda lo, hi: (math.log1p(lo), math.log1p(hi)),
                     prepare=_positive),
    Op.EXPM1: _unary(Op.EXPM1, ("np.expm1({})",), lambda lo, hi: (math.expm1(lo), math.expm1(hi)),
                     prepare=_bounded(8)),
    Op.SQRT: _unary(Op.SQRT, ("np.sqrt({})",), lambda lo, hi: (math.sqrt(lo), math.sqrt(hi)), prepare=_positive),
    Op.SQUARE: _unary(Op.SQUARE, ("np.square({})",), _square_interval, prepare=_bounded(100)),
    Op.RECIPROCAL: _unary(Op.RECIPROCAL, ("np.reciprocal({})",), lambda lo, hi: (1 / hi, 1 / lo), kinds="f",
                          prepare=_positive),
    Op.TANH: _unary(Op.TANH, ("np.tanh({})",), lambda lo, hi: (math.tanh(lo), math.tanh(hi))),
    Op.SIN: _unary(Op.SIN, ("np.sin({})",), lambda lo, hi: (-1.0, 1.0)),
    Op.COS: _unary(Op.COS, ("np.cos({})",), lambda lo, hi: (-1.0, 1.0)),
    Op.FLOOR: _unary(Op.FLOOR, ("np.floor({})",), lambda lo, hi: (math.floor(lo), math.floor(hi))),
    Op.CEIL: _unary(Op.CEIL, ("np.ceil({})",), lambda lo, hi: (math.ceil(lo), math.ceil(hi))),
    Op.LOGICAL_NOT: _unary(Op.LOGICAL_NOT, ("~{}", "np.logical_not({})"), lambda lo, hi: (0.0, 1.0), kinds="b"),
    Op.SIGMOID: _unary(Op.SIGMOID, ("F.sigmoid({})",), lambda lo, hi: (0.0, 1.0), kinds="f", prepare=_bounded(50)),
    Op.RELU: _unary(Op.RELU, ("F.relu({})",), lambda lo, hi: (max(lo, 0.0), max(hi, 0.0))),
    Op.GELU: _unary(Op.GELU, ("F.gelu({})",), lambda lo, hi: (-0.2, max(hi, 0.0)), kinds="f",
                    prepare=_bounded(50)),
    Op.COPY: _unary(Op.COPY, ("{}.copy()", "np.copy({})", "+{}"), lambda lo, hi: (lo, hi), kinds="iufb"),
}


def cast(p: Picker) -> Expr | None:
    v = p.array()
    if v is None:
        return None
    target = p.choice(("np.float32", "np.float64", "np.int32", "bool") + (("np.int32",) if v.dtype.kind == "f" else ()))
    text, lo, hi = p.bounded(v, 1e4) if target == "np.int32" else (v.name, v.lo, v.hi)
    spelling = p.choice(("{}.astype({})", "np.astype({}, {})", "F.astype({}, {})"))
    if target == "bool":
        lo, hi = 0.0, 1.0
    elif target == "np.int32":
        lo, hi = math.floor(lo), math.ceil(hi)
    return Expr(spelling.format(text, target), ("cast",), lo, hi)


# --- two operands

def _arith(op: Op, symbol: str, function: str, f, limit: float):
    def template(p: Picker) -> Expr | None:
        x = p.numeric()
        if x is None:
            return None
        xt, xlo, xhi = p.bounded(x, limit)
        yt, ylo, yhi = p.other_operand(x)
        if max(abs(ylo), abs(yhi)) > limit:
            yt, ylo, yhi = f"np.clip({yt}, {-limit!r}, {limit!r})", max(ylo, -limit), min(yhi, limit)
        text = f"({xt} {symbol} {yt})" if p.chance(0.7) else f"{function}({xt}, {yt})"
        return Expr(text, (op.value,), *corners(f, (xlo, xhi), (ylo, yhi)))
    return template


def _divide(op: Op, symbol: str, function: str, interval):
    def template(p: Picker) -> Expr | None:
        x = p.numeric()
        if x is None:
            return None
        xt, xlo, xhi = p.bounded(x, 1000.0)
        y = p.partner(x, lambda v: v.dtype.kind in "iuf")
        if y is not None:
            yt, ylo, yhi = p.positive(y)
        else:
            value = p.choice((2, 3, 0.5, 1.5)) if x.dtype.kind == "f" else p.choice((2, 3))
            yt, ylo, yhi = repr(value), value, value
        text = f"({xt} {symbol} {yt})" if p.chance(0.7) else f"{function}({xt}, {yt})"
        return Expr(text, (op.value,), *interval((xlo, xhi), (ylo, yhi)))
    return template


def _floor_interval(a, b):
    lo, hi = corners(lambda x, y: x / y, a, b)
    return math.floor(lo) - 1, math.floor(hi) + 1


def power(p: Picker) -> Expr | None:
    x = p.numeric()
    if x is None:
        return None
    if x.dtype.kind == "f":
        base, blo, bhi = p.positive(x, 10.0)
        exponent = p.choice((2, 3, 0.5, -1.0, 1.5))
    else:
        base, blo, bhi = p.bounded(x, 10)
        exponent = p.choice((0, 1, 2, 3))
    text = f"({base} ** {exponent!r})" if p.chance(0.7) else f"np.power({base}, {exponent!r})"
    if blo > 0:
        lo, hi = corners(lambda b, e: b ** e, (blo, bhi), (exponent, exponent))
    else:
        lo, hi = _int_power_interval(blo, bhi, exponent)
    return Expr(text, ("pow",), lo, hi)


def _int_power_interval(lo, hi, e):
    values = [lo ** e, hi ** e] + ([0.0] if lo <= 0 <= hi else [])
    return min(values), max(values)


def _extreme(op: Op, function: str, pick):
    def template(p: Picker) -> Expr | None:
        x = p.numeric()
        if x is None:
            return None
        yt, ylo, yhi = p.other_operand(x)
        return Expr(f"{function}({x.name}, {yt})", (op.value,), pick(x.lo, ylo), pick(x.hi, yhi))
    return template


def _compare(op: Op, symbol: str, function: str):
    def template(p: Picker) -> Expr | None:
        x = p.array()
        if x is None:
            return None
        yt, _, _ = p.other_operand(x, numeric=x.dtype.kind != "b")
        text = f"({x.name} {symbol} {yt})" if p.chance(0.7) else f"{function}({x.name}, {yt})"
        return Expr(text, (op.value,), 0.0, 1.0)
    return template


def _logical(op: Op, symbol: str, function: str):
    def template(p: Picker) -> Expr | None:
        x = p.boolean()
        if x is None:
            return None
        y = p.partner(x)
        if y is None:
            other = "True"
        else:
            other = y.name if y.dtype.kind == "b" else f"({y.name} > 0)"
        text = f"({x.name} {symbol} {other})" if p.chance(0.6) else f"{function}({x.name}, {other})"
        return Expr(text, (op.value,), 0.0, 1.0)
    return template


def where(p: Picker) -> Expr | None:
    x = p.array(lambda v: v.dtype.kind != "b")
    if x is None:
        return None
    cond = p.boolean()
    cond_text = cond.name if cond is not None and broadcasts_to(cond.shape, x.shape) else f"({x.name} > 0)"
    yt, ylo, yhi = p.other_operand(x)
    return Expr(f"np.where({cond_text}, {x.name}, {yt})", ("where",), *spread((x.lo, x.hi), (ylo, yhi)))


def clip(p: Picker) -> Expr | None:
    x = p.numeric()
    if x is None:
        return None
    integer = x.dtype.kind in "iu"
    low, high = (-2, 2) if integer else (-1.5, 0.75)
    form = p.choice(("both", "low", "high", "method"))
    if form == "low":
        return Expr(f"np.clip({x.name}, {low!r}, None)", ("clip",), max(x.lo, low), max(x.hi, low))
    if form == "high":
        return Expr(f"np.clip({x.name}, None, {high!r})", ("clip",), min(x.lo, high), min(x.hi, high))
    text = f"{x.name}.clip({low!r}, {high!r})" if form == "method" else f"np.clip({x.name}, {low!r}, {high!r})"
    return Expr(text, ("clip",), min(max(x.lo, low), high), max(min(x.hi, high), low))


BINARY = {
    Op.ADD: _arith(Op.ADD, "+", "np.add", lambda a, b: a + b, 1000.0),
    Op.SUB: _arith(Op.SUB, "-", "np.subtract", lambda a, b: a - b, 1000.0),
    Op.MUL: _arith(Op.MUL, "*", "np.multiply", lambda a, b: a * b, 50.0),
    Op.DIV: _divide(Op.DIV, "/", "np.divide", lambda a, b: corners(lambda x, y: x / y, a, b)),
    Op.FLOORDIV: _divide(Op.FLOORDIV, "//", "np.floor_divide", _floor_interval),
    Op.MOD: _divide(Op.MOD, "%", "np.remainder", lambda a, b: (0.0, b[1])),
    Op.POW: power,
    Op.MAXIMUM: _extreme(Op.MAXIMUM, "np.maximum", max),
    Op.MINIMUM: _extreme(Op.MINIMUM, "np.minimum", min),
    Op.EQ: _compare(Op.EQ, "==", "np.equal"),
    Op.NE: _compare(Op.NE, "!=", "np.not_equal"),
    Op.LT: _compare(Op.LT, "<", "np.less"),
    Op.LE: _compare(Op.LE, "<=", "np.less_equal"),
    Op.GT: _compare(Op.GT, ">", "np.greater"),
    Op.GE: _compare(Op.GE, ">=", "np.greater_equal"),
    Op.LOGICAL_AND: _logical(Op.LOGICAL_AND, "&", "np.logical_and"),
    Op.LOGICAL_OR: _logical(Op.LOGICAL_OR, "|", "np.logical_or"),
    Op.LOGICAL_XOR: _logical(Op.LOGICAL_XOR, "^", "np.logical_xor"),
    Op.WHERE: where,
    Op.CLIP: clip,
    Op.CAST: cast,
}


# --- reductions

def axis_choice(p: Picker, shape: tuple, allow_tuple: bool) -> tuple[str, int]:
    """An ``axis=`` argument for ``shape`` and how many elements each result reduces."""
    ndim = len(shape)
    if ndim == 0 or p.chance(0.25):
        return "None", math.prod(shape)
    if allow_tuple and ndim >= 2 and p.chance(0.3):
        axes = sorted(p.rng.sample(range(ndim), 2))
        return f"({axes[0]}, {axes[1] - ndim})", shape[axes[0]] * shape[axes[1]]
    axis = p.rng.randrange(ndim)
    return repr(axis if p.chance(0.5) else axis - ndim), shape[axis]


def _reduce(op: Op, kinds: str, interval, needs_elements: bool, allow_tuple: bool = True, ddof: bool = False):
    """``interval(lo, hi, n) -> (lo, hi)`` for a reduction of ``n`` elements each."""
    def template(p: Picker) -> Expr | None:
        v = p.array(lambda v: v.dtype.kind in kinds)
        if v is None:
            return None
        axis, n = axis_choice(p, v.shape, allow_tuple)
        if needs_elements and (n == 0 or v.size == 0):
            return None
        text, lo, hi = (p.bounded(v, 1.0) if op == Op.PROD else (v.name, v.lo, v.hi))
        extra = ""
        if ddof and n > 1 and p.chance(0.4):
            extra = ", ddof=1"
        if p.chance(0.3):
            extra += ", keepdims=True"
        name = op.value
        spelling = p.choice(("np.{0}({1}, axis={2}{3})", "{1}.{0}(axis={2}{3})"))
        if axis == "None" and p.chance(0.5):
            spelling = "np.{0}({1}{3})"
        return Expr(spelling.format(name, text, axis, extra), (name,), *interval(lo, hi, n))
    return template


REDUCE = {
    Op.SUM: _reduce(Op.SUM, "iufb", lambda lo, hi, n: (min(0.0, n * lo), max(0.0, n * hi)), False),
    Op.MEAN: _reduce(Op.MEAN, "iuf", lambda lo, hi, n: (lo, hi), True),
    Op.MAX: _reduce(Op.MAX, "iuf", lambda lo, hi, n: (lo, hi), True),
    Op.MIN: _reduce(Op.MIN, "iuf", lambda lo, hi, n: (lo, hi), True),
    Op.PROD: _reduce(Op.PROD, "iuf", lambda lo, hi, n: (-1.0, 1.0), False),
    Op.VAR: _reduce(Op.VAR, "uf", lambda lo, hi, n: (0.0, (hi - lo) ** 2 * 2), True, ddof=True),
    Op.STD: _reduce(Op.STD, "uf", lambda lo, hi, n: (0.0, (hi - lo) * 2), True, ddof=True),
    Op.ANY: _reduce(Op.ANY, "iufb", lambda lo, hi, n: (0.0, 1.0), False),
    Op.ALL: _reduce(Op.ALL, "iufb", lambda lo, hi, n: (0.0, 1.0), False),
    Op.ARGMAX: _reduce(Op.ARGMAX, "iuf", lambda lo, hi, n: (0.0, n - 1.0), True, allow_tuple=False),
    Op.ARGMIN: _reduce(Op.ARGMIN, "iuf", lambda lo, hi, n: (0.0, n - 1.0), True, allow_tuple=False),
}


# --- constructors shaped like an operand

def _like(op: Op, spellings: tuple[str, ...], value):
    def template(p: Picker) -> Expr | None:
        v = p.array()
        if v is None:
            return None
        dtype = p.choice(("", ", dtype=np.float32", ", dtype=np.int32", ""))
        text = p.choice(spellings).format(v.name, dtype)
        return Expr(text, (op.value,), value, value)
    return template


def _full(p: Picker) -> Expr | None:
    """``F.full(shape, x.max())``: a fill known only when the graph runs (with a number, NumPy runs now)."""
    v = p.floating(lambda v: v.shape and 0 not in v.shape)
    if v is None:
        return None
    shape = p.choice(("{}.shape", "(2,) + {}.shape")).format(v.name)
    return Expr(f"F.full({shape}, {v.name}.max())", ("full",), v.lo, v.hi)


SOURCES = {
    Op.ZEROS_LIKE: _like(Op.ZEROS_LIKE, ("np.zeros_like({}{})",), 0.0),
    Op.ONES_LIKE: _like(Op.ONES_LIKE, ("np.ones_like({}{})",), 1.0),
    Op.FULL_LIKE: _like(Op.FULL_LIKE, ("np.full_like({}, 2.0{})",), 2.0),
    Op.FULL: _full,
}
