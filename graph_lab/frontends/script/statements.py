"""Converting statements: the ``Converter`` walks a function's body as Python would run it, but never runs it.

Python control flow on values known while converting (``if x.ndim == 2``, ``for layer in layers``,
``for i in range(3)``) is decided now: the branch taken is converted, the loop is unrolled. Control flow on tensor
data becomes a control-flow node (``branches.py``). Each block is converted with ``rest``: the statements that
follow it up to the end of the function, which a branch that returns early takes with it (``if c: return a`` then
``return b`` is ``cond(c) {return a} {return b}``); ``rest`` is None inside loops, where an early return on tensor
data is refused.
"""

from __future__ import annotations

import ast
import operator

from ...errors import ScriptError
from ..tensor import Tensor
from .branches import Branches
from .calls import Calls
from .expressions import BINARY, Expressions, is_tensor, methods_by_node_type
from .values import Break, ControlSignal, Continue, Return

MAX_UNROLL = 10_000
"""Most iterations of a loop unrolled while converting."""

INPLACE = {ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul, ast.Div: operator.itruediv,
           ast.FloorDiv: operator.ifloordiv, ast.Mod: operator.imod, ast.Pow: operator.ipow,
           ast.MatMult: operator.imatmul, ast.BitAnd: operator.iand, ast.BitOr: operator.ior,
           ast.BitXor: operator.ixor, ast.LShift: operator.ilshift, ast.RShift: operator.irshift}

# Statements script refuses: what the construct is, and what to write instead.
UNSUPPORTED_STATEMENTS = {
    ast.Try: ("a try statement", "a graph cannot catch errors: check inputs before calling it, or compute both "
                                 "results and select with np.where"),
    ast.With: ("a with statement", "a context manager runs code on entry and exit, which a graph cannot hold: "
                                   "move the with block outside the scripted function"),
    ast.Global: ("a global statement", "a graph cannot write Python globals: return the value instead"),
    ast.Nonlocal: ("a nonlocal statement", "return the value instead of writing an enclosing function's "
                                           "variable"),
    ast.ClassDef: ("a class definition", "define the class outside the scripted function"),
    ast.Import: ("an import", "import at the top of the module"),
    ast.ImportFrom: ("an import", "import at the top of the module"),
    ast.AsyncFunctionDef: ("async code", "script() converts synchronous code only"),
    ast.AsyncFor: ("async code", "script() converts synchronous code only"),
    ast.AsyncWith: ("async code", "script() converts synchronous code only"),
    ast.Match: ("a match statement", "write it with if / elif / else"),
}
if hasattr(ast, "TryStar"):
    UNSUPPORTED_STATEMENTS[ast.TryStar] = UNSUPPORTED_STATEMENTS[ast.Try]


class Converter(Expressions, Calls, Branches):
    """Converts one function (and what it calls) into the graph of ``root``, a script recorder."""

    statement_methods: dict = {}
    """The ``stmt_*`` method for each kind of statement node (filled in below the class)."""

    def __init__(self, root, loops: str, read_source):
        self.root = root
        """The script's recorder: the top-level graph."""
        self.read_source = read_source
        """``fn`` -> its ``FunctionSource``, for each function the script calls."""
        self.loops = loops
        """What ``for i in range(n)`` with a known ``n`` becomes: "unroll" or "fori" (a fori_loop node)."""
        self.frame = None
        self.call_depth = 0
        self.created: dict[int, object] = {}
        """Containers the scripted code made (by id): the only ones it may change in place."""
        self.aliased: dict[int, Tensor] = {}
        """Outputs of converted ifs and loops that eager code may share with an array from before them (on some
        paths): writing into one in place is refused."""

    @property
    def rec(self):
        """The capture new nodes go to: the innermost region being converted, else the top-level graph."""
        return self.root.innermost()

    def at(self, node: ast.AST) -> None:
        """Nodes made from now on carry the line of ``node``."""
        self.root.loc = self.frame.locs[node.lineno]

    def fail(self, node: ast.AST, message: str, hint: str, construct: str = "") -> ScriptError:
        return self.frame.source.error(node, message, hint, construct)

    def run_frame(self, frame, body, expression: ast.expr | None = None):
        """Convert a function's body (or a lambda's expression) in ``frame``; returns what it returns."""
        outer, self.frame = self.frame, frame
        self.call_depth += 1
        try:
            if expression is not None:
                return self.expr(expression)
            try:
                self.block(body, [])
            except Return as r:
                return r.value
            return None
        finally:
            self.frame = outer
            self.call_depth -= 1

    # --- blocks and statements

    def block(self, stmts: list[ast.stmt], rest: list[ast.stmt] | None) -> None:
        for i, stmt in enumerate(stmts):
            self.statement(stmt, None if rest is None else stmts[i + 1:] + rest)

    def statement(self, node: ast.stmt, after: list[ast.stmt] | None) -> None:
        self.root.loc = self.frame.locs[node.lineno]  # (what self.at(node) says)
        method = self.statement_methods.get(type(node))
        if method is None:
            what, hint = UNSUPPORTED_STATEMENTS.get(type(node), (type(node).__name__, "rewrite it with assignments, "
                                                                                    "if, while and for"))
            raise self.fail(node, f"{what} is not supported by script()", hint, what)
        try:
            method(self, node, after)
        except (ScriptError, ControlSignal):
            raise
        except Exception as e:  # a failure outside any expression (binding, unpacking): point at the statement
            raise self.fail(node, f"{type(e).__name__} while converting this statement: {e}",
                            "the same error would stop eager Python here") from None

    def stmt_Expr(self, node: ast.Expr, after) -> None:
        self.expr(node.value)

    def stmt_Pass(self, node, after) -> None:
        pass

    def stmt_Assign(self, node: ast.Assign, after) -> None:
        value = self.expr(node.value)
        for target in node.targets:
            self.bind(target, value, node)

    def stmt_AnnAssign(self, node: ast.AnnAssign, after) -> None:
        if node.value is not None:
            self.bind(node.target, self.expr(node.value), node)

    def stmt_AugAssign(self, node: ast.AugAssign, after) -> None:
        op = INPLACE[type(node.op)]
        target = node.target
        if isinstance(target, ast.Name):
            current = self.expr(target)
            if isinstance(current, Tensor) and current.ndim == 0:
                # A 0-d value is a NumPy or Python scalar in eager code (x.sum(), a counter): immutable, so
                # `n += 1` makes a new value there, never a write in place.
                op = BINARY[type(node.op)]
            self.check_container_write(current, node)
            self.frame.env.assign(target.id, op(current, self.expr(node.value)), node)
        elif isinstance(target, ast.Subscript):
            container, key = self.expr(target.value), self.expr(target.slice)
            value = self.expr(node.value)
            self.check_container_write(container, node)
            container[key] = op(container[key], value)
        else:
            self.bind(target, None, node)  # refused there, with the reason

    def stmt_Delete(self, node: ast.Delete, after) -> None:
        for target in node.targets:
            if not isinstance(target, ast.Name):
                raise self.fail(target, "del of anything but a variable", "build a new container instead",
                                "del of an item")
            self.frame.env.values.pop(target.id, None)

    def bind(self, target: ast.expr, value, node: ast.AST) -> None:
        """Assign ``value`` to an assignment target, as Python does."""
        if isinstance(target, ast.Name):
            self.frame.env.assign(target.id, value, node)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self.iterate(value, target)
            starred = [i for i, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            if starred:
                i = starred[0]
                tail = len(target.elts) - i - 1
                items = items[:i] + [list(items[i:len(items) - tail])] + items[len(items) - tail:]
            if len(items) != len(target.elts):
                raise self.fail(target, f"cannot unpack {len(items)} values into {len(target.elts)} names",
                                "unpack into as many names as there are values", "unpacking")
            for t, item in zip(target.elts, items):
                self.bind(t.value if isinstance(t, ast.Starred) else t, item, node)
        elif isinstance(target, ast.Subscript):
            container, key = self.expr(target.value), self.expr(target.slice)
            self.check_container_write(container, node)
            container[key] = value
        else:
            raise self.fail(target, "assignment to an attribute: a change to an object outside the graph, which a "
                                    "graph cannot make", "return the value instead of storing it on an object",
                            "attribute assignment")

    def check_container_write(self, container, node: ast.AST) -> None:
        """Writes in place that a graph cannot replay as eager code would are refused here, with the reason."""
        if isinstance(container, Tensor) and id(container) in self.aliased:
            raise self.fail(node, "writing in place into an array that, after a converted if or loop, may be the "
                                  "same array as one from before it (on the paths that passed it through); eager "
                                  "code would change both, a graph only this one",
                            "copy it first (y = y.copy()), or assign a new value (y = y + 1)", "an aliased write")
        if not isinstance(container, (list, dict, set)):
            return
        kind = type(container).__name__
        if id(container) not in self.created:
            raise self.fail(node, f"changing a {kind} the scripted function did not make: a side effect that would "
                                  f"happen once now, while converting, and never when the graph runs",
                            f"make a new {kind} inside the function, or return the values instead",
                            f"a side effect on a {kind}")
        if self.rec.depth > self.root.depth:
            raise self.fail(node, f"changing a {kind} inside a converted branch or loop: each branch and one loop "
                                  f"iteration are converted once, so the change would not happen per run",
                            f"build the {kind} after the if or loop, from the values it gives",
                            f"a {kind} changed in a region")

    def stmt_Return(self, node: ast.Return, after) -> None:
        raise Return(self.expr(node.value) if node.value is not None else None, node)

    def stmt_Break(self, node: ast.Break, after) -> None:
        raise Break(node)

    def stmt_Continue(self, node: ast.Continue, after) -> None:
        raise Continue(node)

    def stmt_FunctionDef(self, node: ast.FunctionDef, after) -> None:
        if node.decorator_list:
            raise self.fail(node.decorator_list[0], "a decorated function inside the scripted function",
                            "define it without the decorator, or outside", "a decorator")
        self.frame.env.assign(node.name, self.make_function(node, node.name), node)

    def stmt_Assert(self, node: ast.Assert, after) -> None:
        test = self.expr(node.test, test=True)
        if is_tensor(test):
            raise self.fail(node, "assert on tensor data: a graph cannot raise when it runs",
                            "check the condition on the outputs after running the graph, or remove the assert",
                            "an assert on a tensor")
        if not test:
            message = f": {self.expr(node.msg)}" if node.msg is not None else ""
            raise self.fail(node, f"the assertion fails for these shapes and types{message}",
                            "script the function for inputs it accepts", "a failing assert")

    def stmt_Raise(self, node: ast.Raise, after) -> None:
        inside = self.rec.depth > self.root.depth
        raise self.fail(node, "raise " + ("under a condition on tensor data: a graph cannot raise when it runs"
                                          if inside else "reached while converting: the function raises for any "
                                                         "input of these shapes and types"),
                        "check the condition outside the graph, or select a fallback value with np.where"
                        if inside else "script the function for inputs it accepts", "raise")

    def stmt_If(self, node: ast.If, after) -> None:
        test = self.expr(node.test, test=True)
        if is_tensor(test):
            self.convert_if(node, test, after)
        else:
            self.block(node.body if test else node.orelse, after)

    def stmt_While(self, node: ast.While, after) -> None:
        for count in range(MAX_UNROLL + 1):
            test = self.expr(node.test, test=True)
            if is_tensor(test):
                if count:
                    raise self.fail(node.test, f"the loop condition became a tensor after {count} iterations "
                                               f"converted as Python", "make it a tensor from the start (or keep "
                                                                       "it a Python value)", "a changing condition")
                self.convert_while(node, test)
                return
            if not test:
                self.block(node.orelse, None)
                return
            if self.loop_body(node):
                return
        raise self.fail(node, f"the loop ran more than {MAX_UNROLL} iterations while converting",
                        "make its condition a tensor (it becomes a while_loop node)", "a long Python loop")

    def stmt_For(self, node: ast.For, after) -> None:
        bounds = self.range_call(node.iter) if isinstance(node.iter, ast.Call) else None
        if bounds is not None:
            start, stop, step = bounds
            on_data = any(is_tensor(b) for b in bounds)
            if on_data and (is_tensor(step) or step != 1):
                raise self.fail(node.iter, "range with a step and a bound on tensor data",
                                "loop with a step of 1 (for i in range(n)) and compute the index from i",
                                "a stepped range on tensor data")
            if on_data or (self.loops == "fori" and step == 1):
                self.convert_for_range(node, start, stop)
                return
            items = range(start, stop, step)
        else:
            items = self.iterate(self.expr(node.iter), node.iter)
        if len(items) > MAX_UNROLL:
            raise self.fail(node, f"the loop has {len(items)} iterations, more than the {MAX_UNROLL} script() "
                                  f"unrolls", "pass loops='fori' to script() to make it a fori_loop node",
                            "a long loop")
        for item in items:
            self.bind(node.target, item, node)
            if self.loop_body(node):
                return
        if node.orelse:
            self.block(node.orelse, None)

    def loop_body(self, node) -> bool:
        """Convert one iteration of an unrolled loop; True when it ended with ``break``."""
        try:
            self.block(node.body, None)
        except Continue:
            return False
        except Break:
            return True
        return False

    def range_call(self, node: ast.expr) -> tuple | None:
        """The evaluated ``(start, stop, step)`` of a ``range(...)`` call; None for any other iterable."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords
                and 1 <= len(node.args) <= 3 and self.lookup(node.func.id, node) is range):
            return None
        args = [self.expr(a) for a in node.args]
        if len(args) == 1:
            return 0, args[0], 1
        return (args[0], args[1], 1) if len(args) == 2 else tuple(args)


Converter.expression_methods = methods_by_node_type(Converter, "expr_")
Converter.statement_methods = methods_by_node_type(Converter, "stmt_")
