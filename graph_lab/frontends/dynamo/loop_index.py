"""The loop variable of a loop that may become a region: ``i`` of ``for i in range(1, n - 1)``, read by the body.

A region runs one body for every iteration, so the body may depend on ``i`` only through values of the graph:
``A[i, 1:-1]`` and ``A[i - 1, :-2]`` index with an int the graph receives (an ``At`` operand of the ``index``
node, NumPy's integer indexing when it runs), ``x * i`` computes with it. A use of ``i`` that decides how the
graph is *built* (``range(i)``, ``A[i, :i]`` whose length changes, ``if i == 5``, ``np.zeros(i)``) cannot be in
one body: the loop stays unrolled.

How the two are told apart: while iteration 1 is captured, the loop variable's Var has a ``LoopSource``, so the
capture treats it as it treats a number read from the inputs. Arithmetic on it is done now and remembered as a
``DerivedSource`` (``i - 1``); every use of such a number by Python code or NumPy at capture time guards it, and
that guard is where a use that shapes the graph is seen (``note_python_use``): it makes the loop stay unrolled,
with the reason. The uses that become graph values instead are the ones below (``index_key``, ``operand``).
Capture goes on with the real number either way, so iteration 1's nodes are right whether the loop is kept or
not: ``i``'s graph value is a constant node holding iteration 1's item, which ``loop_regions`` makes the body's
input ``i`` (and the last iteration's item in the graph around the region).

An int index must mean the same thing at every iteration the region runs: it is computed now for every item of
the range, and must be an int (not a bool, which NumPy reads as a mask) within the axis (``-n <= v < n``; a
negative index counts from the end at run time too). An index out of range at some iteration, where eager NumPy
raises IndexError, keeps the loop unrolled, so that the error is raised where eager raises it.
"""

from __future__ import annotations

import operator

from ...ops import Op, opdef
from ...ops.indexing import At, IntIndex, Slice, Slot, Span
from ..tensor import Tensor
from .frame import Var
from .sources import Const, DerivedSource, Source

_INT_ARITHMETIC = {operator.add: operator.add, operator.sub: operator.sub, operator.mul: operator.mul,
                   operator.floordiv: operator.floordiv, operator.mod: operator.mod, operator.neg: operator.neg,
                   operator.pos: operator.pos, operator.iadd: operator.add, operator.isub: operator.sub,
                   operator.imul: operator.mul, operator.ifloordiv: operator.floordiv, operator.imod: operator.mod}
"""Python arithmetic on the loop variable that its graph value can do too (the in-place forms as ``j += 1`` on an
int means them). The results are int64 values of the graph, the same ints as an index: each is computed now for
every item, and kept within ``_EXACT`` so that int64 arithmetic gives Python's exact result."""

_EXACT = 2 ** 62


class LoopSource(Source):
    """Where the loop variable's value at iteration 1 comes from: the loop (``watcher``, its ``RangeIterator``).
    Equal only to itself. ``fetch`` gives that value: a guard on it holds on every call, since the range it is an
    item of is itself guarded (and once a guard is made, the loop is unrolled: ``note_python_use``)."""

    def __init__(self, watcher, name: str, value: int):
        self.watcher, self.name, self.value = watcher, name, value
        self.root: Tensor | None = None
        """The graph value of ``i``: a constant node holding ``value``, made at the first use."""

    def fetch(self, inputs):
        return self.value

    def describe(self) -> str:
        return self.name


def loop_variable(ctx, watcher, var: Var) -> Var:
    """The Var the loop's variable is given at iteration 1: its item, with a ``LoopSource``."""
    ctx.loop_variables += 1
    return Var(var.value, LoopSource(watcher, watcher.variable, var.value))


def _leaves(source, out: list) -> list:
    if type(source) is DerivedSource:
        for a in source.args:
            if isinstance(a, Source):
                _leaves(a, out)
    else:
        out.append(source)
    return out


def loop_sources(source) -> list[LoopSource]:
    """The loop variables ``source`` was computed from."""
    if type(source) is LoopSource:
        return [source]
    if type(source) is not DerivedSource:
        return []
    return [s for s in _leaves(source, []) if type(s) is LoopSource]


def note_python_use(ctx, var: Var) -> bool:
    """``var`` (guarded now) is used by Python or NumPy at capture: if it comes from a loop variable, that loop
    stays unrolled (CaptureContext.guard calls this). True when ``var`` is computed from loop variables and
    constants only: a number the loop's range decides, and the range is guarded, so it needs no guard itself."""
    loops = loop_sources(var.source)
    for loop in loops:
        text = var.source.describe()
        used = f"'{text}'" if text == loop.name else f"'{text}', computed from it,"
        loop.watcher.refuse(f"the loop variable {loop.name!r} is read and {used} is used by Python code at "
                            f"line {ctx.loc().lineno}, which may build each iteration's graph differently "
                            f"(a range, a slice length, a branch, a shape); only a loop whose body uses it as a "
                            f"graph value (an index, a number in array arithmetic) is kept as a region")
    return bool(loops) and all(type(s) is LoopSource for s in _leaves(var.source, []))


def _only_loop(source) -> LoopSource | None:
    """The one loop variable ``source`` is computed from by ``_INT_ARITHMETIC`` and constants, else None."""
    leaves = _leaves(source, [])
    if not leaves or any(type(s) is not LoopSource for s in leaves) or len(set(map(id, leaves))) != 1:
        return None
    if not _int_arithmetic(source):
        return None
    return leaves[0]


def _int_arithmetic(source) -> bool:
    if type(source) is LoopSource:
        return True
    return source.fn in _INT_ARITHMETIC and all(_int_arithmetic(a) for a in source.args if isinstance(a, Source))


def values_at(source, items: list) -> list:
    """The value of ``source`` at each item of the loop; raises ArithmeticError or ValueError where Python's
    arithmetic fails or leaves the exact range (the loop then stays unrolled)."""
    return [_evaluate(source, item) for item in items]


def _evaluate(source, item):
    if type(source) is LoopSource:
        return item
    args = [_evaluate(a, item) if isinstance(a, Source) else a.value for a in source.args]
    value = _INT_ARITHMETIC[source.fn](*args)
    if type(value) is not int or not -_EXACT < value < _EXACT:
        raise ValueError(f"{source.describe()} is {value!r} at {item}")
    return value


def graph_value(ctx, source) -> Tensor:
    """The graph value of a number computed from the loop variable: ``i``'s constant node, then the arithmetic
    on it recorded as graph operations (a new node for each use, so that an inner loop's body computes its own)."""
    if type(source) is LoopSource:
        if source.root is None:
            source.root = Tensor(ctx.recorder, ctx.recorder.const(source.value, ctx.loc()))
            source.watcher.root = source.root._value
            ctx.loop_roots.add(id(source.root._value.node))
        return source.root
    args = [graph_value(ctx, a) if isinstance(a, Source) else a.value for a in source.args]
    return _INT_ARITHMETIC[source.fn](*args)


def _usable(ctx, var: Var) -> LoopSource | None:
    """The loop ``var``'s number may be a graph value of: computed from one loop variable only, by int
    arithmetic, the loop still watched; else None."""
    if not ctx.loop_variables or var.source is None or type(var.value) is not int:
        return None
    loop = _only_loop(var.source)
    return loop if loop is not None and loop.watcher.refused is None and loop.watcher.ctx is ctx else None


def operand(ctx, var: Var):
    """``var`` as an operand of an array operation (``x * i``), or None when it is not from a loop variable.
    ``i`` itself is its graph value, a Python int when the graph runs, weak in NumPy's promotion as eager's int
    is. A number computed from it (``i - 1``) would be an int64 of the graph, which NumPy promotes differently
    (``float32 * int64`` is float64): the loop stays unrolled, and the number is a constant of the graph."""
    loops = loop_sources(var.source) if ctx.loop_variables and var.source is not None else []
    if not loops:
        return None
    if type(var.source) is LoopSource and _usable(ctx, var) is not None:
        return graph_value(ctx, var.source)
    for loop in loops:
        loop.watcher.refuse(f"'{var.source.describe()}', computed from the loop variable {loop.name!r}, is a "
                            f"number in array arithmetic at line {ctx.loc().lineno}; only the loop variable "
                            f"itself is (a Python int, which NumPy promotes as eager does)")
    if any(type(s) is not LoopSource for s in _leaves(var.source, [])):
        return None  # (computed from the inputs too, ``i + n``: a graph input, as any number read from them)
    return var.value  # (a number the guarded range decides)


def slice_of(parts: list[Var]) -> Var | None:
    """``a:b`` or ``a:b:c`` with a bound computed from a loop variable: a slice whose source says so (a use of it
    by Python code is seen when it is guarded, as for the numbers); None when no bound is."""
    if not any(loop_sources(p.source) for p in parts if p.source is not None):
        return None
    args = tuple(p.source if p.source is not None else Const(p.value) for p in parts)
    text = ":".join("" if p.source is None and p.value is None else "{%d}" % k for k, p in enumerate(parts))
    return Var(slice(*[p.value for p in parts]), DerivedSource(slice, args, text))


def _span(ctx, tensor: Tensor, var: Var, axis: int) -> IntIndex | None:
    """``tensor[..., a:b, ...]`` along ``axis`` with ``a`` from the loop variable: the ``Span`` ``a : a + L``
    when at every item of the range NumPy's slice ``a:b`` is those ``L`` items; else None, with the loop
    refused."""
    start, stop = var.source.args[0], var.source.args[1]
    step = var.source.args[2] if len(var.source.args) == 3 else Const(None)
    where = f"the slice {var.source.describe()!r} (axis {axis} of {tensor.type}) at line {ctx.loc().lineno}"
    start_var = Var(var.value.start, start if isinstance(start, Source) else None)
    loop = _usable(ctx, start_var) if isinstance(start, Source) else None
    if loop is None or not isinstance(step, Const) or step.value not in (None, 1):
        for other in loop_sources(var.source):
            other.watcher.refuse(f"{where} is not a slice a:b of a fixed length whose start a is computed from the "
                                 f"loop variable {other.name!r} (its length may change with it)")
        return None
    n = tensor.type.shape[axis]
    items = [item.value for item in loop.watcher.items]
    try:
        starts = values_at(start, items)
        stops = values_at(stop, items) if isinstance(stop, Source) and _only_loop(stop) is loop else \
            [stop.value] * len(items) if isinstance(stop, Const) and type(stop.value) is int else None
    except (ArithmeticError, ValueError) as e:
        loop.watcher.refuse(f"{where} cannot be computed at every iteration ({e})")
        return None
    if stops is None or type(n) is not int:
        return None
    length = len(range(n)[starts[0]:stops[0]])
    for item, a, b in zip(items, starts, stops):
        if range(n)[a:b] != range(n)[a:a + length] or len(range(n)[a:b]) != length:
            loop.watcher.refuse(f"{where} has a length that changes with {loop.name} ({length} items when it is "
                                f"{items[0]}, {len(range(n)[a:b])} when it is {item})")
            return None
    return IntIndex(graph_value(ctx, start), var.value.start, length)


def _loop_slice(var: Var) -> bool:
    return type(var.value) is slice and type(var.source) is DerivedSource and var.source.fn is slice


def index_key(ctx, tensor: Tensor, key: Var):
    """The key of ``tensor[key]`` (read or written) with each int computed from a loop variable an ``IntIndex``,
    or None when the key holds none, or holds something else than ints, slices, None and ``...`` (then the usual
    key is made, which guards the loop variable: the loop stays unrolled)."""
    if not ctx.loop_variables:
        return None
    single = type(key.value) is not tuple
    items = [key] if single else ctx.containers.items(key.value)
    if items is None or not any(_usable(ctx, v) is not None or _loop_slice(v) for v in items):
        return None
    shape = tensor.type.shape
    consumed = [0 if v.value is None or v.value is Ellipsis else 1 for v in items]
    ellipsis = [k for k, v in enumerate(items) if v.value is Ellipsis]
    if len(ellipsis) > 1 or sum(consumed) > len(shape):
        return None
    parts = []
    for k, var in enumerate(items):
        after_ellipsis = ellipsis and k > ellipsis[0]
        axis = len(shape) - sum(consumed[k:]) if after_ellipsis else sum(consumed[:k])
        if _loop_slice(var):
            span = _span(ctx, tensor, var, axis)
            if span is None:
                return None
            parts.append(span)
            continue
        loop = _usable(ctx, var)
        if loop is None:
            if type(var.value) not in (int, slice) and var.value is not None and var.value is not Ellipsis or \
                    var.source is not None:
                return None
            parts.append(var.value)
            continue
        n = shape[axis]
        where = f"{var.source.describe()!r} (axis {axis} of {tensor.type}) at line {ctx.loc().lineno}"
        if type(n) is not int:
            loop.watcher.refuse(f"the index {where} is along a symbolic size")
            return None
        try:
            values = values_at(var.source, [item.value for item in loop.watcher.items])
        except (ArithmeticError, ValueError) as e:
            loop.watcher.refuse(f"the index {where} cannot be computed at every iteration ({e})")
            return None
        outside = [(item.value, v) for item, v in zip(loop.watcher.items, values) if not -n <= v < n]
        if outside:
            item, v = outside[0]
            loop.watcher.refuse(f"the index {where} is {v} when {loop.name} is {item}, out of bounds, where "
                                f"eager NumPy raises IndexError")
            return None
        parts.append(IntIndex(graph_value(ctx, var.source), var.value))
    return parts[0] if single else tuple(parts)


def concrete_view_attrs(attrs: dict) -> dict:
    """The attributes of an ``index`` view with each ``IntIndex`` given its value now, for rebuilding the view on
    the real array after the graph (a view made with a loop variable and held at a graph break)."""
    key = attrs["key"]
    if not any(type(k) is IntIndex and k.now is None for k in key):
        return attrs
    return {**attrs, "key": tuple(IntIndex(k.value, _now(k.value._value), k.length)
                                  if type(k) is IntIndex and k.now is None else k for k in key)}


def _now(value, roots: set | None = None, root=None):
    """The value of an int the capture computed from constants (a loop variable's constant node), or None;
    with ``roots`` (of every loop variable), from no loop variable's constant but ``root``."""
    node = value.node
    if node.op == Op.CONST:
        if roots is not None and id(node) in roots and node is not root:
            return None  # (another loop's variable, whose loop may still become a region)
        return node.attrs["value"] if type(node.attrs["value"]) is int else None
    if node.op not in _INT_OPS:
        return None
    args = [_now(v, roots, root) for v in node.inputs]
    return None if None in args else operator.index(opdef(node.op).impl(*args, **node.attrs))


_INT_OPS = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.FLOORDIV, Op.MOD, Op.NEG})
"""The graph operations ``graph_value`` records for ``_INT_ARITHMETIC`` (``pos`` records none)."""


def constant_indices(ctx, nodes: list, root) -> None:
    """Iteration 1's nodes of a loop that stays unrolled: each int index or span computed from its loop
    variable's constant (``root``) becomes a constant of the key again (``x[3]``, ``x[3:5]``), as every other
    iteration has it, so that the backend builds its kernels on it as on theirs. The same NumPy indexing either
    way. (An index computed from an outer loop's variable too stays as it is: that loop may be kept.)"""
    for node in nodes:
        if node.op not in (Op.INDEX, Op.INDEX_UPDATE):
            continue
        key = node.attrs["key"]
        known = {k.pos: _now(node.inputs[k.pos], ctx.loop_roots, root.node) for k in key
                 if type(k) is At or type(k) is Span}
        known = {pos: v for pos, v in known.items() if v is not None}
        if not known:
            continue
        kept = [pos for pos in range(len(node.inputs)) if pos not in known]
        moved = {old: new for new, old in enumerate(kept)}
        items = []
        for k in key:
            if (type(k) is At or type(k) is Span) and k.pos in known:
                s = known[k.pos]
                items.append(s if type(k) is At else Slice(s, s + k.length, None))
            elif isinstance(k, (Slot, At, Span)):
                items.append(k._replace(pos=moved[k.pos]))
            else:
                items.append(k)
        node.inputs = tuple(node.inputs[pos] for pos in kept)
        node.attrs = {**node.attrs, "key": tuple(items)}
