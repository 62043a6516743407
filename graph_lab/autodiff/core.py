"""Reverse-mode differentiation on the IR: ``grad_graph``, and ``grad`` / ``value_and_grad`` built on it.

``grad_graph(g)`` copies ``g`` into a new graph (module calls inlined), then walks the copy backwards: each node's
derivative rule (``OpDef.vjp``, written with ``F``) is called on stand-ins of the new graph, so the backward pass
is recorded as ordinary ops after the forward ones. The result is one joint graph, forward and backward, which
prints, parses, and goes through the passes and backends like any other.

``grad(fn)`` is the same on a function: ``fn`` is traced on its actual arguments (with ``mode="specialize"``, so
Python control flow on their values follows this call's data), the joint graph is built and run. Called on
stand-in tensors (inside ``trace``), it records the joint graph's ops into the enclosing capture instead: a
training step (forward, loss, gradients, update) then captures as one graph.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..backends.reference import run
from ..errors import GraphLabError
from ..frontends import functional as F, pytree
from ..frontends.control import recorder_of
from ..frontends.tensor import Storage, Tensor
from ..frontends.trace import Tracer
from ..ir.graph import Graph
from ..ir.types import TensorType
from ..ops import Op, opdef
from .rules_complex import COMPLEX_OPS


class NoDerivativeError(GraphLabError, TypeError):
    """A gradient must flow through an op that has no derivative rule (or not for these attributes)."""


class _JointRecorder(Tracer):
    """Records the joint graph; the nodes of a node's derivative get that node's source line."""

    at = None

    def location(self):
        return self.at if self.at is not None else super().location()


def _floating(t: TensorType) -> bool:
    return t.dtype.kind in "fc" and t.weak is None


class _Replay:
    """Copies a graph's nodes into a recorder (call_module nodes inlined), remembering each for the backward."""

    def __init__(self, rec):
        self.rec = rec
        self.tape: list[tuple[Any, list, list]] = []

    def run(self, graph: Graph, env: dict) -> None:
        for node in graph.nodes:
            if node.op == Op.INPUT:
                continue
            if node.op == Op.PARAM:
                env[node.outputs[0]] = self.param(graph, node)
            elif node.op == Op.CONST:
                env[node.outputs[0]] = Tensor(self.rec, self.rec.const(node.attrs["value"], node.loc))
            elif node.op == Op.CALL_MODULE:
                body = node.attrs["body"]
                inner = dict(zip((n.outputs[0] for n in body.input_nodes), (env[v] for v in node.inputs)))
                self.run(body, inner)
                for v, b in zip(node.outputs, body.outputs):
                    env[v] = inner[b]
            else:
                ins = [env[v] for v in node.inputs]
                if isinstance(self.rec, _JointRecorder):
                    self.rec.at = node.loc  # the copy keeps the user's line
                made = self.rec.emit(node.op, ins, node.attrs)
                outs = list(made) if opdef(node.op).multi_output else [made]
                self.tape.append((node, ins, outs))
                for v, t in zip(node.outputs, outs):
                    env[v] = t

    def param(self, graph: Graph, node):
        raise NotImplementedError


def backward(tape, seeds: list[tuple[Any, Any]], rec: _JointRecorder) -> dict:
    """Cotangents of every value the seeds ``(tensor, cotangent)`` depend on: ``{id(tensor): (tensor, ct)}``."""
    cts: dict[int, tuple[Any, Any]] = {id(t): (t, c) for t, c in seeds}
    for node, ins, outs in reversed(tape):
        rec.at = node.loc
        got = [cts.get(id(t)) for t in outs]
        if all(c is None for c in got):
            continue
        if not any(_floating(t.type) for t in ins):
            continue
        rule = opdef(node.op).vjp
        if rule is not None and node.op not in COMPLEX_OPS and any(t.dtype.kind == "c" for t in (*ins, *outs)):
            where = f" at {node.loc}" if node.loc else ""
            raise NoDerivativeError(f"op {node.op}{where}: its derivative rule is written for real values, and a "
                                    f"gradient flows through it with complex operands or results; the ops with "
                                    f"complex rules are {', '.join(sorted(COMPLEX_OPS))}")
        if rule is None:
            where = f" at {node.loc}" if node.loc else ""
            raise NoDerivativeError(f"no derivative rule for op {node.op}{where}: a gradient flows through it. "
                                    f"Differentiate a function that avoids {node.op}, or stop the gradient before "
                                    f"it (compute that value outside the differentiated function)")
        out_cts = [c[1] if c is not None else F.zeros_like(t) for c, t in zip(got, outs)]
        try:
            in_cts = rule(out_cts, ins, outs, **node.attrs)
        except NoDerivativeError as e:
            where = f" at {node.loc}" if node.loc else ""
            raise NoDerivativeError(f"op {node.op}{where}: {e}") from None
        for t, c in zip(ins, in_cts):
            if c is None or not _floating(t.type):
                continue
            if c.dtype.kind == "c" and t.dtype.kind != "c":  # a real operand of a complex result
                c = F.real(c)
            old = cts.get(id(t))
            cts[id(t)] = (t, c if old is None else old[1] + c)
    rec.at = None
    return cts


class _GraphReplay(_Replay):
    def param(self, graph, node):
        name = node.attrs["name"]
        return Tensor(self.rec, self.rec.graph.add_param(name, graph.param_values[name], node.loc),
                      Storage(f"parameter {name}"))


def grad_graph(graph: Graph, wrt: Sequence[str] | None = None) -> Graph:
    """The joint forward + backward graph of ``graph``, whose single output must be a float scalar (a loss).

    ``wrt`` names the inputs and parameters to differentiate by (default: every float input). The new graph takes
    the same inputs and returns ``(loss, {name: gradient})`` (``pytree.unflatten(joint.out_tree, run(...))``); a
    name the loss does not depend on gets zeros."""
    if len(graph.outputs) != 1 or graph.outputs[0].type.shape != () or not _floating(graph.outputs[0].type):
        shown = ", ".join(str(v.type) for v in graph.outputs)
        raise NoDerivativeError(f"grad_graph: graph {graph.name} must return one float scalar (a loss) to be "
                                f"differentiated, it returns ({shown}); reduce it first (.sum(), .mean())")
    names = [n.attrs["name"] for n in graph.nodes if n.op in (Op.INPUT, Op.PARAM)]
    wrt = [n for n in graph.input_names if _floating(graph.input_types()[n])] if wrt is None else list(wrt)
    unknown = [n for n in wrt if n not in names]
    if unknown:
        raise NoDerivativeError(f"grad_graph: {unknown} are not inputs or parameters of graph {graph.name} "
                                f"(it has {names})")
    joint = Graph(f"{graph.name}_grad")
    rec = _JointRecorder(joint, "error", None)
    env = {}
    for node in graph.input_nodes:
        env[node.outputs[0]] = Tensor(rec, joint.add_input(node.attrs["name"], node.attrs["type"], node.loc),
                                      Storage(f"input {node.attrs['name']!r}"))
    replay = _GraphReplay(rec)
    replay.run(graph, env)
    rec.at = None
    by_name = {n.attrs["name"]: env[n.outputs[0]] for n in graph.nodes if n.op in (Op.INPUT, Op.PARAM)}
    loss = env[graph.outputs[0]]
    cts = backward(replay.tape, [(loss, F.ones_like(loss))], rec)
    grads = [cts[id(by_name[n])][1] if id(by_name[n]) in cts else F.zeros_like(by_name[n]) for n in wrt]
    joint.outputs = [rec.operand_value(t, None) for t in [loss, *grads]]
    joint.out_tree = ("tuple", None, (("leaf", None, ()), ("dict", tuple(wrt), (("leaf", None, ()),) * len(wrt))))
    joint.remove_dead_code()
    joint.verify()
    return joint


# --- on functions


class _LiftingTracer(Tracer):
    """The tracer of ``fn`` inside another capture: a stand-in of that capture which ``fn`` reads without being
    given it (an array compile() read from a global or an attribute) becomes one more input of ``fn``'s graph,
    fed with that stand-in: no gradient is taken for it, and it is never a constant."""

    def __init__(self, graph: Graph, outer):
        super().__init__(graph, "error", None)
        self.outer, self.depth = outer, outer.depth + 1
        self.lifted: dict = {}
        """Value of ``outer`` -> (input name, this graph's stand-in, the outer stand-in)."""

    def operand_value(self, x, loc):
        if isinstance(x, Tensor) and x._rec is self.outer:
            x._check_fresh(loc)
            known = self.lifted.get(x._value)
            if known is None:
                name = f"captured{len(self.lifted)}"
                inner = Tensor(self, self.graph.add_input(name, x.type), Storage(f"input {name!r}"))
                known = self.lifted[x._value] = (name, inner, x)
            return known[1]._value
        return super().operand_value(x, loc)


def _capture(fn: Callable, args: tuple, argnums: tuple[int, ...], example: dict | None, outer=None):
    """Trace ``fn(*args)`` with every array leaf of ``args`` an input (named ``a0``, ``a1['w']``, ...); inside the
    capture ``outer``, the stand-ins of ``outer`` it reads are inputs too (``captured0``, ...)."""
    graph = Graph(getattr(fn, "__name__", "fn").replace("<lambda>", "lambda"))
    rec = _LiftingTracer(graph, outer) if outer is not None else \
        Tracer(graph, "specialize" if example is not None else "error", example)
    trees, wrt, stand_ins = [], [], []
    for i, arg in enumerate(args):
        leaves, tree = pytree.flatten(arg, f"a{i}")
        made = []
        for path, leaf in leaves:
            if isinstance(leaf, (np.ndarray, np.generic, Tensor)) or (i in argnums and isinstance(leaf, float)):
                t = leaf.type if isinstance(leaf, Tensor) else TensorType.of(np.asarray(leaf))
                made.append(Tensor(rec, graph.add_input(path, t), Storage(f"input {path!r}")))
                stand_ins.append((path, leaf))
                if i in argnums:
                    wrt.append(path)
            else:
                made.append(leaf)
        trees.append(pytree.unflatten(tree, made))
    from ..frontends.trace import finish
    finish(rec, lambda *a: fn(*a), trees)
    stand_ins += [(name, outside) for name, _, outside in getattr(rec, "lifted", {}).values()]
    return graph, wrt, stand_ins


def value_and_grad(fn: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """``f(*args) -> (fn(*args), gradient)``: the gradient of the scalar ``fn`` with respect to ``args[argnums]``,
    with the structure of that argument (a dict of arrays gives a dict of gradients; a tuple of argnums, a tuple).

    ``fn``: the function to differentiate; it returns one float scalar. ``argnums``: the position of the argument
    to differentiate by, or a tuple of positions. On arrays it runs now; on stand-in tensors (inside ``trace``) it
    is recorded into that capture."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def value_and_gradient(*args):
        leaves = [leaf for a in args for _, leaf in pytree.flatten(a)[0]]
        outer = recorder_of(leaves)
        example = None if outer is not None else {
            path: np.asarray(leaf) for i, a in enumerate(args) for path, leaf in pytree.flatten(a, f"a{i}")[0]
            if isinstance(leaf, (np.ndarray, np.generic)) or (i in nums and isinstance(leaf, float))}
        graph, wrt, stand_ins = _capture(fn, args, nums, example, outer)
        joint = grad_graph(graph, wrt)
        if outer is None:
            flat = run(joint, {path: np.asarray(leaf) for path, leaf in stand_ins})
        else:
            flat = _inline(outer, joint, dict(stand_ins))
        loss, grads = pytree.unflatten(joint.out_tree, flat)
        shaped = tuple(_like(args[i], f"a{i}", grads) for i in nums)
        return loss, shaped[0] if isinstance(argnums, int) else shaped

    def wrapped(*args):
        return value_and_gradient(*args)  # (a call compile() meets, also when it is given ``wrapped`` itself)

    # What compile() reads to capture ``fn``'s own bytecode (its guards, the arrays it reads as inputs) when it
    # meets a call of this wrapper: the function, argnums, and how to make the wrapper again around another one.
    wrapped.differentiates = value_and_gradient.differentiates = (fn, argnums, value_and_grad)
    return wrapped


def grad(fn: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """``f(*args) -> gradient`` of the scalar ``fn`` with respect to ``args[argnums]`` (see ``value_and_grad``).

    ``fn``: the function to differentiate (one float scalar result). ``argnums``: the position of the argument to
    differentiate by, or a tuple of positions."""
    both = value_and_grad(fn, argnums)

    def wrapped(*args):
        return both(*args)[1]
    wrapped.differentiates = (fn, argnums, grad)  # (see value_and_grad)
    return wrapped


def _like(arg, prefix: str, grads: dict):
    leaves, tree = pytree.flatten(arg, prefix)
    return pytree.unflatten(tree, [grads.get(path) for path, _ in leaves])


class _InlineReplay(_Replay):
    def param(self, graph, node):
        return graph.param_values[node.attrs["name"]]


def _inline(outer, joint: Graph, values: dict) -> list:
    """Record ``joint``'s ops into the capture ``outer``, its inputs being the given stand-ins (or arrays)."""
    env = {n.outputs[0]: values[n.attrs["name"]] for n in joint.input_nodes}
    _InlineReplay(outer).run(joint, env)
    return [env[v] for v in joint.outputs]
