"""What trace and lazy tensors share: turning an op call on stand-in tensors into a node.

A ``Recorder`` owns the stand-ins it made. ``emit`` binds the call through the op table, makes constants of
concrete operands, creates the node (its type from the op's rule), and wraps the outputs. Subclasses say where
nodes go and what happens when a concrete value is needed (``concretize``).
"""

from __future__ import annotations

import weakref

import numpy as np

from ..errors import OpError, TraceError
from ..ir.graph import Node, Value
from ..ir.source import SourceLoc, user_location
from ..ir.symbolic import SymbolicValue
from ..ir.shape_env import in_use as shape_env_in_use
from ..ir.types import TensorType
from ..ops import REGISTRY, Op, opdef
from ..ops.type_rule_memo import infer_static
from ..ops.indexing import At, Slice, is_basic, view_key
from ..ops.linalg import einsum_is_view
from .tensor import TRACING_REGIONS, Storage, Tensor, reshape_always_a_view

class Recorder:
    """Base class of the trace recorder and the lazy runner."""

    inputs_mutable = False
    """Whether in-place writes to input tensors are allowed (lazy tensors are private copies; trace inputs are
    the caller's arrays, whose mutation a graph cannot replay)."""
    kind = "trace"
    """Word used in messages: 'trace' or 'lazy'."""
    shape_env = None
    """The ShapeEnv of a capture with symbolic sizes (``ir/shape_env.py``); None when every size is static."""
    depth = 0
    """How deeply nested the capture is: 0 for a whole function, 1 + its parent's for a region of a control-flow
    node (``frontends/control.py``), so an op mixing both records into the innermost."""
    tensor_refs: list[weakref.ref] | None = None
    """When a list (the lazy runner's), ``emit`` appends a weak reference to each stand-in it makes: the runner
    finds the ones still alive there. Once it is longer than ``tensor_refs_limit``, ``prune_tensor_refs`` is
    called to drop the dead ones."""
    tensor_refs_limit = 0

    def prune_tensor_refs(self) -> None:
        """Drop the references of ``tensor_refs`` to stand-ins that died (and set a new ``tensor_refs_limit``)."""

    def add_node(self, node: Node) -> None:
        """Store a freshly made node (a trace appends it to its graph)."""

    def concretize(self, t: Tensor, kind: str):
        """The Python value of ``t`` as a bool/int/float/item/array: what tracing cannot know."""
        raise NotImplementedError

    def innermost(self) -> "Recorder":
        """Where an op on this capture's tensors is recorded: the innermost region of this capture being traced
        (a branch of ``F.cond`` computing with tensors from outside it), else this capture itself."""
        for region in reversed(TRACING_REGIONS):
            if region.inside(self):
                return region
        return self

    # --- making nodes

    def const(self, value, loc: SourceLoc | None) -> Value:
        if isinstance(value, np.ndarray):
            # A snapshot: the array may be written in place later (by the function or its caller), and the
            # graph must keep the value it had when the operation was recorded, as eager code would see it.
            value = np.array(value, copy=True)
            value.setflags(write=False)
        node = Node(Op.CONST, (), {"value": value}, (TensorType.of(value),), loc)
        self.add_node(node)
        return node.output

    def size_value(self, expr, loc: SourceLoc | None) -> Value:
        """A ``size`` node computing ``expr`` from the input sizes at run time (one per expression)."""
        made = getattr(self, "_size_values", None)
        if made is None:
            made = self._size_values = {}
        if expr not in made:
            node = Node(Op.SIZE, (), {"expr": expr}, REGISTRY[Op.SIZE].infer((), {"expr": expr}), loc)
            self.add_node(node)
            made[expr] = node.output
        return made[expr]

    def size_tensor(self, expr) -> Tensor:
        """A stand-in tensor holding the size ``expr`` (a Python int or float when the graph runs)."""
        return Tensor(self, self.size_value(expr, self.location()))

    def operand_value(self, x, loc: SourceLoc | None) -> Value:
        if isinstance(x, Tensor):
            if x._rec is not self:
                other = f"another {self.kind}" if x._rec.kind == self.kind else f"a {x._rec.kind} capture"
                raise TraceError(f"{x!r} comes from {other}, but it was used in this {self.kind} at "
                                 f"{loc.describe() if loc else 'unknown location'}; a stand-in tensor belongs to "
                                 f"the capture that made it. Pass the value in as an input or a parameter of "
                                 f"this capture instead")
            x._check_fresh(loc)
            return x._value
        if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
            return self.const(x, loc)
        if isinstance(x, SymbolicValue):
            if x.env is not self.shape_env:
                raise TraceError(f"the size {x.expr} comes from another capture, but it was used in this "
                                 f"{self.kind} at {loc.describe() if loc else 'unknown location'}")
            return self.size_value(x.expr, loc)
        if isinstance(x, (list, tuple)):
            if any(isinstance(v, SymbolicValue) for v in x):
                raise TraceError(f"a list holding symbolic sizes ({x!r}) used as an array at "
                                 f"{loc.describe() if loc else 'unknown location'}; a graph constant cannot hold "
                                 f"a size known only at run time. Use the sizes one by one as tensor operands")
            return self.const(np.asarray(x), loc)
        raise TraceError(f"{type(x).__name__} object used as an array operand at "
                         f"{loc.describe() if loc else 'unknown location'}; only arrays, Python numbers and "
                         f"stand-in tensors can be operands")

    def location(self) -> SourceLoc | None:
        """The user's line making a node now: the innermost stack frame outside graph_lab and NumPy."""
        return user_location(2)

    def emit(self, op: Op, operands: list, attrs: dict):
        loc = self.location()
        if self.shape_env is not None:
            self.shape_env.loc = loc  # shape guards the rule records point at this line
        definition = REGISTRY[op]
        # (a fresh stand-in of this capture is its own value, as operand_value says)
        values = tuple([x._value if type(x) is Tensor and x._rec is self and x._maybe_alias is None and
                        x._version == x._storage.version else self.operand_value(x, loc) for x in operands])
        types = tuple([v.type for v in values])
        try:
            if self.shape_env is None and shape_env_in_use() is None:
                out_types = infer_static(definition, types, attrs)
            else:
                out_types = definition.infer(types, attrs)
        except OpError as e:
            shown = ", ".join(str(t) for t in types)
            raise TraceError(f"{op}({shown}) at {loc.describe() if loc else 'unknown location'}: {e}") from None
        node = Node(op, values, attrs, out_types, loc)
        self.add_node(node)
        outs = [Tensor(self, v) for v in node.outputs]
        first = operands[0] if operands else None
        if op == Op.EINSUM:
            if len(operands) == 1 and isinstance(first, Tensor) and einsum_is_view(attrs["subscripts"]):
                # NumPy returns a view of its operand (``'ii->i'``: a writeable diagonal), which no op of the
                # graph is; writes into either side are refused, and compile() redoes it on the real array
                outs[0]._maybe_alias = (first._storage, first._storage.version, first)
        elif isinstance(first, Tensor) and (definition.view or op == Op.INDEX or op == Op.RESHAPE) and \
                not _numpy_scalar(first):
            if op == Op.RESHAPE and not reshape_always_a_view(first.type.shape, attrs["shape"]):
                # A view or a copy, depending on memory layout, which a stand-in does not know.
                outs[0]._maybe_alias = (first._storage, first._storage.version, first)
            elif op == Op.RESHAPE or _is_view(op, attrs, first.ndim):
                _make_view(outs[0], first, op, {"key": view_key(attrs["key"], operands)} if op == Op.INDEX
                           else attrs)
        elif isinstance(first, Tensor) and op == Op.SPLIT:
            # np.split's pieces are views of its operand (first[lo:hi] along the axis): a write into one is a
            # write into the operand, as in NumPy
            points = (0,) + tuple(attrs["indices"]) + (None,)
            for piece, lo, hi in zip(outs, points[:-1], points[1:]):
                key = (Slice(None, None, None),) * attrs["axis"] + (Slice(lo, hi, None),)
                _make_view(piece, first, Op.INDEX, {"key": key})
        refs = self.tensor_refs
        if refs is not None:
            refs.extend([weakref.ref(t) for t in outs])
            if len(refs) > self.tensor_refs_limit:
                self.prune_tensor_refs()
        return tuple(outs) if definition.multi_output else outs[0]

    def fail(self, message: str, loc: SourceLoc | None = None) -> TraceError:
        loc = loc or self.location()
        return TraceError(f"{message}\n  at {loc.describe() if loc else 'unknown location'}")

    def check_writable(self, root: Tensor) -> None:
        if root._storage.is_input and not self.inputs_mutable:
            name = root._storage.is_input
            raise self.fail(f"in-place write into the {name}: a traced graph returns new arrays and cannot "
                            f"write into the caller's arrays, so this side effect would be lost. Copy it first "
                            f"(x = x.copy()) and return the result")


_SCALAR_FAMILIES = frozenset({"unary", "binary", "reduce"})


def _numpy_scalar(t: Tensor) -> bool:
    """Whether eager NumPy holds ``t`` as a NumPy scalar, not a 0-d array: a ufunc or a reduction of 0-d
    operands returns one (``a0d - 1``, ``x.sum()``), so a "view" of it is a new array a write cannot reach."""
    node = t._value.node
    while node is not None and node.op == Op.CAST and node.inputs:  # a cast keeps a NumPy scalar one, and a
        # 0-d array one (a LazyRunner node already computed has no inputs left)
        node = node.inputs[0].node
    if t.ndim != 0 or node is None or node.op == Op.WHERE:
        return False
    if node.op == Op.COPY:
        return bool(node.attrs.get("ufunc"))
    return opdef(node.op).family in _SCALAR_FAMILIES or node.op == Op.MATMUL


def _make_view(t: Tensor, base: Tensor, op: Op, attrs: dict) -> None:
    """``t`` is ``op(base, **attrs)`` and shares its memory: it sees, and makes, base's writes."""
    t._storage = base._storage
    t._version = base._version
    t._view = (base, op, attrs)
    t._maybe_alias = base._maybe_alias


def _is_view(op: Op, attrs: dict, ndim: int) -> bool:
    """NumPy always returns a view for these ops (reshape is handled apart: sometimes a copy)."""
    if op == Op.INDEX:
        key = attrs["key"]
        # An integer for every axis gives a NumPy scalar, a copy: ``x[-1]`` of a 1-D array, ``x[1, 2]`` of a 2-D
        # one (``x[..., -1]`` is a 0-d view). Writing into that scalar must not reach ``x``.
        all_integers = len(key) == ndim and all(type(k) is int or type(k) is At for k in key)
        return is_basic(key) and not all_integers
    if op == Op.DIAG:  # (np.diag of a vector makes a new matrix; of a matrix, a read-only view of its diagonal)
        return ndim == 2
    return opdef(op).view


def new_storage(is_input: str | None = None) -> Storage:
    return Storage(is_input)
