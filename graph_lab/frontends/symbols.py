"""What user code holds during a symbolic capture: ``x.shape`` gives ``SymInt``\\ s, and Python arithmetic on them
builds size expressions instead of numbers (``T * 2``, ``d // 2``, ``1.0 / d ** 0.5``).

Where a size flows decides what happens to it:

- into an op attribute (``x.reshape(T, 2, d // 2)``, ``x[:T - 1]``, ``F.split(x, 2)``): stored as an expression,
  bound from the inputs when the graph runs;
- into a tensor operation as a number (``x / T``, ``np.sqrt(d)``): a ``size`` node computes it at run time;
- into a comparison or ``if`` (``if T > 1:``): decided by the shape environment, proved or guarded;
- into something that needs a Python int or float now (``range(T)``, ``math.sqrt(d)``, ``np.zeros((T, 4))``):
  specialized: the example's size is used and guarded ``T == 5``, or, with no example, a ``TraceError`` says how
  to keep it symbolic.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpError, TraceError
from ..ir.relations import relation
from ..ir.symbolic import Expr, FloatExpr, SizeTooComplex, SymbolicValue, float_op, free_symbols, mul, symbol

_INT_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
            "//": lambda a, b: a // b, "%": lambda a, b: a % b}


def _run(env, what: str, fn):
    """Call ``fn`` with the user's line as the place of any guard it records; an OpError becomes a TraceError."""
    loc = env.here()
    env.loc = loc
    try:
        return fn()
    except (OpError, ZeroDivisionError, SizeTooComplex) as e:
        raise TraceError(f"{what}: {e}\n  at {loc.describe() if loc else 'unknown location'}") from None


def wrap(value, env):
    """A plain int stays an int; an expression becomes a SymInt or SymFloat bound to ``env``."""
    if isinstance(value, Expr):
        return SymInt(value, env)
    if isinstance(value, FloatExpr):
        return SymFloat(value, env)
    return value


# Only Python numbers join a size expression. A NumPy scalar is not weak in NumPy's promotion (T * np.float32(0.5)
# is a float32), so the operator returns NotImplemented and NumPy records it as a tensor operation on a size node.

def _int_operand(x):
    if isinstance(x, SymInt):
        return x.expr
    return x if type(x) is int else None


def _float_operand(x):
    if isinstance(x, (SymInt, SymFloat)):
        return x.expr
    return x if type(x) is float else _int_operand(x)


class _SymbolicNumber(SymbolicValue):
    __slots__ = ("expr", "env")
    __hash__ = None  # == decides a fact (and records a guard), so a size is not a dict key

    def __init__(self, expr, env):
        self.expr = expr
        """The expression (``Expr`` or ``FloatExpr``)."""
        self.env = env
        """The ShapeEnv of the capture that made it."""

    def __repr__(self) -> str:
        return str(self.expr)

    def __format__(self, spec: str) -> str:
        return str(self.expr) if not spec else format(self._concrete(), spec)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """``np.sqrt(d)``: the sizes become ``size`` nodes of the capture, and the ufunc is recorded on them."""
        recorder = self.env.recorder
        if recorder is None:
            return NotImplemented
        args = [recorder.size_tensor(x.expr) if isinstance(x, _SymbolicNumber) else x for x in inputs]
        return getattr(ufunc, method)(*args, **kwargs)

    def _float_op(self, op: str, a, b):
        if a is None or b is None:
            return NotImplemented
        return SymFloat(float_op(op, a, b), self.env)

    def __truediv__(self, o): return self._float_op("/", self.expr, _float_operand(o))
    def __rtruediv__(self, o): return self._float_op("/", _float_operand(o), self.expr)


class SymInt(_SymbolicNumber):
    """A size while capturing: ``T``, ``2*T``, ``d//2``. Stands in for the ``int`` eager code would see."""

    __slots__ = ()

    def _int_op(self, op: str, other, reflected: bool = False):
        o = _int_operand(other)
        if o is None:
            f = _float_operand(other)
            if f is None:
                return NotImplemented
            return self._float_op(op, f, self.expr) if reflected else self._float_op(op, self.expr, f)
        a, b = (o, self.expr) if reflected else (self.expr, o)
        return wrap(_run(self.env, f"{a} {op} {b}", lambda: _INT_OPS[op](a, b)), self.env)

    def __add__(self, o): return self._int_op("+", o)
    def __radd__(self, o): return self._int_op("+", o, True)
    def __sub__(self, o): return self._int_op("-", o)
    def __rsub__(self, o): return self._int_op("-", o, True)
    def __mul__(self, o): return self._int_op("*", o)
    def __rmul__(self, o): return self._int_op("*", o, True)
    def __floordiv__(self, o): return self._int_op("//", o)
    def __rfloordiv__(self, o): return self._int_op("//", o, True)
    def __mod__(self, o): return self._int_op("%", o)
    def __rmod__(self, o): return self._int_op("%", o, True)
    def __divmod__(self, o): return self // o, self % o
    def __neg__(self): return wrap(mul(self.expr, -1), self.env)
    def __pos__(self): return self

    def __abs__(self):
        return self if self >= 0 else -self

    # Bit operations have no size expression: the int is specialized (guarded), as for ``range(n)``. (A Python int
    # that compile() made a symbol, ``crc & 1``, then gets a graph per value, as it would have without it.)
    def __and__(self, o): return int(self) & o
    def __rand__(self, o): return o & int(self)
    def __or__(self, o): return int(self) | o
    def __ror__(self, o): return o | int(self)
    def __xor__(self, o): return int(self) ^ o
    def __rxor__(self, o): return o ^ int(self)
    def __lshift__(self, o): return int(self) << o
    def __rlshift__(self, o): return o << int(self)
    def __rshift__(self, o): return int(self) >> o
    def __rrshift__(self, o): return o >> int(self)
    def __invert__(self): return ~int(self)

    def __pow__(self, o):
        if isinstance(o, SymInt):  # an int or a float depending on the sign of the exponent: specialize it
            o = int(o)
        n = _int_operand(o)
        if type(n) is int and n >= 0:
            return wrap(self.expr ** n, self.env)
        return self._float_op("**", self.expr, _float_operand(o))

    def __rpow__(self, o):
        if _int_operand(o) is not None:
            return o ** int(self)  # an int to a symbolic power: the exponent is specialized, as above
        return self._float_op("**", _float_operand(o), self.expr)

    # --- facts: a comparison is decided now (proved, or guarded with the example's outcome)

    def _compare(self, op: str, other) -> bool:
        o = _int_operand(other)
        if o is None:
            if isinstance(other, (float, SymFloat)):
                return _COMPARE[op](float(self), float(other))
            return NotImplemented
        fact = relation(op, self.expr, o)
        return _run(self.env, f"comparing sizes ({self.expr} {op} {o})", lambda: self.env.decide(fact, "the outcome"))

    def __eq__(self, o): return self._compare("==", o)
    def __ne__(self, o): return self._compare("!=", o)
    def __lt__(self, o): return self._compare("<", o)
    def __le__(self, o): return self._compare("<=", o)
    def __gt__(self, o): return self._compare(">", o)
    def __ge__(self, o): return self._compare(">=", o)

    def __bool__(self) -> bool:
        return self._compare("!=", 0)

    # --- a Python int is needed now: specialize to the example's size, with a guard

    def _concrete(self) -> int:
        return _run(self.env, f"the size {self.expr} is used as a Python int (range, len, np.zeros, math, ...)",
                    lambda: self.env.specialize(self.expr, "specializing it"))

    def __index__(self) -> int:
        return self._concrete()

    __int__ = __index__

    def __float__(self) -> float:
        return float(self._concrete())

    def __round__(self, ndigits=None):
        return self

    __trunc__ = __floor__ = __ceil__ = __pos__


class SymFloat(_SymbolicNumber):
    """A float computed from sizes while capturing: ``1.0/d**0.5``. Stands in for eager code's Python float."""

    __slots__ = ()

    def _op(self, op: str, other, reflected: bool = False):
        o = _float_operand(other)
        if o is None:
            return NotImplemented
        return self._float_op(op, o, self.expr) if reflected else self._float_op(op, self.expr, o)

    def __add__(self, o): return self._op("+", o)
    def __radd__(self, o): return self._op("+", o, True)
    def __sub__(self, o): return self._op("-", o)
    def __rsub__(self, o): return self._op("-", o, True)
    def __mul__(self, o): return self._op("*", o)
    def __rmul__(self, o): return self._op("*", o, True)
    def __floordiv__(self, o): return self._op("//", o)
    def __rfloordiv__(self, o): return self._op("//", o, True)
    def __mod__(self, o): return self._op("%", o)
    def __rmod__(self, o): return self._op("%", o, True)
    def __pow__(self, o): return self._op("**", o)
    def __rpow__(self, o): return self._op("**", o, True)
    def __neg__(self): return SymFloat(float_op("neg", self.expr), self.env)
    def __pos__(self): return self

    def _concrete(self) -> float:
        """A Python float needed now: every size in it specialized to the example's, with guards."""
        def specialize():
            sizes = {name: self.env.specialize(symbol(name), "specializing it")
                     for name in sorted(free_symbols(self.expr))}
            return self.expr.evaluate(sizes)
        return _run(self.env, f"the number {self.expr} is needed as a Python float", specialize)

    def __float__(self) -> float:
        return self._concrete()

    def __bool__(self) -> bool:
        return bool(self._concrete())

    def _compare(self, op: str, other):
        if not isinstance(other, (int, float, np.number, SymInt, SymFloat)):
            return NotImplemented
        return _COMPARE[op](self._concrete(), float(other))

    def __eq__(self, o): return self._compare("==", o)
    def __ne__(self, o): return self._compare("!=", o)
    def __lt__(self, o): return self._compare("<", o)
    def __le__(self, o): return self._compare("<=", o)
    def __gt__(self, o): return self._compare(">", o)
    def __ge__(self, o): return self._compare(">=", o)


_COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
