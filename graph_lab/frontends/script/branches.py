"""Control flow on tensor data, converted into control-flow nodes (TorchScript's ``prim::If`` / ``prim::Loop``).

``if`` on a tensor becomes ``cond``: each branch is converted into a region, starting from the variables as they
are before the ``if``. A variable either branch assigns becomes an output when both branches leave it an array
(or a Python number) of one type; otherwise it has no single value after the ``if`` (``Undefined``) and reading
it is an error that shows both lines. A branch that returns takes the rest of the function with it, and the
``cond``'s outputs are then the function's result.

``while`` on a tensor becomes ``while_loop`` and ``for i in range(n)`` with a tensor ``n`` (or any ``n`` with
``loops="fori"``) becomes ``fori_loop``: the carry is every variable the body assigns that exists before the
loop; it keeps its type. A Python number in the carry becomes a NumPy scalar (a graph value has an array type);
script checks that this changes no dtype the eager loop would compute, and refuses when it would.

Tensors of the graph that a region reads are lifted into it by its ``RegionRecorder`` (see frontends/control.py).
"""

from __future__ import annotations

import ast

import numpy as np

from ...ir.types import TensorType
from ...ops import Op
from .. import pytree
from ..control import (RegionRecorder, Traced, carry_lifted, lifted_union, predicate, to_array_scalar, tracing,
                       type_of)
from ..tensor import Tensor
from .analysis import assigned_names, contains, loop_exits
from .values import Break, Continue, Return, Undefined

_MISSING = object()


def _returns(stmts: list[ast.stmt]) -> ast.AST | None:
    """The first ``return`` in the statements (a question for ``FunctionSource.ask``)."""
    return contains(stmts, ast.Return)


_ARRAY_LEAVES = (Tensor, bool, int, float, complex)


def _is_array_leaf(x) -> bool:
    return isinstance(x, (*_ARRAY_LEAVES, np.ndarray, np.generic))


class Region:
    """One converted block: its recorder (and graph), the variables after it, and what it returned."""

    def __init__(self, rec: RegionRecorder, env, inputs: list[Tensor]):
        self.rec, self.env, self.inputs = rec, env, inputs
        self.result = None
        self.returned_at: ast.AST | None = None

    def traced(self, out_tree=None) -> Traced:
        return Traced(self.rec, self.inputs, out_tree)


class Branches:
    """The control-flow half of the converter."""

    def region(self, op: Op, key: str, run, bind: list[tuple[str, TensorType]] = ()) -> Region:
        """Convert ``run()`` (statements or an expression) into a new region of an ``op`` node. ``bind`` names
        the region's own inputs (a loop's carry); the variables are those of now, in a copy."""
        outer_env = self.frame.env
        rec = RegionRecorder(self.rec, op, key)
        rec.names_outside = lambda t: _name_in(outer_env, t)
        env = outer_env.copy()
        region = Region(rec, env, [])
        for name, t in bind:
            region.inputs.append(rec.add_input(name, t))
        self.frame.env = env
        try:
            with tracing(rec):
                region.result = run(region)
        finally:
            self.frame.env = outer_env
        return region

    def run_block(self, stmts: list[ast.stmt], rest: list[ast.stmt] | None, what: str):
        """A runner for ``region``: converts ``stmts``; a return is caught (for a branch that returns)."""
        def run(region: Region):
            try:
                self.block(stmts, rest)
            except Return as r:
                region.returned_at = r.node
                return r.value
            except Break as b:
                word = "continue" if isinstance(b, Continue) else "break"
                raise self.fail(b.node, f"{word} inside {what}: it would leave a converted loop or branch, which a "
                                        f"control-flow node cannot do", "set a flag variable and test it in the "
                                                                        "loop condition", word) from None
            return None
        return run

    # --- if

    def convert_if(self, node: ast.If, test: Tensor, after: list[ast.stmt] | None) -> None:
        pred = predicate(test, "the if test")
        ret = self.frame.source.ask(_returns, node, node.body + node.orelse)
        if ret is None:
            self.merge_branches(node, pred)
            return
        if after is None:
            raise self.fail(ret, "return inside a loop, under a condition on tensor data",
                            "assign the result to a variable and return it after the loop", "an early return")
        what = "a branch on tensor data"
        then = self.region(Op.COND, "then", self.run_block(node.body + after, [], what))
        orelse = self.region(Op.COND, "else", self.run_block(node.orelse + after, [], what))
        result = self.emit_cond(node, pred, then, orelse, then.result, orelse.result, self.returns_of)
        raise Return(result, node)

    def returns_of(self, region: Region, node: ast.AST) -> str:
        if region.returned_at is not None:
            return f"returns at {self.frame.source.show(region.returned_at)}"
        return "reaches the end of the function (returns None)"

    def emit_cond(self, node: ast.AST, pred, then: Region, orelse: Region, a, b, describe):
        """A ``cond`` node whose branches give the values ``a`` and ``b`` (nests of arrays and numbers); returns
        its result, nested as ``a``. Values that do not match are refused, citing ``describe(region, node)``."""
        a_leaves, a_tree = pytree.flatten(a)
        b_leaves, b_tree = pytree.flatten(b)
        if a_tree != b_tree or not all(_is_array_leaf(x) for _, x in a_leaves + b_leaves):
            raise self.fail(node, f"the branches give values of different structures: the then branch "
                                  f"{describe(then, node)} ({_shape_of(a)}), the else branch {describe(orelse, node)} "
                                  f"({_shape_of(b)})", "make both branches give the same structure of arrays",
                            "branches that differ")
        for (_, x), (_, y) in zip(a_leaves, b_leaves):
            if type_of_leaf(x) != type_of_leaf(y):
                raise self.fail(node, f"the branches give different types: the then branch {describe(then, node)} "
                                      f"({type_of_leaf(x)}), the else branch {describe(orelse, node)} "
                                      f"({type_of_leaf(y)})", "make both branches give the same dtype and shape "
                                                              "(cast, reshape or pad one of them)",
                                "branches that differ")
        return pytree.unflatten(a_tree, self.finish_cond(node, pred, then, orelse, [x for _, x in a_leaves],
                                                         [y for _, y in b_leaves]))

    def finish_cond(self, node: ast.AST, pred, then: Region, orelse: Region, a: list, b: list) -> list:
        then.rec.graph.outputs = [then.rec.output(x) for x in a]
        orelse.rec.graph.outputs = [orelse.rec.output(y) for y in b]
        for r in (then, orelse):
            r.rec.graph.remove_dead_code()
        union = lifted_union(then.traced(), orelse.traced())
        for r in (then, orelse):
            r.rec.order_inputs([], union, siblings=(then.rec, orelse.rec))
        self.at(node)
        outs = self.rec.emit(Op.COND, [pred, *union], {"then": then.rec.graph, "else": orelse.rec.graph})
        for out, x, y in zip(outs, a, b):  # a branch that passes an array through: eager code shares its memory
            storage = _outer_storage(x, then.rec) or _outer_storage(y, orelse.rec)
            if storage is not None:
                out._maybe_alias = (storage, storage.version)
                self.aliased[id(out)] = out
        return list(outs)

    def merge_branches(self, node: ast.If, pred) -> None:
        """An ``if`` without returns: variables the branches assign become the ``cond``'s outputs."""
        what = "a branch on tensor data"
        then = self.region(Op.COND, "then", self.run_block(node.body, None, what))
        orelse = self.region(Op.COND, "else", self.run_block(node.orelse, None, what))
        env, show = self.frame.env, self.frame.source.show
        merged, a, b = [], [], []
        for name in self.frame.source.ask(assigned_names, node, node.body + node.orelse):
            x, y = then.env.values.get(name, _MISSING), orelse.env.values.get(name, _MISSING)
            if x is y or _same_python_value(x, y):  # one Python value either way: it stays one
                if x is not _MISSING and x is not env.values.get(name, _MISSING):
                    env.assign(name, x, node)
                continue
            if x is _MISSING or y is _MISSING:
                side, r = ("then", then) if y is _MISSING else ("else", orelse)
                env.assign(name, Undefined(f"it is assigned only in the {side} branch of the if at "
                                           f"{show(node)} ({show(r.env.where[name])})",
                                           f"assign {name} before the if, or in both branches"), node)
                continue
            reason = self.merge_problem(name, x, y, then, orelse)
            if reason is not None:
                env.assign(name, Undefined(reason, f"give {name} the same type in both branches (cast, reshape, "
                                                   f"or start a number as np.float64(...) / np.int64(...))"), node)
                continue
            merged.append((name, pytree.flatten(x)[1], len(pytree.flatten(x)[0])))
            a += [leaf for _, leaf in pytree.flatten(x)[0]]
            b += [leaf for _, leaf in pytree.flatten(y)[0]]
        outs = self.finish_cond(node, pred, then, orelse, a, b)
        for name, tree, count in merged:
            env.assign(name, pytree.unflatten(tree, outs[:count]), node)
            outs = outs[count:]

    def merge_problem(self, name: str, x, y, then: Region, orelse: Region) -> str | None:
        """Why ``x`` (then) and ``y`` (else) cannot be one value after the ``if``; None when they can."""
        show = self.frame.source.show
        lines = (f"the then branch makes it {{}} ({_where(show, then.env, name)}) and the else branch {{}} "
                 f"({_where(show, orelse.env, name)})")
        if not _is_array_value(x) or not _is_array_value(y):
            return "it differs between the branches and is not an array: " + lines.format(
                type(x).__name__, type(y).__name__)
        (x_leaves, x_tree), (y_leaves, y_tree) = pytree.flatten(x), pytree.flatten(y)
        if x_tree != y_tree or not all(_is_array_leaf(v) for _, v in x_leaves + y_leaves):
            return "its structure differs between the branches: " + lines.format(_shape_of(x), _shape_of(y))
        tx, ty = [type_of_leaf(v) for _, v in x_leaves], [type_of_leaf(v) for _, v in y_leaves]
        if tx != ty:
            return "its type differs between the branches: " + lines.format(
                ", ".join(map(_type_text, tx)), ", ".join(map(_type_text, ty)))
        return None

    def convert_ifexp(self, node: ast.IfExp, test: Tensor):
        pred = predicate(test, "the test of the conditional expression")
        then = self.region(Op.COND, "then", lambda r: self.expr(node.body))
        orelse = self.region(Op.COND, "else", lambda r: self.expr(node.orelse))
        sides = {id(then): node.body, id(orelse): node.orelse}
        return self.emit_cond(node, pred, then, orelse, then.result, orelse.result,
                              lambda r, n: f"gives `{ast.unparse(sides[id(r)])}`")

    # --- loops

    def loop_carry(self, node: ast.AST, body: list[ast.stmt], index: tuple[str, TensorType] | None) -> "Carry":
        """What a converted loop carries: the variables its body assigns that exist before it. The body's other
        variables become ``Undefined`` after the loop (it may run zero times)."""
        env, show = self.frame.env, self.frame.source.show
        carried, local = [], []
        for name in self.frame.source.ask(assigned_names, node, body):  # (body is node.body)
            if index is not None and name == index[0]:
                continue
            value = env.values.get(name, _MISSING)
            if value is _MISSING or isinstance(value, Undefined):
                local.append(name)
            elif _is_array_value(value):
                carried.append(name)
            else:
                raise self.fail(node, f"{name} is a {type(value).__name__} ({_where(show, env, name)}) and this loop "
                                      f"on tensor data assigns it: a converted loop carries arrays and numbers only",
                                f"keep {name} out of the loop, or make it an array", "a non-array loop variable")
        return Carry(env, carried, local, index)

    def run_loop(self, node, op: Op, carry: "Carry", test: ast.expr | None, bounds: list) -> list:
        """A ``while_loop`` (``test`` given) or ``fori_loop`` (``bounds`` given) node for ``carry``; returns its
        outputs for the carry."""
        exit_node = self.frame.source.ask(loop_exits, node, node.body)
        if exit_node is not None:
            word = "break" if isinstance(exit_node, ast.Break) else "continue"
            raise self.fail(exit_node, f"{word} in a loop on tensor data: a while_loop or fori_loop node runs its "
                                       f"whole body in every iteration", f"replace {word} by a flag variable "
                                                                         f"tested in the loop condition", word)

        def run_body(region: Region):
            carry.bind_into(region, node)
            return self.run_block(node.body, None, "a loop on tensor data")(region)

        def run_test(region: Region):
            carry.bind_into(region, node)
            return predicate(self.expr(test, test=True), "the loop condition")

        runs = ([("cond", run_test)] if test is not None else []) + [("body", run_body)]
        regions = [self.region(op, key, run, carry.inputs(carry.types)) for key, run in runs]
        if test is not None:
            regions[0].rec.graph.outputs = [regions[0].rec.output(regions[0].result)]
        regions[-1].rec.graph.outputs = self.carry_outputs(node, carry, regions[-1])
        for r in regions:
            r.rec.graph.remove_dead_code()
        if carry.weak != carry.types:
            for key, run in runs:
                self.check_weak_carry(node, op, key, run, carry)
        union = carry_lifted(*(r.traced() for r in regions))
        graphs = {key: r.rec.graph for (key, _), r in zip(runs, regions)}
        self.at(node)
        outs = self.rec.emit(op, [*bounds, *carry.init, *union], graphs)[:len(carry.init)]
        for out, value in zip(outs, carry.init):  # zero iterations leave the variable as it was
            if isinstance(value, Tensor):
                out._maybe_alias = (value._storage, value._storage.version)
                self.aliased[id(out)] = out
        return list(outs)

    def carry_outputs(self, node, carry: "Carry", body: Region) -> list:
        """The body's outputs: each carried variable's value after the body, of the type it entered with."""
        show, outputs = self.frame.source.show, []
        for name in carry.names:
            value = body.env.values[name]
            leaves, tree = pytree.flatten(value)
            if tree != carry.flat[name][1] or not all(_is_array_leaf(v) for _, v in leaves):
                raise self.fail(node, f"{name} changes structure in the loop: {_shape_of(carry.env.values[name])} "
                                      f"before it ({_where(show, carry.env, name)}), {_shape_of(value)} after the "
                                      f"body ({_where(show, body.env, name)})", f"keep {name}'s structure",
                                "a loop variable that changes structure")
            for (_, leaf), t in zip(leaves, carry.types_of(name)):
                out = body.rec.output(to_array_scalar(leaf))
                if out.type != t:
                    raise self.fail(node, f"{name} enters the loop as {t} ({_where(show, carry.env, name)}) and the "
                                          f"body makes it {out.type} ({_where(show, body.env, name)}); a variable "
                                          f"carried by a loop on tensor data keeps its type",
                                    f"make the body keep {name}'s dtype and shape (cast or reshape), or start it "
                                    f"with the type the loop gives it", "a loop variable that changes type")
                outputs.append(out)
        return outputs

    def check_weak_carry(self, node, op: Op, key: str, run, carry: "Carry") -> None:
        """A Python number carried by the loop is a NumPy scalar in the graph. Convert the region once more with
        it as the Python number eager code has in the first iteration: every op must give the same dtype both
        ways, or the graph would compute other values than eager Python. (Both trial regions are thrown away.)"""
        strong = self.region(op, key, run, carry.inputs(carry.types))
        weak = self.region(op, key, run, carry.inputs(carry.weak))
        for a, b in zip(strong.rec.graph.nodes, weak.rec.graph.nodes):
            ta, tb = [v.type.dtype for v in a.outputs], [v.type.dtype for v in b.outputs]
            if a.op == b.op and ta == tb:
                continue
            name = next(n for n, w, t in zip(carry.owners, carry.weak, carry.types) if w != t)
            i = carry.owners.index(name)
            where = _where(self.frame.source.show, carry.env, name)
            raise self.fail(node, f"{name} starts as a Python number ({where}), which this loop on tensor data "
                                  f"carries as {carry.types[i]}; in the first iteration eager Python computes {b.op} with it as a Python number, giving "
                                  f"{', '.join(map(str, tb))} where the graph gives {', '.join(map(str, ta))}",
                            f"start {name} as a NumPy value of the dtype the loop gives it (for example "
                            f"{name} = np.float32(0.0))", "a Python number carried by a loop")

    def convert_while(self, node: ast.While, test: Tensor) -> None:
        carry = self.loop_carry(node, node.body, None)
        self.assign_carry(node, carry, self.run_loop(node, Op.WHILE_LOOP, carry, node.test, []))
        self.block(node.orelse, None)  # no break in a converted loop: its else clause always runs

    def convert_for_range(self, node: ast.For, start, stop) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.fail(node.target, "a for loop over a range on tensor data binds one name",
                            "write for i in range(...)", "the loop target")
        index_type = start.type if isinstance(start, Tensor) else TensorType.of(start)
        carry = self.loop_carry(node, node.body, (node.target.id, index_type))
        self.assign_carry(node, carry, self.run_loop(node, Op.FORI_LOOP, carry, None, [start, stop]))
        self.block(node.orelse, None)

    def assign_carry(self, node, carry: "Carry", outs: list) -> None:
        env, show = self.frame.env, self.frame.source.show
        for name in carry.names:
            count = len(carry.flat[name][0])
            env.assign(name, pytree.unflatten(carry.flat[name][1], outs[:count]), node)
            outs = outs[count:]
        for name in carry.local:
            env.assign(name, Undefined(f"it is assigned only inside the loop at {show(node)}",
                                       "define it before the loop (a loop on tensor data may run zero times)"), node)
        if carry.index is not None:
            env.assign(carry.index[0], Undefined(f"it is the index of the converted loop at {show(node)}",
                                                 "keep a counter of your own in the loop if you need it after"), node)


class Carry:
    """The variables a converted loop carries, flattened: each leaf a value of the carry, Python numbers made
    NumPy scalars (``init``); ``types`` are their graph types and ``weak`` the types eager Python starts with."""

    def __init__(self, env, names: list[str], local: list[str], index: tuple[str, TensorType] | None):
        self.env, self.names, self.local, self.index = env, names, local, index
        self.flat = {name: pytree.flatten(env.values[name]) for name in names}
        leaves = [(name, path, v) for name in names for path, v in self.flat[name][0]]
        self.owners = [name for name, _, _ in leaves]
        self.paths = [name + path for name, path, _ in leaves]
        self.init = [to_array_scalar(v) for _, _, v in leaves]
        self.types = [type_of(v) for v in self.init]
        self.weak = [type_of_leaf(v) for _, _, v in leaves]

    def types_of(self, name: str) -> list[TensorType]:
        return [t for owner, t in zip(self.owners, self.types) if owner == name]

    def inputs(self, types: list[TensorType]) -> list[tuple[str, TensorType]]:
        """A region's inputs: the index (for fori_loop), then one per leaf of the carry."""
        return ([self.index] if self.index else []) + list(zip(self.paths, types))

    def bind_into(self, region: Region, node) -> None:
        """Point the region's variables at its inputs: the index, then each carried variable."""
        values = list(region.inputs)
        if self.index:
            region.env.assign(self.index[0], values.pop(0), node)
        for name in self.names:
            count = len(self.flat[name][0])
            region.env.assign(name, pytree.unflatten(self.flat[name][1], values[:count]), self.env.where.get(name))
            values = values[count:]


def type_of_leaf(x) -> TensorType:
    """The type a value has as a graph value: a Python number keeps its weak type (as in a cond's outputs)."""
    return x.type if isinstance(x, Tensor) else TensorType.of(x)


def _is_array_value(x) -> bool:
    """An array, a number, or a nest of them (what can be a graph value)."""
    leaves, _ = pytree.flatten(x)
    return bool(leaves) and all(_is_array_leaf(v) for _, v in leaves) and not isinstance(x, str)


def _same_python_value(x, y) -> bool:
    """Equal Python values of one type (numbers, strings, tuples of them); arrays and tensors never are."""
    if type(x) is not type(y) or any(isinstance(v, (Tensor, np.ndarray)) for _, v in pytree.flatten(x)[0]):
        return False
    try:
        return bool(x == y) if not callable(x) else x is y
    except Exception:
        return False


def _outer_storage(x, rec: RegionRecorder):
    """The memory of an array from before the ``if`` that the branch result ``x`` may share (when the branch
    passed it through, or a view of it), or None for an array the branch made."""
    if not isinstance(x, Tensor):
        return None
    if x._rec is not rec:
        return x._storage
    lifted = {id(rec.lift(t)._storage): t._storage for t in rec.captured}
    for storage in (x._storage, x._maybe_alias[0] if x._maybe_alias else None):
        if storage is not None and id(storage) in lifted:
            return lifted[id(storage)]
    return None


def _shape_of(x) -> str:
    if x is None:
        return "None"
    leaves, _ = pytree.flatten(x)
    if len(leaves) == 1 and leaves[0][0] == "":
        return _type_text(type_of_leaf(x)) if _is_array_leaf(x) else type(x).__name__
    return f"{type(x).__name__} of {len(leaves)}"


def _type_text(t: TensorType) -> str:
    return f"{t} (a Python number)" if t.weak is not None else str(t)


def _name_in(env, t: Tensor) -> str | None:
    """The variable (or the path into a variable: ``p['w1']``) that holds ``t``."""
    for name, value in env.values.items():
        if isinstance(value, (dict, list, tuple)):
            for path, leaf in pytree.flatten(value, name)[0]:
                if isinstance(leaf, Tensor) and leaf._value is t._value:
                    return path
        elif isinstance(value, Tensor) and value._value is t._value:
            return name
    return None


def _where(show, env, name: str) -> str:
    node = env.where.get(name)
    return show(node) if node is not None else "an argument"
