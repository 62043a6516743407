"""Linear algebra: ``matmul`` (1-D, 2-D, batched with broadcast batch dims), ``einsum``, ``outer``, ``dot``,
``vdot``, ``inner``, ``tensordot``."""

from __future__ import annotations

import numpy as np

from ..errors import OpError
from ..ir.types import TensorType
from .base import Op, OpDef, broadcast, probe_dtype, register, same_size, shape_of


def matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's matmul shape rule: 1-D operands get a dimension added then removed; batch dims broadcast."""
    if not a or not b:
        raise OpError("matmul: operands must have at least one dimension (use mul for scalars)")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if not a2[-1] == b2[-2]:  # (the message is made only when needed)
        same_size("matmul", a2[-1], b2[-2],
                  f"matmul: inner dimensions differ: {_shape_text(a)} @ {_shape_text(b)} ({a2[-1]} != {b2[-2]}); "
                  f"the last dimension of the left operand must equal the second-to-last of the right one")
    try:
        batch = broadcast("matmul", a2[:-2], b2[:-2])
    except ValueError:
        raise OpError(f"matmul: batch dimensions {a2[:-2]} and {b2[:-2]} do not broadcast") from None
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def _shape_text(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _infer_matmul(types, attrs):
    a, b = types
    return (TensorType(probe_dtype(np.matmul, types, ()), matmul_shape(a.shape, b.shape)),)


def _bind_pair(a, b):
    return [a, b], {}


register(OpDef(Op.MATMUL, "linalg", _bind_pair, _infer_matmul, np.matmul, "np.matmul", doc="a @ b"))


def _einsum_parse(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The output shape of ``np.einsum(subscripts, *operands)`` from operand shapes, checking sizes agree."""
    spec = subscripts.replace(" ", "")
    lhs, arrow, rhs = spec.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise OpError(f"einsum: {subscripts!r} names {len(terms)} operands but {len(shapes)} were given")
    sizes: dict[str, int] = {}
    ellipsis_shapes = []
    counts: dict[str, int] = {}
    for term, shape in zip(terms, shapes):
        letters = term.replace("...", "")
        if not letters.isalpha() and letters:
            raise OpError(f"einsum: subscripts must be letters, got {term!r}")
        n_ell = len(shape) - len(letters)
        if ("..." in term and n_ell < 0) or ("..." not in term and n_ell != 0):
            raise OpError(f"einsum: term {term!r} does not match an operand of shape {shape}")
        before, _, after = term.partition("...")
        dims = list(shape)
        ell = tuple(dims[len(before):len(before) + n_ell]) if "..." in term else ()
        ellipsis_shapes.append(ell)
        for ch, d in zip(before + after, dims[:len(before)] + dims[len(before) + n_ell:]):
            counts[ch] = counts.get(ch, 0) + 1
            try:
                sizes[ch] = broadcast("einsum", (sizes.get(ch, d),), (d,))[0]
            except ValueError:
                raise OpError(f"einsum: index {ch!r} has size {sizes[ch]} in one operand and {d} in "
                              f"another") from None
    try:
        ell_shape = broadcast("einsum", *ellipsis_shapes) if ellipsis_shapes else ()
    except ValueError:
        raise OpError(f"einsum: the '...' dimensions {ellipsis_shapes} do not broadcast") from None
    if not arrow:
        out_letters = "".join(sorted(ch for ch, n in counts.items() if n == 1))
        return tuple(ell_shape) + tuple(sizes[ch] for ch in out_letters)
    before, _, after = rhs.partition("...")
    for ch in before + after:
        if ch not in sizes:
            raise OpError(f"einsum: output index {ch!r} does not appear in the inputs of {subscripts!r}")
    mid = tuple(ell_shape) if "..." in rhs else ()
    return tuple(sizes[ch] for ch in before) + mid + tuple(sizes[ch] for ch in after)


def einsum_letters(subscripts: str) -> tuple[str, str]:
    """The input term and the output term of a one-operand ``np.einsum``, the implicit output written out
    (the letters that appear once, in alphabetical order)."""
    lhs, arrow, rhs = subscripts.replace(" ", "").partition("->")
    if not arrow:
        ell = "..." if "..." in lhs else ""
        rhs = ell + "".join(sorted(ch for ch in set(lhs.replace("...", "")) if lhs.count(ch) == 1))
    return lhs, rhs


def einsum_is_view(subscripts: str) -> bool:
    """Whether NumPy's one-operand ``np.einsum(subscripts, x)`` returns a view of ``x``: no index is summed (a
    permutation, or a diagonal when a letter repeats: ``'ij->ji'``, ``'ii->i'``, ``'...->...'``)."""
    lhs, rhs = einsum_letters(subscripts)
    if "," in lhs or ("..." in lhs) != ("..." in rhs):
        return False
    return set(lhs.replace("...", "")) == set(rhs.replace("...", ""))


def _bind_einsum(subscripts, *operands):
    if not isinstance(subscripts, str):
        raise OpError("einsum: give the subscripts as a string first, as in einsum('ij,jk->ik', a, b)")
    return list(operands), {"subscripts": subscripts}


def _einsum(*operands, subscripts):
    return np.einsum(subscripts, *operands)


def _infer_einsum(types, attrs):
    shape = _einsum_parse(attrs["subscripts"], [t.shape for t in types])
    # A size-1 probe is valid for any subscripts: every index then has size 1.
    dtype = probe_dtype(_einsum, types, (attrs["subscripts"],), subscripts=attrs["subscripts"])
    return (TensorType(dtype, shape),)


register(OpDef(Op.EINSUM, "linalg", _bind_einsum, _infer_einsum, _einsum, "np.einsum",
               doc="Einstein summation over the subscripts"))


def _infer_outer(types, attrs):
    a, b = types
    return (TensorType(probe_dtype(np.outer, types, ()), (a.size, b.size)),)


register(OpDef(Op.OUTER, "linalg", _bind_pair, _infer_outer, np.outer, "np.outer",
               doc="outer product of the flattened operands"))



# --- dot, vdot, inner, tensordot: NumPy's own functions, with their shape rules written out for symbolic sizes

def _contract(op: str, a, b, message: str) -> None:
    if not a == b:
        same_size(op, a, b, message)


def dot_shape(a: tuple, b: tuple) -> tuple:
    """np.dot: a scalar operand multiplies; else the last axis of a with b's second-to-last (its only for 1-D)."""
    if not a or not b:
        return tuple(broadcast("dot", a, b))
    k = -2 if len(b) >= 2 else -1
    _contract("dot", a[-1], b[k], f"dot: shapes {_shape_text(a)} and {_shape_text(b)} not aligned: "
                                  f"{a[-1]} (dim {len(a) - 1}) != {b[k]} (dim {len(b) + k})")
    return a[:-1] + (b[:-2] + b[-1:] if len(b) >= 2 else ())


def _infer_dot(types, attrs):
    return (TensorType(probe_dtype(np.dot, types, ()), dot_shape(types[0].shape, types[1].shape)),)


def _infer_vdot(types, attrs):
    a, b = types
    _contract("vdot", a.size, b.size, f"vdot: vectors have different lengths ({a.size} and {b.size})")
    return (TensorType(probe_dtype(np.vdot, types, ()), ()),)


def _infer_inner(types, attrs):
    a, b = types
    if not a.shape or not b.shape:
        return (TensorType(probe_dtype(np.inner, types, ()), tuple(broadcast("inner", a.shape, b.shape))),)
    _contract("inner", a.shape[-1], b.shape[-1], f"inner: shapes {_shape_text(a.shape)} and "
                                                 f"{_shape_text(b.shape)} not aligned on their last axes")
    return (TensorType(probe_dtype(np.inner, types, ()), a.shape[:-1] + b.shape[:-1]),)


register(OpDef(Op.DOT, "linalg", _bind_pair, _infer_dot, np.dot, "np.dot", doc="np.dot(a, b)"))
register(OpDef(Op.VDOT, "linalg", _bind_pair, _infer_vdot, np.vdot, "np.vdot",
               doc="dot product of the flattened operands, the first conjugated"))
register(OpDef(Op.INNER, "linalg", _bind_pair, _infer_inner, np.inner, "np.inner",
               doc="sum over the last axes of a and b"))


def _bind_tensordot(a, b, axes=2):
    na, nb = len(shape_of(a)), len(shape_of(b))
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(na, nb):
            raise OpError(f"tensordot: axes={n} does not fit operands of {na} and {nb} dimensions")
        pair = (tuple(range(na - n, na)), tuple(range(n)))
    else:
        try:
            left, right = axes
        except (TypeError, ValueError):
            raise OpError(f"tensordot: axes must be an int or a pair of axis lists, got {axes!r}") from None
        left = (left,) if isinstance(left, (int, np.integer)) else tuple(left)
        right = (right,) if isinstance(right, (int, np.integer)) else tuple(right)
        if len(left) != len(right):
            raise OpError("tensordot: shape-mismatch for sum (the two axis lists differ in length)")
        pair = (tuple(int(x) % na for x in left), tuple(int(x) % nb for x in right))
    return [a, b], {"axes": pair}


def _tensordot(a, b, axes):
    return np.tensordot(a, b, axes=(list(axes[0]), list(axes[1])))


def _outer_product(a, b):
    return np.tensordot(a, b, 0)


def _infer_tensordot(types, attrs):
    a, b = types
    left, right = attrs["axes"]
    if any(not 0 <= x < a.ndim for x in left) or any(not 0 <= x < b.ndim for x in right):
        raise OpError(f"tensordot: axes {attrs['axes']} out of bounds for {a} and {b}")
    for i, j in zip(left, right):
        _contract("tensordot", a.shape[i], b.shape[j], f"tensordot: shape-mismatch for sum: axis {i} of {a} and "
                                                       f"axis {j} of {b}")
    shape = tuple(d for i, d in enumerate(a.shape) if i not in left) + \
        tuple(d for j, d in enumerate(b.shape) if j not in right)
    probe = probe_dtype(_outer_product, types, ())
    return (TensorType(probe, shape),)


register(OpDef(Op.TENSORDOT, "linalg", _bind_tensordot, _infer_tensordot, _tensordot, "np.tensordot",
               doc="sum of products over the given axes of a and b"))
