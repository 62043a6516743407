"""Stand-in tensors: objects that look like NumPy arrays and record each operation as a node.

One class serves tracing and lazy tensors; its ``Recorder`` decides where nodes go and what a concrete value
(``bool(t)``, ``float(t)``) means. Operators, ndarray methods and the NumPy protocols (``__array_ufunc__``,
``__array_function__``) all funnel into :func:`call_op`, which binds the call through the op table.

In-place writes (``x[i] = v``, ``x += 1``) become functional updates: the tensor object is given the updated
value, and a write through a view (``x[0][...] = v``, ``x.T[1] += 2``) is written back into its base, as NumPy's
aliasing would. Reading a view made *before* its base was written again is refused, never silently stale.
"""

from __future__ import annotations

import numpy as np

from ..errors import OpError, TraceError, raises_for_the_program
from ..ir.symbolic import SymbolicValue
from ..ops import REGISTRY, Op, TensorLike
from ..ops.base import same_shape
from ..ops.indexing import Slice, bind_key
from .symbols import wrap

_NOT_A_TENSOR = object()

TRACING_REGIONS: list = []
"""The regions of control-flow nodes being traced right now, innermost last (``frontends/control.py`` pushes and
pops them; ``Recorder.innermost`` reads them)."""


class Storage:
    """The memory a group of aliasing tensors share. ``version`` grows with every write into it."""

    __slots__ = ("version", "is_input")

    def __init__(self, is_input: str | None = None):
        self.version = 0
        self.is_input = is_input  # e.g. "input 'x'" or "parameter p['W']": writes into it are refused


def _find_recorder(args, found=None):
    """The capture of the stand-ins among ``args`` (one level into lists and tuples): the innermost one when a
    region's stand-ins meet those of the capture around it (``acc + x * i`` in a loop body reading ``x``).
    ``found``: the one found so far among other arguments."""
    for a in args:
        if isinstance(a, Tensor):
            rec = a._rec
        elif isinstance(a, (list, tuple)):
            found = _find_recorder([b for b in a if isinstance(b, Tensor)], found)  # (no symbolic size inside)
            continue
        elif isinstance(a, SymbolicValue) and a.env.recorder is not None:
            rec = a.env.recorder
        else:
            continue
        if found is None or rec.depth > found.depth:
            found = rec
    return found


def call_op(op: Op, *args, **kwargs):
    """Apply ``op`` to ``args``: recorded if any operand is a stand-in tensor, else run eagerly with NumPy."""
    definition = REGISTRY[op]
    rec = _find_recorder(args)
    if kwargs:
        rec = _find_recorder(kwargs.values(), rec)
    if rec is None:
        operands, attrs = definition.bind(*args, **kwargs)
        return definition.impl(*operands, **attrs)
    rec = rec.innermost()
    if rec.shape_env is not None:
        rec.shape_env.loc = rec.shape_env.here()  # a shape guard recorded while binding points at the user's line
    try:
        operands, attrs = definition.bind(*args, **kwargs)
    except OpError as e:
        raise rec.fail(str(e)) from None
    return rec.emit(op, operands, attrs)


class UnsupportedAttribute(TraceError, AttributeError):
    """An ndarray method or attribute that a stand-in tensor cannot record (a ``TraceError``; also an
    ``AttributeError``, so ``getattr(x, name, default)`` and ``hasattr`` keep working as Python's do)."""


class Tensor(TensorLike):
    """A stand-in for an ndarray inside a capture: it has a static type and a place in the graph, no data."""

    __slots__ = ("_rec", "_value", "_storage", "_version", "_view", "_maybe_alias", "__weakref__")
    __hash__ = None  # like ndarray: unhashable

    def __init__(self, rec, value, storage: Storage | None = None):
        self._rec = rec
        self._value = value
        self._storage = storage if storage is not None else Storage()
        self._version = self._storage.version
        self._view = None  # (base tensor, op, attrs) when this tensor aliases base's memory
        # (storage, version) of an array this one may or may not alias: NumPy's reshape returns a view or a
        # copy depending on the memory layout, which a stand-in does not know (then the reshaped tensor comes
        # third, so that compile() can redo the reshape on the real array: ``RecipeMaker.tensor``).
        self._maybe_alias = None

    # --- static properties (known without data)

    @property
    def type(self):
        return self._value.type

    @property
    def shape(self) -> tuple:
        """The sizes, as ints; a symbolic size is a ``SymInt`` (Python arithmetic on it stays symbolic)."""
        shape = self._value.type.shape
        env = self._rec.shape_env
        if env is None:
            return shape
        return tuple(wrap(d, env) for d in shape)

    @property
    def dtype(self) -> np.dtype:
        return self._value.type.dtype

    @property
    def ndim(self) -> int:
        return len(self._value.type.shape)

    @property
    def size(self) -> int:
        size = self._value.type.size
        if type(size) is int:
            return size
        return wrap(size, self._rec.shape_env)

    @property
    def T(self) -> "Tensor":
        return call_op(Op.TRANSPOSE, self)

    @property
    @raises_for_the_program  # (the errors NumPy raises for the same array: see errors.raises_for_the_program)
    def mT(self) -> "Tensor":
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return call_op(Op.TRANSPOSE, self, _swap_perm(self.ndim, -1, -2))

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @raises_for_the_program
    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    @raises_for_the_program
    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        node = self._value.node
        where = f" at {node.loc}" if node is not None and node.loc else ""
        return f"<{self._rec.kind} tensor {self.type} from {node.op if node else '?'}{where}>"

    # --- values that Python needs now: the capture decides (error, specialize, guard, or run the graph)

    @raises_for_the_program
    def _scalar(self, kind: str):
        if self.size != 1:
            if kind == "bool":
                raise ValueError(f"The truth value of an array with more than one element is ambiguous "
                                 f"({self.type}). Use a.any() or a.all()")
            raise TypeError(f"only length-1 arrays can be converted to Python scalars ({self.type})")
        return self._rec.concretize(self, kind)

    def __bool__(self) -> bool:
        return self._scalar("bool")

    def __float__(self) -> float:
        return self._scalar("float")

    def __int__(self) -> int:
        return self._scalar("int")

    @raises_for_the_program
    def __index__(self) -> int:
        if not np.issubdtype(self.dtype, np.integer) or self.ndim:
            raise TypeError(f"only integer scalar arrays can be converted to a scalar index ({self.type})")
        return self._rec.concretize(self, "int")

    def __complex__(self) -> complex:
        return complex(self._scalar("item"))

    @raises_for_the_program
    def item(self, *index):
        """``a.item()``, or ``a.item(i, j)`` / ``a.item(flat_i)``: the element as a Python number, as NumPy gives it."""
        if index:
            if len(index) == 1 and isinstance(index[0], tuple):
                index = index[0]
            return (self.reshape(-1)[index[0]] if len(index) == 1 else self[index]).item()
        if self.size != 1:
            raise ValueError(f"can only convert an array of size 1 to a Python scalar ({self.type})")
        return self._rec.concretize(self, "item")

    def tolist(self):
        return self._rec.concretize(self, "array").tolist()

    def __array__(self, dtype=None, copy=None):
        arr = self._rec.concretize(self, "array")
        return arr if dtype is None else arr.astype(dtype)

    def __format__(self, spec: str) -> str:
        if not spec:
            return repr(self)
        return format(self._scalar("item"), spec)

    # --- freshness of aliases

    def _check_fresh(self, loc=None) -> None:
        if self._maybe_alias is not None and self._maybe_alias[0].version != self._maybe_alias[1]:
            if self._value.node is not None and self._value.node.op == Op.EINSUM:
                raise self._rec.fail("this array came from a one-operand np.einsum of an array that was written "
                                     "in place afterwards; NumPy returns a view there, and a graph cannot show "
                                     "the write through it. Call einsum after the write, or .copy() its result",
                                     loc)
            raise self._rec.fail("this array came from a reshape of an array that was written in place "
                                 "afterwards; NumPy's reshape returns a view or a copy depending on memory layout, "
                                 "so whether the write shows here is unknown to a graph. Reshape after the write, "
                                 "or .copy() the reshaped array before it", loc)
        if self._version != self._storage.version:
            raise self._rec.fail(f"this array ({self!r}) is a view of an array that was written in place after "
                                 f"the view was made; NumPy would show the new values through the view, and a "
                                 f"graph cannot. Take the view again after the write (or .copy() it before)", loc)

    # --- in-place writes, made functional

    def _write(self, new: "Tensor") -> None:
        """Give this tensor (and, through views, its base) the value of ``new``."""
        self._check_fresh()
        if self._maybe_alias is not None and self._value.node is not None and self._value.node.op == Op.EINSUM:
            raise self._rec.fail("in-place write into the result of a one-operand np.einsum, a view of its "
                                 "operand in NumPy that a graph cannot write through. .copy() it first, or write "
                                 "into the operand")
        if self._maybe_alias is not None:
            raise self._rec.fail("in-place write into the result of a reshape: NumPy's reshape returns a view or "
                                 "a copy depending on memory layout, so whether this write also changes the "
                                 "original array is unknown to a graph. .copy() the reshaped array first, or "
                                 "write into the original array")
        if self._view is not None:
            base, op, attrs = self._view
            base._write(_write_back(base, op, attrs, new))
            self._value = _view_again(self, new, base, op, attrs)
        else:
            self._rec.innermost().check_writable(self)
            self._storage.version += 1
            self._value = new._value
        self._version = self._storage.version

    def __setitem__(self, key, value) -> None:
        if isinstance(value, Tensor) and value._view is not None and value._view[0] is self and \
                value._version == self._storage.version and value._view[1] == Op.INDEX:
            # x[k] += v already wrote through the view x[k]; Python's closing x[k] = that view is a no-op.
            try:
                if value._view[2]["key"] == bind_key(key, 1)[0]:
                    return
            except OpError:
                pass
        if isinstance(key, Tensor) and key.dtype == np.bool_ and np.ndim(value) == 0 and \
                same_shape(key.type.shape, self.type.shape):
            # x[mask] = v with a mask of x's shape and one value: a select, with no data-dependent shape
            # (the value cast first, as NumPy does: an int64 array keeps its other elements exactly)
            value = call_op(Op.CAST, value, self.dtype) if isinstance(value, Tensor) else \
                np.asarray(value).astype(self.dtype)
            self._write(call_op(Op.WHERE, key, value, self))
            return
        self._write(call_op(Op.INDEX_UPDATE, self, key, value))

    def fill(self, value) -> None:
        self[...] = value

    def _inplace(self, op: Op, other, **attrs) -> "Tensor":
        result = call_op(op, self, other, **attrs)
        if not same_shape(result.type.shape, self.type.shape):
            raise self._rec.fail(f"non-broadcastable output operand with shape {self.shape} doesn't match the "
                                 f"broadcast shape {result.shape} (in-place {op})")
        if result.dtype != self.dtype:
            if not np.can_cast(result.dtype, self.dtype, "same_kind"):
                raise self._rec.fail(f"Cannot cast ufunc '{op}' output from {result.dtype} to {self.dtype} with "
                                     f"casting rule 'same_kind' (in-place {op}); write x = x {op} y instead")
            result = call_op(Op.CAST, result, self.dtype)
        self._write(result)
        return self

    def __iadd__(self, o): return self._inplace(Op.ADD, o)
    def __isub__(self, o): return self._inplace(Op.SUB, o)
    def __imul__(self, o): return self._inplace(Op.MUL, o)
    def __itruediv__(self, o): return self._inplace(Op.DIV, o)
    def __ifloordiv__(self, o): return self._inplace(Op.FLOORDIV, o)
    def __imod__(self, o): return self._inplace(Op.MOD, o)
    def __ipow__(self, o): return self._inplace(Op.POW, o, operator=True)

    def __iand__(self, o): return self._inplace(self._bitwise(Op.LOGICAL_AND, Op.BITWISE_AND, o), o)
    def __ior__(self, o): return self._inplace(self._bitwise(Op.LOGICAL_OR, Op.BITWISE_OR, o), o)
    def __ixor__(self, o): return self._inplace(self._bitwise(Op.LOGICAL_XOR, Op.BITWISE_XOR, o), o)
    def __ilshift__(self, o): return self._inplace(Op.LEFT_SHIFT, o)
    def __irshift__(self, o): return self._inplace(Op.RIGHT_SHIFT, o)

    # --- operators

    def __add__(self, o): return call_op(Op.ADD, self, o)
    def __radd__(self, o): return call_op(Op.ADD, o, self)
    def __sub__(self, o): return call_op(Op.SUB, self, o)
    def __rsub__(self, o): return call_op(Op.SUB, o, self)
    def __mul__(self, o): return call_op(Op.MUL, self, o)
    def __rmul__(self, o): return call_op(Op.MUL, o, self)
    def __truediv__(self, o): return call_op(Op.DIV, self, o)
    def __rtruediv__(self, o): return call_op(Op.DIV, o, self)
    def __floordiv__(self, o): return call_op(Op.FLOORDIV, self, o)
    def __rfloordiv__(self, o): return call_op(Op.FLOORDIV, o, self)
    def __mod__(self, o): return call_op(Op.MOD, self, o)
    def __rmod__(self, o): return call_op(Op.MOD, o, self)
    def __pow__(self, o): return call_op(Op.POW, self, o, operator=True)
    def __rpow__(self, o): return call_op(Op.POW, o, self, operator=True)
    def __matmul__(self, o): return call_op(Op.MATMUL, self, o)
    def __rmatmul__(self, o): return call_op(Op.MATMUL, o, self)
    def __neg__(self): return call_op(Op.NEG, self)
    def __pos__(self): return call_op(Op.COPY, self, ufunc=True)
    def __abs__(self): return call_op(Op.ABS, self)
    def __eq__(self, o): return call_op(Op.EQ, self, o)
    def __ne__(self, o): return call_op(Op.NE, self, o)
    def __lt__(self, o): return call_op(Op.LT, self, o)
    def __le__(self, o): return call_op(Op.LE, self, o)
    def __gt__(self, o): return call_op(Op.GT, self, o)
    def __ge__(self, o): return call_op(Op.GE, self, o)

    def _bitwise(self, logical: Op, bitwise: Op, other=None) -> Op:
        """``&``, ``|``, ``^``, ``~``: the logical op when every operand is boolean (as NumPy's bitwise ufuncs on
        booleans are), else the bitwise op (integers; NumPy refuses floats, and so does its type rule)."""
        operands = [self] if other is None else [self, other]
        for x in operands:
            dt = x.dtype if isinstance(x, (Tensor, np.ndarray, np.generic)) else np.asarray(x).dtype
            if dt != np.bool_:
                return bitwise
        return logical

    def __and__(self, o): return call_op(self._bitwise(Op.LOGICAL_AND, Op.BITWISE_AND, o), self, o)
    def __rand__(self, o): return call_op(self._bitwise(Op.LOGICAL_AND, Op.BITWISE_AND, o), o, self)
    def __or__(self, o): return call_op(self._bitwise(Op.LOGICAL_OR, Op.BITWISE_OR, o), self, o)
    def __ror__(self, o): return call_op(self._bitwise(Op.LOGICAL_OR, Op.BITWISE_OR, o), o, self)
    def __xor__(self, o): return call_op(self._bitwise(Op.LOGICAL_XOR, Op.BITWISE_XOR, o), self, o)
    def __rxor__(self, o): return call_op(self._bitwise(Op.LOGICAL_XOR, Op.BITWISE_XOR, o), o, self)
    def __invert__(self): return call_op(self._bitwise(Op.LOGICAL_NOT, Op.INVERT), self)
    def __lshift__(self, o): return call_op(Op.LEFT_SHIFT, self, o)
    def __rlshift__(self, o): return call_op(Op.LEFT_SHIFT, o, self)
    def __rshift__(self, o): return call_op(Op.RIGHT_SHIFT, self, o)
    def __rrshift__(self, o): return call_op(Op.RIGHT_SHIFT, o, self)

    def __getitem__(self, key):
        return call_op(Op.INDEX, self, key)

    # --- ndarray methods that model code uses

    def reshape(self, *shape, order="C"): return call_op(Op.RESHAPE, self, *shape, order=order)
    def transpose(self, *axes): return call_op(Op.TRANSPOSE, self, *axes)
    def swapaxes(self, a, b): return call_op(Op.TRANSPOSE, self, _swap_perm(self.ndim, a, b))
    def squeeze(self, axis=None): return call_op(Op.SQUEEZE, self, axis)
    def flatten(self): return call_op(Op.COPY, call_op(Op.RESHAPE, self, -1), order="C")
    def ravel(self): return call_op(Op.RESHAPE, self, -1)
    def copy(self, order="C"): return call_op(Op.COPY, self, order=order)
    def astype(self, dtype): return call_op(Op.CAST, self, dtype)
    def clip(self, a_min=None, a_max=None): return call_op(Op.CLIP, self, a_min, a_max)
    def repeat(self, repeats, axis=None): return call_op(Op.REPEAT, self, repeats, axis)
    def sum(self, axis=None, keepdims=False): return call_op(Op.SUM, self, axis, keepdims)
    def mean(self, axis=None, keepdims=False): return call_op(Op.MEAN, self, axis, keepdims)
    def max(self, axis=None, keepdims=False): return call_op(Op.MAX, self, axis, keepdims)
    def min(self, axis=None, keepdims=False): return call_op(Op.MIN, self, axis, keepdims)
    def prod(self, axis=None, keepdims=False): return call_op(Op.PROD, self, axis, keepdims)
    def any(self, axis=None, keepdims=False): return call_op(Op.ANY, self, axis, keepdims)
    def all(self, axis=None, keepdims=False): return call_op(Op.ALL, self, axis, keepdims)
    def var(self, axis=None, ddof=0, keepdims=False): return call_op(Op.VAR, self, axis, keepdims, ddof=ddof)
    def std(self, axis=None, ddof=0, keepdims=False): return call_op(Op.STD, self, axis, keepdims, ddof=ddof)
    def argmax(self, axis=None, keepdims=False): return call_op(Op.ARGMAX, self, axis, keepdims)
    def argmin(self, axis=None, keepdims=False): return call_op(Op.ARGMIN, self, axis, keepdims)
    def cumsum(self, axis=None): return call_op(Op.CUMSUM, self, axis)
    def cumprod(self, axis=None): return call_op(Op.CUMPROD, self, axis)
    def argsort(self, axis=-1, kind=None): return call_op(Op.ARGSORT, self, axis, kind)
    def round(self, decimals=0): return call_op(Op.ROUND, self, decimals)
    def conj(self): return self.conjugate()

    def conjugate(self):
        """NumPy's method returns the array itself when it is not complex (a write into the result is a write
        into ``self``); only ``np.conj(x)``, the ufunc, always makes a new array."""
        return call_op(Op.CONJ, self) if self.dtype.kind == "c" else self
    def dot(self, b): return call_op(Op.DOT, self, b)
    def take(self, indices, axis=None): return call_op(Op.TAKE, self, indices, axis)
    def diagonal(self, offset=0, axis1=0, axis2=1): return call_op(Op.DIAGONAL, self, offset, axis1, axis2)
    def trace(self, offset=0, axis1=0, axis2=1): return call_op(Op.TRACE, self, offset, axis1, axis2)

    @property
    def real(self) -> "Tensor":
        return call_op(Op.REAL, self)

    @property
    def imag(self) -> "Tensor":
        return call_op(Op.IMAG, self)

    def sort(self, axis=-1, kind=None):
        raise self._rec.fail("x.sort() sorts the array in place, a write a graph records only as a new value; "
                             "write x = np.sort(x) instead (numpy.ndarray.sort)")

    def __getattr__(self, name: str):
        # Only called when the attribute is missing: an ndarray method or attribute with no op (x.nonzero(),
        # x.ptp()) is refused by name, with the line; anything else is the AttributeError Python would raise.
        if not name.startswith("__") and hasattr(np.ndarray, name):
            raise UnsupportedAttribute(str(self._rec.fail(
                f"numpy.ndarray.{name} (x.{name}) is not in graph_lab's op table or the registry of pure NumPy "
                f"functions, so it cannot be recorded on a stand-in tensor; write it with supported ops, or "
                f"compute it outside the captured function")))
        raise AttributeError(f"'Tensor' object has no attribute {name!r}")

    # --- NumPy protocols: unmodified np.* code is recorded

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _numpy_api().apply_ufunc(self._rec, ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _numpy_api().apply_function(self._rec, func, args, kwargs)


_NUMPY_API = []


def _numpy_api():
    """``frontends/numpy_api.py`` (it imports this module, so it is imported on first use, then kept)."""
    if not _NUMPY_API:
        from . import numpy_api
        _NUMPY_API.append(numpy_api)
    return _NUMPY_API[0]


def _swap_perm(ndim: int, a: int, b: int) -> tuple[int, ...]:
    perm = list(range(ndim))
    a, b = a % ndim, b % ndim
    perm[a], perm[b] = perm[b], perm[a]
    return tuple(perm)


def reshape_always_a_view(old: tuple[int, ...], new: tuple[int, ...]) -> bool:
    """Whether NumPy's reshape from ``old`` to ``new`` is a view whatever the array's memory layout: true when
    it only splits dimensions (and adds or drops size-1 ones); merging needs strides that line up."""
    symbolic = any(type(d) is not int for d in old + tuple(new))
    if 0 in old and not symbolic:
        return True  # no elements: a write changes nothing either way
    old = tuple(d for d in old if d != 1)
    new = tuple(d for d in new if d != 1)
    j = 0
    for d in old:
        size = 1
        while not same_shape((size,), (d,)) and j < len(new) and (symbolic or size < d):
            size *= new[j]
            j += 1
        if not same_shape((size,), (d,)):
            return False
    return True


def _view_again(view: Tensor, new: Tensor, base: Tensor, op: Op, attrs: dict):
    """The value of ``view`` after ``new`` was written through it: the same view of ``base``'s new value, as in
    NumPy, where it stays a strided window into the base (a sum over it then adds in the order eager code adds
    in). For an index or a transpose; any other view takes the value written."""
    node = view._value.node
    if op not in (Op.INDEX, Op.TRANSPOSE) or node is None or node.op != op:
        return new._value
    extra = [Tensor(view._rec, v) for v in node.inputs[1:]]  # (index operands of the key: the same values)
    return view._rec.emit(op, [base, *extra], dict(node.attrs))._value  # (the node's key: its slots name `extra`)


def _write_back(base: Tensor, op: Op, attrs: dict, new: Tensor) -> Tensor:
    """The new value of ``base`` after its view ``op(base, **attrs)`` was given the value ``new``."""
    if op == Op.INDEX:
        key = tuple(k.to_slice() if isinstance(k, Slice) else k for k in attrs["key"])
        return call_op(Op.INDEX_UPDATE, base, key, new)
    if op in (Op.RESHAPE, Op.EXPAND_DIMS, Op.SQUEEZE):
        return call_op(Op.RESHAPE, new, base.type.shape)
    if op == Op.TRANSPOSE:
        inverse = [0] * len(attrs["perm"])
        for i, p in enumerate(attrs["perm"]):
            inverse[p] = i
        return call_op(Op.TRANSPOSE, new, tuple(inverse))
    raise TraceError(f"assignment destination is read-only (a {op} view cannot be written, as in NumPy)")
