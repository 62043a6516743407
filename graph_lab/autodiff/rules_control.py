"""Derivative rules of the ops with regions: ``cond``, ``scan``, ``fori_loop`` (and ``while_loop``'s refusal).

Each rule builds its backward pass out of the same control-flow ops, with ``F``: the derivative of a region is
found by replaying the region's graph on stand-ins inside a new region being traced, and walking that replay
backwards with the rules of the ops it holds (``core.backward``), so the backward of a branch or a loop body is
itself a region.

- ``cond``: a ``cond`` on the same predicate whose branches are the derivatives of the two branches.
- ``scan``: a forward ``scan`` that stacks the carry entering every step, then a ``scan`` over the steps in
  reverse whose carry is the carry's cotangent and which applies the body's derivative to each step.
- ``fori_loop``: the same as a ``scan`` over the indices when the bounds are known at capture; with bounds known
  only when the graph runs, a reverse ``fori_loop`` that recomputes the carry entering each step from the start
  (a scan's length must be known at capture; the recomputation makes it n^2 / 2 body runs for n steps).
- ``while_loop``: refused, since the number of steps is only found by running it: nothing says how many steps
  the reverse loop must take, or which carries to keep.

A carry that the body returns unchanged (a value the body read from outside, lifted into the carry) is not
stacked: each step reads it from outside, and its cotangent adds up over the steps in the reverse loop's carry.
"""

from __future__ import annotations

import numpy as np

from ..frontends import functional as F
from ..frontends.control import RegionRecorder
from ..frontends.tensor import TRACING_REGIONS
from ..ir.graph import Graph
from ..ir.subgraphs import copy_graph
from ..ops import Op, opdef
from ..ops.base import register_vjp
from .core import NoDerivativeError, _floating, _Replay, backward


def _replay(region: Graph, inputs: list):
    """Record ``region``'s nodes into the region being traced now, on ``inputs``: its outputs and the tape."""
    replay = _Replay(TRACING_REGIONS[-1])
    region = _owned(region)
    env = dict(zip((n.outputs[0] for n in region.input_nodes), inputs))
    replay.run(region, env)
    return [env[v] for v in region.outputs], replay.tape


def _owned(region: Graph) -> Graph:
    """A copy of ``region`` whose nested regions are copies too: each node owns its regions, and a body may be
    replayed several times (forward, then backward)."""
    copy = copy_graph(region)
    for node in copy.nodes:
        for key in opdef(node.op).regions:
            node.attrs[key] = _owned(node.attrs[key])
    return copy


def _outermost(rec):
    while isinstance(rec, RegionRecorder):
        rec = rec.parent
    return rec


def _region_vjp(region: Graph, inputs: list, out_cts: list) -> list:
    """The cotangents of ``inputs`` (None where none reaches one) of ``region`` run on them, given the
    cotangents of its outputs (None for none); recorded into the region being traced now."""
    outs, tape = _replay(region, inputs)
    seeds: dict[int, tuple] = {}  # (an output returned twice gets the sum of its cotangents)
    for t, c in zip(outs, out_cts):
        if c is None or not _floating(t.type):
            continue
        old = seeds.get(id(t))
        seeds[id(t)] = (t, c if old is None else old[1] + c)
    joint = _outermost(TRACING_REGIONS[-1])
    at = joint.at
    cts = backward(tape, list(seeds.values()), joint)
    joint.at = at
    return [_like(cts[id(t)][1], t) if id(t) in cts else None for t in inputs]


def _like(ct, t):
    """``ct`` with the dtype of ``t``: a loop's carry keeps its type from one step to the next."""
    return ct if ct.dtype == t.dtype else F.astype(ct, t.dtype)


def _or_zeros(ct, t):
    return ct if ct is not None else F.zeros_like(t)


# --- cond


def _cond(cts, ins, outs, **branches):
    pred, operands = ins[0], ins[1:]
    wanted = [k for k, t in enumerate(operands) if _floating(t.type)]
    n = len(operands)

    def derivative(region: Graph):
        def branch(*args):
            got = _region_vjp(region, list(args[:n]), list(args[n:]))
            return tuple(_or_zeros(got[k], args[k]) for k in wanted)
        return branch

    made = F.cond(pred, derivative(branches["then"]), derivative(branches["else"]), *operands, *cts)
    result = [None] * len(ins)
    for k, ct in zip(wanted, made):
        result[1 + k] = ct
    return result


# --- loops as scans: body(*carry, *x[t]) -> (*carry, *y[t])


class _Steps:
    """A loop body seen as a scan's: which carries change (and are stacked) and which the body passes on."""

    def __init__(self, body: Graph, carry: list, n_before: int = 0):
        """``n_before``: body inputs before the carry (fori_loop's index)."""
        self.body, self.carry, self.n_before = body, carry, n_before
        ins = [n.outputs[0] for n in body.input_nodes][n_before:]
        self.passed = {k for k, v in enumerate(ins[:len(carry)]) if body.outputs[k] is v}
        self.changing = [k for k in range(len(carry)) if k not in self.passed]
        self.floating = [k for k, t in enumerate(carry) if _floating(t.type)]

    def full(self, changing: tuple) -> list:
        """The whole carry from the changing part (the passed-on carries are read from outside)."""
        full = list(self.carry)
        for k, t in zip(self.changing, changing):
            full[k] = t
        return full

    def stack_carries(self, before: list, xs: list, length: int) -> list:
        """The changing carries entering each of the ``length`` steps, stacked (``before``: inputs first)."""
        if not self.changing:
            return []
        nb = len(before)

        def step(c, x):
            outs, _ = _replay(self.body, [*x[:nb], *self.full(c), *x[nb:]])
            return tuple(outs[k] for k in self.changing), tuple(c)
        _, stacked = F.scan(step, tuple(self.carry[k] for k in self.changing), tuple(before + xs), length=length)
        return list(stacked)

    def reverse(self, stacked: list, before: list, xs: list, ct_carry: list, ct_ys: list, length: int):
        """The cotangents of the first carry and of each x: a scan over the steps taken backwards."""
        nc, nb, nx = len(self.changing), len(before), len(xs)
        floating_xs = [j for j, x in enumerate(xs) if _floating(x.type)]

        def step(ct, r):
            carry = self.full(r[:nc])
            x_before, x, ct_y = r[nc:nc + nb], r[nc + nb:nc + nb + nx], r[nc + nb + nx:]
            out_cts = [None] * len(carry)
            for k, c in zip(self.floating, ct):
                out_cts[k] = c
            got = _region_vjp(self.body, [*x_before, *carry, *x], out_cts + list(ct_y))[nb:]
            new = tuple(_or_zeros(got[k], carry[k]) for k in self.floating)
            return new, tuple(_or_zeros(got[len(carry) + j], x[j]) for j in floating_xs)

        backwards = [F.flip(t, 0) for t in [*stacked, *before, *xs, *ct_ys]]
        ct_first, ct_xs = F.scan(step, tuple(ct_carry[k] for k in self.floating), tuple(backwards), length=length)
        carry_cts = [None] * len(self.carry)
        for k, c in zip(self.floating, ct_first):
            carry_cts[k] = c
        x_cts = [None] * nx
        for j, c in zip(floating_xs, ct_xs):
            x_cts[j] = F.flip(c, 0)
        return carry_cts, x_cts


def _scan(cts, ins, outs, body, n_carry, length):
    if type(length) is not int:
        raise NoDerivativeError(f"a scan of symbolic length {length}: its derivative stacks the carry of every "
                                f"step, so the length must be known at capture")
    steps = _Steps(body, list(ins[:n_carry]))
    xs = list(ins[n_carry:])
    stacked = steps.stack_carries([], xs, length)
    carry_cts, x_cts = steps.reverse(stacked, [], xs, list(cts[:n_carry]), list(cts[n_carry:]), length)
    return carry_cts + x_cts


# --- fori_loop


def _constant(t):
    node = t._value.node
    return int(node.attrs["value"]) if node is not None and node.op == Op.CONST else None


def _fori_loop(cts, ins, outs, body):
    lower, upper, carry = ins[0], ins[1], list(ins[2:])
    lo, hi = _constant(lower), _constant(upper)
    if lo is None or hi is None:
        return [None, None, *_fori_loop_recomputing(cts, lower, upper, carry, body)]
    steps = _Steps(body, carry, n_before=1)
    indices = [F.astype(F.arange(lo, max(lo, hi)), lower.dtype) + lower * 0]  # (a value of the graph, typed i)
    length = max(0, hi - lo)
    stacked = steps.stack_carries(indices, [], length)
    carry_cts, _ = steps.reverse(stacked, indices, [], list(cts), [], length)
    return [None, None, *carry_cts]


def _fori_loop_recomputing(cts, lower, upper, carry: list, body: Graph) -> list:
    """Bounds known only at run time: step j of the reverse loop recomputes the carry entering step
    ``upper - 1 - j`` from the first carry, then applies the body's derivative to it."""
    floating = [k for k, t in enumerate(carry) if _floating(t.type)]

    def forward(i, c):
        return tuple(_replay(body, [i, *c])[0])

    def step(j, ct):
        i = F.astype(upper - 1 - j, lower.dtype)
        before = list(F.fori_loop(lower, i, forward, tuple(carry)))
        out_cts = [None] * len(carry)
        for k, c in zip(floating, ct):
            out_cts[k] = c
        got = _region_vjp(body, [i, *before], out_cts)[1:]
        return tuple(_or_zeros(got[k], before[k]) for k in floating)

    trips = F.maximum(upper - lower, 0)
    first = F.fori_loop(lower * 0, F.astype(trips, lower.dtype), step, tuple(cts[k] for k in floating))
    result = [None] * len(carry)
    for k, c in zip(floating, first):
        result[k] = c
    return result


def _while_loop(cts, ins, outs, **regions):
    raise NoDerivativeError("a while_loop's number of steps is only known by running it, so its derivative "
                            "(a loop over the same steps in reverse) is not defined here; write the loop with "
                            "F.fori_loop or F.scan, whose trip count is fixed when the loop starts")


register_vjp(Op.COND, _cond)
register_vjp(Op.SCAN, _scan)
register_vjp(Op.FORI_LOOP, _fori_loop)
register_vjp(Op.WHILE_LOOP, _while_loop)
