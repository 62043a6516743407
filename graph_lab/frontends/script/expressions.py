"""Converting expressions: each ``ast`` expression evaluated to a stand-in tensor (recorded) or a Python value.

Operators, subscripts and attribute reads are Python's own, applied to the converted operands: on stand-in
tensors they record nodes, on Python values they compute now (``x.shape[0] // 2`` is a number while converting).
In the test of an ``if`` or ``while`` (``test=True``), ``and``/``or``/``not`` and chained comparisons on tensors
become ``logical_and``/``logical_or``/``logical_not``; elsewhere they need a Python bool and are refused.
"""

from __future__ import annotations

import ast
import builtins
import operator
from typing import Callable

import numpy as np

from ...errors import ScriptError
from ...ops import Op
from ..control import predicate
from ..tensor import Tensor, call_op
from .values import ControlSignal, Undefined

BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
          ast.MatMult: operator.matmul, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
          ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift}
COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
           ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
_MISSING = object()
_TEST_AWARE = (ast.BoolOp, ast.Compare, ast.UnaryOp)  # converted differently in the test of an if or while

# Expressions script refuses, with what to write instead.
UNSUPPORTED_EXPRESSIONS = {
    ast.Yield: ("yield", "a generator runs step by step as it is consumed, a graph runs once: build and return a "
                         "list or tuple instead"),
    ast.YieldFrom: ("yield from", "build and return a list or tuple instead"),
    ast.Await: ("await", "script converts synchronous code only; await outside the scripted function"),
}


class DataDependent(Exception):
    """A tensor's value was needed as a Python value while converting (raised by the script's recorders)."""

    def __init__(self, tensor: Tensor, kind: str):
        super().__init__(kind)
        self.tensor, self.kind = tensor, kind


def is_tensor(x) -> bool:
    return isinstance(x, Tensor)


def methods_by_node_type(cls, prefix: str) -> dict[type, Callable]:
    """``{ast.BinOp: cls.expr_BinOp, ...}``: the methods of ``cls`` named ``prefix`` + an ``ast`` class name, by
    that class: the converter looks each node's method up here."""
    found = {}
    for name in dir(cls):
        node_type = getattr(ast, name[len(prefix):], None) if name.startswith(prefix) else None
        if isinstance(node_type, type):
            found[node_type] = getattr(cls, name)
    return found


class Expressions:
    """The expression half of the converter (``Converter`` in ``statements.py`` is the other half)."""

    expression_methods: dict[type, Callable] = {}
    """The ``expr_*`` method for each kind of expression node (filled in for ``Converter``)."""

    def expr(self, node: ast.expr, test: bool = False):
        """The value of ``node``: a stand-in tensor or a Python value. Errors become ``ScriptError``s with a
        caret under the innermost expression that failed."""
        self.root.loc = self.frame.locs[node.lineno]  # (what self.at(node) says)
        method = self.expression_methods.get(type(node))
        if method is None:
            what, hint = UNSUPPORTED_EXPRESSIONS.get(type(node), (type(node).__name__, "rewrite it with "
                                                                   "supported expressions"))
            raise self.fail(node, f"{what} is not supported by script()", hint, what)
        try:
            return method(self, node, test) if test and isinstance(node, _TEST_AWARE) else method(self, node)
        except (ScriptError, ControlSignal):
            raise
        except DataDependent as e:
            raise self.data_dependent(node, e) from None
        except Exception as e:
            raise self.fail(node, f"{type(e).__name__} while converting this expression: {e}",
                            "script() converts the expression as eager Python would run it; the same error would "
                            "stop eager code (or the value is not one a graph can hold)") from None

    def data_dependent(self, node: ast.AST, e: DataDependent) -> ScriptError:
        return self.fail(node, f"a tensor ({e.tensor.type}) is needed here as a Python {e.kind}, which is known "
                               f"only when the graph runs",
                         "keep it a tensor: use it in array operations, test it in an if or while (converted to "
                         "cond / while_loop), or select with np.where(cond, a, b)", "a data-dependent Python value")

    # --- names

    def expr_Name(self, node: ast.Name):
        # A variable of this frame is the commonest name by far: read it directly, else look it up in the
        # enclosing frames, the closure cells, the globals and the builtins (``lookup``, whose first step this is).
        value = self.frame.env.values.get(node.id, _MISSING)
        if value is _MISSING:
            value = self.lookup(node.id, node)
        if isinstance(value, Undefined):
            raise self.fail(node, f"{node.id} has no single value here: {value.reason}", value.hint,
                            f"reading {node.id}")
        return value

    def lookup(self, name: str, node: ast.AST):
        frame = self.frame
        while frame is not None:
            if name in frame.env.values:
                return frame.env.values[name]
            if name in frame.cells:
                return frame.cells[name]
            frame = frame.outer
        if name in self.frame.globals:
            return self.frame.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise self.fail(node, f"name {name!r} is not defined", f"define {name} before this line (script() reads "
                                                               f"the function's globals and closure)")

    # --- constants, containers, attributes, subscripts

    def expr_Constant(self, node: ast.Constant):
        return node.value

    def elements(self, nodes: list[ast.expr]) -> list:
        out = []
        for n in nodes:
            if isinstance(n, ast.Starred):
                out.extend(self.iterate(self.expr(n.value), n))
            else:
                out.append(self.expr(n))
        return out

    def expr_Tuple(self, node: ast.Tuple):
        return tuple(self.elements(node.elts))

    def expr_List(self, node: ast.List):
        return self.made(self.elements(node.elts))

    def expr_Set(self, node: ast.Set):
        return self.made(set(self.elements(node.elts)))

    def expr_Dict(self, node: ast.Dict):
        out = self.made({})
        for k, v in zip(node.keys, node.values):
            if k is None:
                out.update(self.expr(v))
            else:
                out[self.expr(k)] = self.expr(v)
        return out

    def expr_Attribute(self, node: ast.Attribute):
        return getattr(self.expr(node.value), node.attr)

    def expr_Subscript(self, node: ast.Subscript):
        return self.expr(node.value)[self.expr(node.slice)]

    def expr_Slice(self, node: ast.Slice):
        parts = [self.expr(p) if p is not None else None for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def expr_JoinedStr(self, node: ast.JoinedStr):
        parts = []
        for part in node.values:
            if not isinstance(part, ast.FormattedValue):
                parts.append(str(self.expr(part)))
                continue
            value = self.expr(part.value)
            if is_tensor(value):
                raise self.fail(node, "formatting a tensor into a string needs its value, known only when the graph "
                                      "runs", "return the tensor and format it after running the graph",
                                "a tensor in an f-string")
            value = {-1: value, 115: str(value), 114: repr(value), 97: ascii(value)}[part.conversion]
            parts.append(format(value, self.expr(part.format_spec) if part.format_spec is not None else ""))
        return "".join(parts)

    # --- operators

    def expr_BinOp(self, node: ast.BinOp):
        return BINARY[type(node.op)](self.expr(node.left), self.expr(node.right))

    def expr_UnaryOp(self, node: ast.UnaryOp, test: bool = False):
        value = self.expr(node.operand, test)
        if not isinstance(node.op, ast.Not):
            return UNARY[type(node.op)](value)
        if not is_tensor(value):
            return not value
        if test:
            return call_op(Op.LOGICAL_NOT, predicate(value, "the operand of not"))
        raise self.fail(node, "`not` of a tensor needs a Python bool, known only when the graph runs",
                        "write np.logical_not(x) (in an if or while test, `not` is converted for you)",
                        "not of a tensor")

    def expr_Compare(self, node: ast.Compare, test: bool = False):
        left, result = self.expr(node.left), None
        for op, right_node in zip(node.ops, node.comparators):
            if result is not None and not is_tensor(result) and not result:
                return result  # Python stops a chain at the first false link
            right = self.expr(right_node)
            link = COMPARE[type(op)](left, right)
            result = link if result is None else self.combine(node, "and", result, link, test)
            left = right
        return result

    def expr_BoolOp(self, node: ast.BoolOp, test: bool = False):
        word = "and" if isinstance(node.op, ast.And) else "or"
        result = self.expr(node.values[0], test)
        for value_node in node.values[1:]:
            if not is_tensor(result) and (not result if word == "and" else result):
                return result  # Python's short circuit, decided while converting
            result = self.combine(node, word, result, self.expr(value_node, test), test)
        return result

    def combine(self, node: ast.AST, word: str, left, right, test: bool):
        """``left and right`` / ``left or right`` when one side is a tensor: a logical op in a test."""
        if not is_tensor(left) and not is_tensor(right):
            return (left and right) if word == "and" else (left or right)
        if not test:
            fn = "logical_and" if word == "and" else "logical_or"
            raise self.fail(node, f"`{word}` between tensors needs a Python bool, known only when the graph runs",
                            f"write np.{fn}(a, b) (in an if or while test, `{word}` is converted for you)",
                            f"{word} of tensors")
        op = Op.LOGICAL_AND if word == "and" else Op.LOGICAL_OR
        where = f"an operand of {word}"
        return call_op(op, predicate(left, where), predicate(right, where))

    def expr_IfExp(self, node: ast.IfExp):
        test = self.expr(node.test, test=True)
        if not is_tensor(test):
            return self.expr(node.body) if test else self.expr(node.orelse)
        return self.convert_ifexp(node, test)

    # --- functions and comprehensions

    def expr_Lambda(self, node: ast.Lambda):
        return self.make_function(node, "<lambda>")

    def expr_NamedExpr(self, node: ast.NamedExpr):
        value = self.expr(node.value)
        self.frame.env.assign(node.target.id, value, node)
        return value

    def expr_Call(self, node: ast.Call):
        return self.call(node)

    def comprehension(self, node, generators: list[ast.comprehension], emit) -> None:
        outer = self.frame.env
        self.frame.env = outer.copy()
        try:
            self._generate(generators, emit)
        finally:
            self.frame.env = outer

    def _generate(self, generators, emit) -> None:
        if not generators:
            emit()
            return
        gen = generators[0]
        for item in self.iterate(self.expr(gen.iter), gen.iter):
            self.bind(gen.target, item, gen)
            if all(self.truth(self.expr(cond, test=True), cond) for cond in gen.ifs):
                self._generate(generators[1:], emit)

    def expr_ListComp(self, node: ast.ListComp):
        out = self.made([])
        self.comprehension(node, node.generators, lambda: out.append(self.expr(node.elt)))
        return out

    def expr_GeneratorExp(self, node: ast.GeneratorExp):
        return iter(self.expr_ListComp(node))  # evaluated now: a graph has no lazy sequences

    def expr_SetComp(self, node: ast.SetComp):
        return self.made(set(self.expr_ListComp(node)))

    def expr_DictComp(self, node: ast.DictComp):
        out = self.made({})
        self.comprehension(node, node.generators,
                           lambda: out.__setitem__(self.expr(node.key), self.expr(node.value)))
        return out

    # --- Python values needed while converting

    def made(self, container):
        """Note a container the scripted code made itself: only those may be changed in place while converting
        (changing one from outside would be a side effect that happens once now, not when the graph runs)."""
        self.created[id(container)] = container
        return container

    def truth(self, value, node: ast.AST) -> bool:
        """A Python bool known now; a tensor here (a comprehension's if) is refused."""
        if is_tensor(value):
            raise self.fail(node, "this condition is on tensor data, known only when the graph runs",
                            "only the test of an if, while or conditional expression is converted to control "
                            "flow; select with np.where here", "a tensor condition in a comprehension")
        return bool(value)

    def iterate(self, value, node: ast.AST) -> list:
        """The items of something iterated while converting (a loop is unrolled over them)."""
        if type(value) is list or type(value) is tuple:  # the commonest (layers, weights), told first
            return list(value)
        if is_tensor(value) and value.ndim == 0:
            raise self.fail(node, "iteration over a 0-d tensor", "index it instead", "iterating a 0-d tensor")
        if isinstance(value, np.ndarray) or is_tensor(value) or isinstance(value, (list, tuple, range, dict, str,
                                                                                    set, zip, enumerate)):
            return list(value)
        if hasattr(value, "__next__"):
            return list(value)
        raise self.fail(node, f"iteration over a {type(value).__name__}", "iterate over a range, a list, a tuple, "
                                                                          "a dict or an array", "iteration")
