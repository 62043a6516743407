"""Structured control flow: ``cond``, ``while_loop``, ``fori_loop`` and ``scan``, with jax.lax semantics.

Each of these ops holds *regions*: nested graphs kept in its attributes (``then``/``else``, ``cond``/``body``,
``body``), as JAX keeps jaxprs in the params of ``cond`` and ``while``. A region is isolated: its ``input`` nodes
receive values from the node's operands, in order, and it reads nothing else. So a region is typed like a
function, and the type rules below compare those signatures:

    cond(pred, *operands)       {then} {else}   both take the operands, both return the same types
    while_loop(*carry)          {cond} {body}   cond: carry -> bool[];  body: carry -> carry
    fori_loop(lower, upper, *carry)   {body}    body: (i, *carry) -> carry, for i in range(lower, upper)
    scan(*carry, *xs)           {body}          body: (*carry, *x[t]) -> (*carry, *y[t]);  ys stacked

The implementations take each region as a function (``RegionFn``): the interpreters pass one that runs the
region's graph, and eager ``F.cond``/``F.while_loop``/... pass the user's own functions, so eager code and graphs
share one definition of what each op does.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import OpError
from ..ir.types import TensorType
from .base import Op, OpDef, register, same_size, static_int


class RegionFn:
    """A region as an op's implementation sees it: ``fn(*values)`` returns the region's outputs as a sequence.

    ``result_types(*values)`` gives the types of the outputs for inputs like ``values`` (only their dtypes and
    shapes are read) without running the region: ``scan`` over a length of 0 needs them, since its body never
    runs and its stacked outputs still have a dtype and a shape."""

    __slots__ = ("fn", "result_types")

    def __init__(self, fn: Callable, result_types: Callable[..., tuple[TensorType, ...]] | None = None):
        self.fn = fn
        self.result_types = result_types

    def __call__(self, *values):
        return self.fn(*values)


# --- implementations: the semantics, shared by eager F.* and every interpreter


def _cond(pred, *operands, **branches):
    branch = branches["then"] if pred else branches["else"]
    return tuple(branch(*operands))


def _while_loop(*carry, cond, body):
    while cond(*carry)[0]:
        carry = tuple(body(*carry))
    return tuple(carry)


def _fori_loop(lower, upper, *carry, body):
    i = lower  # i keeps the type of lower: a Python int for Python bounds, as `for i in range(n)` gives
    while i < upper:
        carry = tuple(body(i, *carry))
        i = i + 1
    return tuple(carry)


def _scan(*operands, body, n_carry, length):
    carry, xs = tuple(operands[:n_carry]), operands[n_carry:]
    ys = []
    for t in range(length):
        out = body(*carry, *(x[t] for x in xs))
        carry = tuple(out[:n_carry])
        ys.append(out[n_carry:])
    if length == 0:  # the body never runs: its output types come from the types of what it would be given
        like = [_shaped_like(np.shape(v), np.asarray(v).dtype) for v in carry]
        like += [_shaped_like(np.shape(x)[1:], np.asarray(x).dtype) for x in xs]
        stacked = [np.zeros((0,) + y.shape, y.dtype) for y in body.result_types(*like)[n_carry:]]
    else:
        stacked = [np.stack([y[k] for y in ys]) for k in range(len(ys[0]))]
    return carry + tuple(stacked)


def _shaped_like(shape, dtype) -> np.ndarray:
    """A read-only array of any shape that takes no memory: only its shape and dtype are read."""
    return np.broadcast_to(np.zeros((), dtype), shape)


# --- type rules


def _types(types) -> str:
    return "(" + ", ".join(map(str, types)) + ")"


def region_signature(op: Op, key: str, region) -> tuple[tuple[TensorType, ...], tuple[TensorType, ...]]:
    """The input and output types of a region graph."""
    try:
        ins = tuple(n.attrs["type"] for n in region.input_nodes)
        outs = tuple(v.type for v in region.outputs)
    except AttributeError:
        raise OpError(f"{op}: attribute {key} must be a region (a Graph), got {type(region).__name__}") from None
    return ins, outs


def _expect_inputs(op: Op, key: str, ins, expected, what: str) -> None:
    if ins != tuple(expected):
        raise OpError(f"{op}: region {key} takes {_types(ins)} but receives {what} {_types(expected)}; a region's "
                      f"inputs receive the node's operands, in order, with exactly their types")


def _expect_carry(op: Op, key: str, outs, carry) -> None:
    outs, carry = tuple(outs), tuple(carry)
    if outs == carry:
        return
    if len(outs) != len(carry):
        raise OpError(f"{op}: region {key} returns {len(outs)} values {_types(outs)} for a carry of {len(carry)} "
                      f"{_types(carry)}; the body returns the whole carry, in order")
    i = next(i for i, (a, b) in enumerate(zip(outs, carry)) if a != b)
    raise OpError(f"{op}: carry {i} enters region {key} as {carry[i]} and comes back as {outs[i]}; a loop "
                  f"variable keeps its type from one iteration to the next (cast it, or start it with the type "
                  f"the loop gives it)")


def _check_scalar(op: Op, what: str, t: TensorType, kinds: str, wanted: str) -> None:
    if t.shape != () or t.dtype.kind not in kinds:
        raise OpError(f"{op}: {what} must be {wanted}, got {t}")


def _infer_cond(types, attrs):
    _check_scalar(Op.COND, "the predicate", types[0], "b", "a bool scalar (bool[]); compare (x > 0) or reduce "
                                                            "(x.any()) first")
    outs = {}
    for key in ("then", "else"):
        ins, outs[key] = region_signature(Op.COND, key, attrs[key])
        _expect_inputs(Op.COND, key, ins, types[1:], "the operands after the predicate")
    if outs["then"] != outs["else"]:
        raise OpError(f"cond: the branches return different types: then returns {_types(outs['then'])}, else "
                      f"returns {_types(outs['else'])}; both branches must return the same number of values, "
                      f"each of the same type (cast, reshape or pad one branch)")
    return outs["then"]


def _infer_while_loop(types, attrs):
    carry = tuple(types)
    ins, outs = region_signature(Op.WHILE_LOOP, "cond", attrs["cond"])
    _expect_inputs(Op.WHILE_LOOP, "cond", ins, carry, "the carry")
    if len(outs) != 1 or outs[0].shape != () or outs[0].dtype != np.bool_:
        raise OpError(f"while_loop: region cond must return one bool scalar (bool[]), it returns {_types(outs)}")
    ins, outs = region_signature(Op.WHILE_LOOP, "body", attrs["body"])
    _expect_inputs(Op.WHILE_LOOP, "body", ins, carry, "the carry")
    _expect_carry(Op.WHILE_LOOP, "body", outs, carry)
    return carry


def _infer_fori_loop(types, attrs):
    if len(types) < 2:
        raise OpError("fori_loop: needs the operands lower and upper, then the carry")
    lower, upper, carry = types[0], types[1], tuple(types[2:])
    _check_scalar(Op.FORI_LOOP, "lower", lower, "iu", "an integer scalar")
    _check_scalar(Op.FORI_LOOP, "upper", upper, "iu", "an integer scalar")
    ins, outs = region_signature(Op.FORI_LOOP, "body", attrs["body"])
    _expect_inputs(Op.FORI_LOOP, "body", ins, (lower,) + carry, "the index i (typed like lower) and the carry")
    _expect_carry(Op.FORI_LOOP, "body", outs, carry)
    return carry


def _infer_scan(types, attrs):
    n_carry, length = attrs["n_carry"], attrs["length"]
    if not 0 <= n_carry <= len(types) or type(length) is int and length < 0:
        raise OpError(f"scan: n_carry={n_carry} and length={length} do not fit {len(types)} operands")
    carry, xs = tuple(types[:n_carry]), types[n_carry:]
    for i, x in enumerate(xs):
        message = (f"scan: xs {i} is {x}; each xs is scanned along its first axis, which must have the length "
                   f"{length}")
        if x.ndim == 0:
            raise OpError(message)
        same_size(Op.SCAN, x.shape[0], length, message)
    slices = tuple(TensorType(x.dtype, x.shape[1:]) for x in xs)
    ins, outs = region_signature(Op.SCAN, "body", attrs["body"])
    _expect_inputs(Op.SCAN, "body", ins, carry + slices, "the carry and one slice of each xs")
    _expect_carry(Op.SCAN, "body", outs[:n_carry], carry)
    ys = tuple(TensorType(y.dtype, (length,) + y.shape) for y in outs[n_carry:])
    return carry + ys


# --- binding: GraphBuilder.cond(pred, then_graph, else_graph, *operands) and friends take region graphs.
# F.cond, F.while_loop, F.fori_loop and F.scan (frontends/control.py) take functions and trace them.


def _region(op: Op, key: str, g):
    if not hasattr(g, "input_nodes"):
        raise OpError(f"{op}: region {key} must be a Graph (F.{op} traces Python functions into regions; the "
                      f"graph builder takes graphs), got {type(g).__name__}")
    return g


def _bind_cond(pred, then, orelse, *operands):
    return [pred, *operands], {"then": _region(Op.COND, "then", then), "else": _region(Op.COND, "else", orelse)}


def _bind_while_loop(cond, body, *init):
    return list(init), {"cond": _region(Op.WHILE_LOOP, "cond", cond), "body": _region(Op.WHILE_LOOP, "body", body)}


def _bind_fori_loop(lower, upper, body, *init):
    return [lower, upper, *init], {"body": _region(Op.FORI_LOOP, "body", body)}


def _bind_scan(body, init, xs, length=None):
    init, xs = list(init), list(xs)
    if length is None:
        if not xs:
            raise OpError("scan: give length= when there is nothing to scan over (xs is empty)")
        length = np.shape(xs[0])[0] if not hasattr(xs[0], "shape") else xs[0].shape[0]
    attrs = {"n_carry": static_int(Op.SCAN, "n_carry", len(init)), "length": static_int(Op.SCAN, "length", length),
             "body": _region(Op.SCAN, "body", body)}
    return init + xs, attrs


register(OpDef(Op.COND, "control", _bind_cond, _infer_cond, _cond, multi_output=True, regions=("then", "else"),
               doc="the then region's outputs if pred else the else region's, both run on the operands"))
register(OpDef(Op.WHILE_LOOP, "control", _bind_while_loop, _infer_while_loop, _while_loop, multi_output=True,
               regions=("cond", "body"), doc="carry = body(carry) while cond(carry); returns the carry"))
register(OpDef(Op.FORI_LOOP, "control", _bind_fori_loop, _infer_fori_loop, _fori_loop, multi_output=True,
               regions=("body",), doc="carry = body(i, carry) for i in range(lower, upper); returns the carry"))
register(OpDef(Op.SCAN, "control", _bind_scan, _infer_scan, _scan, multi_output=True, regions=("body",),
               doc="carry, y[t] = body(carry, x[t]) for t in range(length); returns the carry and the stacked ys"))
