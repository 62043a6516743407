"""The op menu, part 2: shape and data movement, indexing and in-place updates, linear algebra, nn composites.

Shapes are worked out from the operands' shapes where a template needs them (a reshape target, a matching
matmul partner); anything the template gets wrong is caught when NumPy runs the text (generator.py) and the
template is simply tried again.
"""

from __future__ import annotations

import math

import numpy as np

from ..ops import Op
from .picker import Block, Expr, Picker, magnitude, spread


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0] if n else [0]


def reshape(p: Picker) -> Expr | None:
    v = p.array()
    if v is None:
        return None
    if p.chance(0.3) or v.size == 0:
        text = p.choice(("{}.reshape(-1)", "{}.ravel()", "np.ravel({})", "{}.flatten()"))
        return Expr(text.format(v.name), ("reshape",), v.lo, v.hi)
    first = p.choice(_divisors(v.size))
    shape = (first, -1) if p.chance(0.5) else (first, v.size // first, 1)
    text = f"{v.name}.reshape{shape}" if p.chance(0.6) else f"np.reshape({v.name}, {shape})"
    return Expr(text, ("reshape",), v.lo, v.hi)


def transpose(p: Picker) -> Expr | None:
    v = p.array(lambda v: v.ndim >= 2)
    if v is None:
        return None
    perm = list(range(v.ndim))
    p.rng.shuffle(perm)
    text = p.choice((f"{v.name}.T", f"np.transpose({v.name}, {tuple(perm)})", f"{v.name}.transpose{tuple(perm)}",
                     f"np.swapaxes({v.name}, 0, -1)", f"np.moveaxis({v.name}, 0, -1)"))
    return Expr(text, ("transpose",), v.lo, v.hi)


def broadcast_to(p: Picker) -> Expr | None:
    v = p.array()
    if v is None:
        return None
    shape = (p.choice((1, 2, 3)),) + v.shape
    return Expr(f"np.broadcast_to({v.name}, {shape})", ("broadcast_to",), v.lo, v.hi)


def expand_dims(p: Picker) -> Expr | None:
    v = p.array()
    if v is None:
        return None
    axis = p.rng.randrange(-v.ndim - 1, v.ndim + 1)
    return Expr(f"np.expand_dims({v.name}, {axis})", ("expand_dims",), v.lo, v.hi)


def squeeze(p: Picker) -> Expr | None:
    v = p.array(lambda v: 1 in v.shape)
    if v is None:
        return None
    axis = p.choice([i for i, d in enumerate(v.shape) if d == 1])
    text = p.choice((f"np.squeeze({v.name}, axis={axis})", f"{v.name}.squeeze()", f"{v.name}.squeeze({axis})"))
    return Expr(text, ("squeeze",), v.lo, v.hi)


def concatenate(p: Picker) -> Expr | None:
    x = p.array(lambda v: v.ndim >= 1)
    if x is None:
        return None
    axis = p.rng.randrange(x.ndim)
    y = p.array(lambda v: v.ndim == x.ndim and all(a == b for i, (a, b) in enumerate(zip(v.shape, x.shape))
                                                   if i != axis)) or x
    spelling = p.choice(("np.concatenate([{0}, {1}], axis={2})", "np.concatenate(({0}, {1}), axis={3})"))
    if axis == 0 and x.ndim >= 2 and p.chance(0.3):
        spelling = "np.vstack([{0}, {1}])"
    text = spelling.format(x.name, y.name, axis, axis - x.ndim)
    return Expr(text, ("concatenate",), *spread((x.lo, x.hi), (y.lo, y.hi)))


def stack(p: Picker) -> Expr | None:
    x = p.array()
    if x is None:
        return None
    y = p.array(lambda v: v.shape == x.shape) or x
    axis = p.rng.randrange(-x.ndim - 1, x.ndim + 1)
    return Expr(f"np.stack([{x.name}, {y.name}], axis={axis})", ("stack",), *spread((x.lo, x.hi), (y.lo, y.hi)))


def split(p: Picker) -> Block | None:
    v = p.array(lambda v: v.ndim >= 1)
    if v is None:
        return None
    axis = p.rng.randrange(v.ndim)
    size = v.shape[axis]
    if size % 2 == 0 and p.chance(0.5):
        call, n = f"np.split({v.name}, 2, axis={axis})", 2
    elif p.chance(0.5):
        call, n = f"np.array_split({v.name}, 3, axis={axis - v.ndim})", 3
    else:
        call, n = f"np.split({v.name}, [1], axis={axis})", 2
    names = ", ".join(f"{{{i}}}" for i in range(n))
    return Block([f"{names} = {call}"], n, ("split",), v.lo, v.hi)


def repeat(p: Picker) -> Expr | None:
    v = p.array()
    if v is None:
        return None
    if v.ndim and p.chance(0.6):
        axis = p.rng.randrange(v.ndim)
        times = p.choice((2, 3, 0)) if p.chance(0.7) else [p.choice((0, 1, 2)) for _ in range(v.shape[axis])]
        text = f"np.repeat({v.name}, {times}, axis={axis})"
    else:
        text = p.choice((f"np.repeat({v.name}, 2)", f"{v.name}.repeat(2)"))
    return Expr(text, ("repeat",), v.lo, v.hi)


def tile(p: Picker) -> Expr | None:
    v = p.array()
    if v is None:
        return None
    reps = tuple(p.choice((1, 2)) for _ in range(p.choice((1, 2))))
    return Expr(f"np.tile({v.name}, {reps})", ("tile",), v.lo, v.hi)


def pad(p: Picker) -> Expr | None:
    v = p.array(lambda v: v.dtype.kind in "iuf")
    if v is None:
        return None
    value = p.choice((0, 1, -2)) if v.dtype.kind in "iu" else p.choice((0.0, 1.5, -0.5))
    if v.ndim and p.chance(0.5):
        widths = tuple((p.choice((0, 1)), p.choice((0, 2))) for _ in range(v.ndim))
        text = f"np.pad({v.name}, {widths}, constant_values={value!r})"
    else:
        text = f"np.pad({v.name}, 1)"
        value = 0
    return Expr(text, ("pad",), min(v.lo, value), max(v.hi, value))


def _triangle(op: Op):
    def template(p: Picker) -> Expr | None:
        v = p.array(lambda v: v.ndim >= 2 and v.dtype.kind in "iufb")
        if v is None:
            return None
        k = p.choice((0, 1, -1))
        return Expr(f"np.{op.value}({v.name}, {k})", (op.value,), min(v.lo, 0.0), max(v.hi, 0.0))
    return template


# --- indexing

def index(p: Picker) -> Expr | None:
    v = p.array(lambda v: v.ndim >= 1 and v.shape[0] >= 1)
    if v is None:
        return None
    keys = ["[0]", "[-1]", "[1:]", "[::-1]", "[::2]", "[None]", "[...]", "[[0, -1]]",
            "[" + repr([bool(i % 2 == 0) for i in range(v.shape[0])]) + "]"]
    if v.ndim >= 2 and v.shape[1] >= 1:
        keys += ["[:, 0]", "[..., -1]", "[:, None]", "[1:, ::-1]", "[:, [0]]"]
    ids = p.array(lambda u: u.dtype.kind in "iu")
    if ids is not None and p.chance(0.4):
        n = v.shape[0]
        text = f"{v.name}[np.clip({ids.name}, {-n}, {n - 1})]"
        return Expr(text, ("index", "clip"), v.lo, v.hi)
    return Expr(v.name + p.choice(keys), ("index",), v.lo, v.hi)


def index_update(p: Picker) -> Block | None:
    v = p.array(lambda v: v.ndim >= 1 and v.shape[0] >= 2 and v.dtype.kind in "iuf")
    if v is None:
        return None
    key = p.choice(["[0]", "[1:]", "[::2]", "[-1]", "[[0, 1]]"] + (["[:, -1]", "[..., 0]"] if v.ndim >= 2 else []))
    value = p.choice((2, -1)) if v.dtype.kind in "iu" else p.choice((2.0, -0.5, 0.25))
    form = p.choice(("set", "add", "mul", "view"))
    lines = [f"{{0}} = {v.name}.copy()"]
    if form == "set":
        lines.append(f"{{0}}{key} = {value!r}")
        lo, hi = min(v.lo, value), max(v.hi, value)
    elif form == "add":
        lines.append(f"{{0}}{key} += {value!r}")
        lo, hi = min(v.lo, v.lo + value), max(v.hi, v.hi + value)
    else:  # "mul" writes into the copy; "view" writes through a view of it, which changes the copy too
        lines += [f"{{0}}{key} *= {value!r}"] if form == "mul" else [f"{{1}} = {{0}}{key}", f"{{1}} *= {value!r}"]
        lo, hi = spread((v.lo, v.hi), (v.lo * value, v.lo * value), (v.hi * value, v.hi * value))
    return Block(lines, 2 if form == "view" else 1, ("index_update",), lo, hi)


# --- linear algebra

def _matmul_ok(a: tuple, b: tuple) -> bool:
    try:
        np.matmul(np.zeros(a), np.zeros(b))
        return True
    except ValueError:
        return False


def _weight(k: int, m: int) -> str:
    return f"np.linspace(-1.0, 1.0, {k * m}).reshape({k}, {m})"


def matmul(p: Picker) -> Expr | None:
    x = p.numeric(lambda v: v.ndim >= 1)
    if x is None:
        return None
    xt, xlo, xhi = p.bounded(x, 10.0)
    k = x.shape[-1]
    y = p.numeric(lambda v: v.ndim >= 1 and _matmul_ok(x.shape, v.shape))
    if y is not None:
        yt, ylo, yhi = p.bounded(y, 10.0)
    else:
        yt, ylo, yhi = _weight(k, p.choice((1, 2, 3))), -1.0, 1.0
    bound = max(k, 1) * magnitude(xlo, xhi) * magnitude(ylo, yhi)
    text = f"({xt} @ {yt})" if p.chance(0.7) else f"np.matmul({xt}, {yt})"
    return Expr(text, ("matmul",), -bound, bound)


def einsum(p: Picker) -> Expr | None:
    x = p.numeric(lambda v: v.ndim >= 1)
    if x is None:
        return None
    xt, xlo, xhi = p.bounded(x, 10.0)
    m = magnitude(xlo, xhi)
    options = [("'...i->...'", xt, m * max(x.shape[-1], 1))]
    if x.ndim == 2:
        options += [("'ij->ji'", xt, m), ("'ij,ij->i'", f"{xt}, {xt}", m * m * max(x.shape[1], 1)),
                    ("'ij,jk->ik'", f"{xt}, {_weight(x.shape[1], 2)}", m * max(x.shape[1], 1))]
        if x.shape[0] == x.shape[1]:
            options.append(("'ii->i'", xt, m))
    if x.ndim == 1:
        options.append(("'i,j->ij'", f"{xt}, {xt}", m * m))
    subscripts, operands, bound = p.choice(options)
    return Expr(f"np.einsum({subscripts}, {operands})", ("einsum",), -bound, bound)


def outer(p: Picker) -> Expr | None:
    x = p.numeric(lambda v: v.size <= 8)
    if x is None:
        return None
    y = p.numeric(lambda v: v.size <= 8) or x
    xt, xlo, xhi = p.bounded(x, 30.0)
    yt, ylo, yhi = p.bounded(y, 30.0)
    bound = magnitude(xlo, xhi) * magnitude(ylo, yhi)
    return Expr(f"np.outer({xt}, {yt})", ("outer",), -bound, bound)


# --- nn composites

def _softmax(op: Op):
    def template(p: Picker) -> Expr | None:
        v = p.array(lambda v: v.ndim >= 1 and v.dtype.kind in "iuf")
        if v is None:
            return None
        axis = p.rng.randrange(-v.ndim, v.ndim)
        n = v.shape[axis]
        if n == 0:
            return None
        text = f"F.{op.value}({v.name}, axis={axis})"
        if op == Op.SOFTMAX:
            return Expr(text, (op.value,), 0.0, 1.0)
        return Expr(text, (op.value,), -(v.hi - v.lo) - math.log(n) - 1.0, 0.0)
    return template


def layer_norm(p: Picker) -> Expr | None:
    v = p.floating(lambda v: v.ndim >= 1 and v.shape[-1] >= 1)
    if v is None:
        return None
    n = v.shape[-1]
    bound = math.sqrt(n)
    form = p.choice(("plain", "weight", "affine"))
    if form == "plain":
        return Expr(f"F.layer_norm({v.name})", ("layer_norm",), -bound, bound)
    weight = f"np.linspace(0.5, 1.5, {n})"
    args = f"{v.name}, {weight}" + (f", np.linspace(-1.0, 1.0, {n})" if form == "affine" else "")
    bound = bound * 1.5 + (1.0 if form == "affine" else 0.0)
    return Expr(f"F.layer_norm({args}, eps={p.choice((1e-5, 1e-3))!r})", ("layer_norm",), -bound, bound)


def linear(p: Picker) -> Expr | None:
    x = p.numeric(lambda v: v.ndim >= 1)
    if x is None:
        return None
    xt, xlo, xhi = p.bounded(x, 10.0)
    k, m = x.shape[-1], p.choice((1, 2, 4))
    weight = f"np.linspace(-1.0, 1.0, {m * k}).reshape({m}, {k})"
    bias = p.chance(0.5)
    bound = max(k, 1) * magnitude(xlo, xhi) + (1.0 if bias else 0.0)
    args = f"{xt}, {weight}" + (f", np.linspace(0.0, 1.0, {m})" if bias else "")
    return Expr(f"F.linear({args})", ("linear",), -bound, bound)


STRUCTURE = {
    Op.RESHAPE: reshape, Op.TRANSPOSE: transpose, Op.BROADCAST_TO: broadcast_to, Op.EXPAND_DIMS: expand_dims,
    Op.SQUEEZE: squeeze, Op.CONCATENATE: concatenate, Op.STACK: stack, Op.SPLIT: split, Op.REPEAT: repeat,
    Op.TILE: tile, Op.PAD: pad, Op.TRIU: _triangle(Op.TRIU), Op.TRIL: _triangle(Op.TRIL),
    Op.INDEX: index, Op.INDEX_UPDATE: index_update,
    Op.MATMUL: matmul, Op.EINSUM: einsum, Op.OUTER: outer,
    Op.SOFTMAX: _softmax(Op.SOFTMAX), Op.LOG_SOFTMAX: _softmax(Op.LOG_SOFTMAX), Op.LAYER_NORM: layer_norm,
    Op.LINEAR: linear,
}
