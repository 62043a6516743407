"""The op table's machinery: the closed set of op names, the record that defines an op, and shared rules.

An op is defined once, by an :class:`OpDef`: how a call is bound to inputs and attributes, its abstract
evaluation (output types from input types and attributes), its NumPy implementation, and how it prints.
Frontends, passes and backends read this table and nothing else.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Callable

import numpy as np

from ..errors import OpError, raises_for_the_program
from ..ir.relations import relation
from ..ir.shape_env import require
from ..ir.symbolic import Expr, unwrap
from ..ir.types import TensorType


class Op(StrEnum):
    """The closed set of op names. A ``StrEnum``, so ``node.op == "matmul"`` reads naturally; each has one
    ``OpDef`` in ``REGISTRY`` (docs/ops.md lists them)."""

    # sources: values that enter a graph
    INPUT = "input"
    PARAM = "param"
    CONST = "const"
    SIZE = "size"
    ZEROS_LIKE = "zeros_like"
    ONES_LIKE = "ones_like"
    FULL_LIKE = "full_like"
    FULL = "full"
    ARANGE = "arange"
    LINSPACE = "linspace"
    EYE = "eye"
    TRI = "tri"
    # elementwise, one operand
    NEG = "neg"
    ABS = "abs"
    SIGN = "sign"
    EXP = "exp"
    LOG = "log"
    LOG1P = "log1p"
    EXPM1 = "expm1"
    SQRT = "sqrt"
    SQUARE = "square"
    RECIPROCAL = "reciprocal"
    TANH = "tanh"
    SIN = "sin"
    COS = "cos"
    FLOOR = "floor"
    CEIL = "ceil"
    LOGICAL_NOT = "logical_not"
    SIGMOID = "sigmoid"
    RELU = "relu"
    GELU = "gelu"
    COPY = "copy"
    CAST = "cast"
    ARCSIN = "arcsin"
    ARCCOS = "arccos"
    ARCTAN = "arctan"
    SINH = "sinh"
    COSH = "cosh"
    LOG2 = "log2"
    LOG10 = "log10"
    EXP2 = "exp2"
    ISNAN = "isnan"
    ISINF = "isinf"
    ISFINITE = "isfinite"
    RINT = "rint"
    TRUNC = "trunc"
    ROUND = "round"
    CONJ = "conj"
    ANGLE = "angle"
    INVERT = "invert"
    # elementwise, two or more operands
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    FLOORDIV = "floordiv"
    MOD = "mod"
    POW = "pow"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    LOGICAL_AND = "logical_and"
    LOGICAL_OR = "logical_or"
    LOGICAL_XOR = "logical_xor"
    WHERE = "where"
    CLIP = "clip"
    ARCTAN2 = "arctan2"
    HYPOT = "hypot"
    LOGADDEXP = "logaddexp"
    BITWISE_AND = "bitwise_and"
    BITWISE_OR = "bitwise_or"
    BITWISE_XOR = "bitwise_xor"
    LEFT_SHIFT = "left_shift"
    RIGHT_SHIFT = "right_shift"
    UFUNC_OUTER = "ufunc_outer"
    # reductions
    SUM = "sum"
    MEAN = "mean"
    MAX = "max"
    MIN = "min"
    PROD = "prod"
    VAR = "var"
    STD = "std"
    ARGMAX = "argmax"
    ARGMIN = "argmin"
    ANY = "any"
    ALL = "all"
    CUMSUM = "cumsum"
    CUMPROD = "cumprod"
    ACCUMULATE = "accumulate"
    UFUNC_REDUCE = "ufunc_reduce"
    SORT = "sort"
    ARGSORT = "argsort"
    DIFF = "diff"
    TRACE = "trace"
    AVERAGE = "average"
    COV = "cov"
    CORRCOEF = "corrcoef"
    HISTOGRAM = "histogram"
    # linear algebra
    MATMUL = "matmul"
    EINSUM = "einsum"
    OUTER = "outer"
    DOT = "dot"
    VDOT = "vdot"
    INNER = "inner"
    TENSORDOT = "tensordot"
    LIBRARY_CALL = "library_call"
    # shape and data movement
    RESHAPE = "reshape"
    TRANSPOSE = "transpose"
    BROADCAST_TO = "broadcast_to"
    EXPAND_DIMS = "expand_dims"
    SQUEEZE = "squeeze"
    CONCATENATE = "concatenate"
    STACK = "stack"
    SPLIT = "split"
    REPEAT = "repeat"
    TILE = "tile"
    PAD = "pad"
    TRIU = "triu"
    TRIL = "tril"
    REAL = "real"
    IMAG = "imag"
    FLIP = "flip"
    ROLL = "roll"
    DIAGONAL = "diagonal"
    DIAG = "diag"
    TAKE = "take"
    TAKE_ALONG_AXIS = "take_along_axis"
    # indexing
    INDEX = "index"
    INDEX_UPDATE = "index_update"
    # neural-network composites
    SOFTMAX = "softmax"
    LOG_SOFTMAX = "log_softmax"
    LAYER_NORM = "layer_norm"
    LINEAR = "linear"
    # structured control flow: ops with regions (nested graphs), jax.lax semantics
    COND = "cond"
    WHILE_LOOP = "while_loop"
    FORI_LOOP = "fori_loop"
    SCAN = "scan"
    # a call of a leaf module of graph_lab.nn (torch.fx's call_module): its forward as a region
    CALL_MODULE = "call_module"
    # convolution, pooling and batch normalization (NCHW, PyTorch's conventions)
    CONV2D = "conv2d"
    MAX_POOL2D = "max_pool2d"
    AVG_POOL2D = "avg_pool2d"
    BATCH_NORM = "batch_norm"


SOURCE_OPS = frozenset({Op.INPUT, Op.PARAM, Op.CONST, Op.SIZE})


@dataclass(frozen=True)
class OpDef:
    """Everything graph_lab knows about one op."""

    op: Op
    """The op's name."""
    family: str
    """Group it belongs to: source, unary, binary, reduce, linalg, shape, index, nn (conv and pooling too),
    control."""
    bind: Callable[..., tuple[list, dict]]
    """Turns a user's call (``F.sum(x, axis=-1)``) into (operands, attributes); operands may be arrays,
    Python scalars or stand-in tensors. Attributes are hashable and normalized (axes made non-negative)."""
    infer: Callable[[tuple[TensorType, ...], dict], tuple[TensorType, ...]]
    """Abstract evaluation: the output types from the operand types and attributes. Raises ``OpError``."""
    impl: Callable[..., Any]
    """The NumPy implementation: ``impl(*arrays, **attrs)``; returns one array, or a tuple for ``n_outputs > 1``."""
    numpy_name: str | None = None
    """The NumPy call that eager code uses for this op (for messages and generated code)."""
    multi_output: bool = False
    """True when the op returns a tuple of arrays (``split``)."""
    view: bool = False
    """True when NumPy returns a view of the first operand (so in-place writes alias it)."""
    doc: str = ""
    """One line saying what the op computes."""
    pure: bool = True
    """True when the result depends only on the operands and attributes, and running the op changes nothing
    else. Passes merge (CSE), fold, move or drop only pure ops; a random draw or an effect must set False."""
    print_attrs: Callable[[dict], str] | None = field(default=None)
    """Custom printer of the attributes; default ``key=value`` pairs."""
    regions: tuple[str, ...] = ()
    """Names of the attributes that hold the op's regions (nested graphs, e.g. ``("then", "else")``), in
    printed order. A region's inputs receive values from the node's operands; it reads nothing else."""
    vjp: Callable[..., list] | None = None
    """The derivative rule (``graph_lab/autodiff``): ``vjp(cotangents, inputs, outputs, **attrs)`` returns one
    cotangent per input (None where none flows), written with the table's own ops (``F.*``), so it runs eagerly on
    arrays and is recorded on stand-ins. None: the op has no derivative (autodiff then refuses, naming the op)."""


REGISTRY: dict[Op, OpDef] = {}


def register(opdef: OpDef) -> OpDef:
    if opdef.op in REGISTRY:
        raise RuntimeError(f"op {opdef.op} defined twice")
    REGISTRY[opdef.op] = opdef
    return opdef


def register_vjp(op: Op, rule: Callable[..., list]) -> None:
    """Give ``op`` its derivative rule (the rules live in ``graph_lab/autodiff``, which imports the frontends that
    ``ops/`` may not); the entry is replaced by a copy holding the rule, so ``opdef(op).vjp`` finds it."""
    definition = REGISTRY[op]
    if definition.vjp is not None and definition.vjp is not rule:
        raise RuntimeError(f"op {op} given two derivative rules")
    REGISTRY[op] = replace(definition, vjp=rule)


def opdef(op: Op | str) -> OpDef:
    """The definition of ``op``; a clear ``KeyError`` for names not in the table."""
    try:
        return REGISTRY[op]
    except KeyError:
        pass
    try:
        return REGISTRY[Op(op)]
    except ValueError:
        raise KeyError(f"unknown op {op!r}; the op table has: {', '.join(sorted(REGISTRY))}") from None


# ---------------------------------------------------------------------------------------------------------
# Shared rules


_PROBE_SAMPLE = {bool: True, int: 1, float: 1.0, complex: 1.0j}
_probe_cache: dict[tuple, np.dtype] = {}


@raises_for_the_program  # (NumPy's own answer to the operands: the error eager NumPy raises too)
def probe_dtype(fn: Callable, types: tuple[TensorType, ...], attrs_key: tuple, **attrs) -> np.dtype:
    """The result dtype of ``fn`` found by running it on size-1 arrays (and Python scalars for weak types).

    NumPy's promotion rules (NEP 50 weak scalars, ``true_divide`` of ints, ``mean`` of ints, ...) are many;
    asking NumPy itself on tiny arrays is the one way to get each of them exactly right. Results are cached.
    """
    key = (fn, attrs_key) + tuple((t.dtype, t.ndim, t.weak) for t in types)
    hit = _probe_cache.get(key)
    if hit is not None:
        return hit
    samples = [_PROBE_SAMPLE[t.weak] if t.weak is not None else np.ones((1,) * t.ndim, t.dtype) for t in types]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. var's "degrees of freedom <= 0" on a size-1 sample
        out = fn(*samples, **attrs)
    if isinstance(out, tuple):
        out = out[0]
    dtype = np.asarray(out).dtype
    _probe_cache[key] = dtype
    return dtype


def broadcast_shapes(op: str, types: tuple[TensorType, ...]) -> tuple:
    try:
        return broadcast(op, *(t.shape for t in types))
    except ValueError:
        shown = ", ".join(str(t) for t in types)
        raise OpError(f"{op}: operands could not be broadcast together ({shown}); NumPy broadcasting aligns "
                      f"shapes from the right and needs each pair of sizes to be equal or 1") from None


def broadcast(op: str, *shapes) -> tuple:
    """``np.broadcast_shapes`` that also takes symbolic sizes; raises ``ValueError`` when they do not broadcast."""
    if all(type(d) is int for s in shapes for d in s):
        return np.broadcast_shapes(*shapes)
    return symbolic_broadcast(op, shapes)


def symbolic_broadcast(op: str, shapes) -> tuple:
    """NumPy's broadcasting with symbolic sizes. A symbol is never taken to be 1 (sizes 0 and 1 are
    specialized), so a symbol meeting another size requires them equal: proved, refused, or guarded.
    Raises ``ValueError`` for static sizes that do not broadcast."""
    ndim = max(len(s) for s in shapes)
    out = []
    for axis in range(ndim):
        sizes = [s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0]
        result = 1
        for d in sizes:
            result = _broadcast_pair(op, result, d)
        out.append(result)
    return tuple(out)


def _broadcast_pair(op: str, a, b):
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    if type(a) is int and type(b) is int:
        raise ValueError(f"{a} and {b}")
    try:
        require(relation("==", a, b), f"{op} broadcasts {a} with {b}")
    except OpError as e:
        raise ValueError(str(e)) from None
    return a if type(a) is int or type(b) is not int else b


def shape_text(shape) -> str:
    """``(T, 8)``: a shape as in messages (``(8,)`` for one dimension), symbolic sizes by their names."""
    shape = tuple(shape)
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def same_shape(a: tuple, b: tuple) -> bool:
    """Equal shapes: the same sizes, or symbolic sizes the current shape facts prove equal."""
    if a == b:
        return True
    if len(a) != len(b):
        return False
    from ..ir.shape_env import current
    return all(x == y or current().prove(relation("==", x, y)) for x, y in zip(a, b))


def same_size(op: str, a, b, message: str) -> None:
    """Sizes ``a`` and ``b`` must be equal: static sizes are compared, symbolic ones required (``message``
    is the error for a proved difference)."""
    if a == b:
        return
    if type(a) is int and type(b) is int:
        raise OpError(message)
    try:
        require(relation("==", a, b), f"{op}: {a} must equal {b}")
    except OpError as e:
        raise OpError(f"{message} ({e})") from None


def normalize_axis(op: str, axis: int, ndim: int) -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise OpError(f"{op}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise OpError(f"{op}: axis {axis} is out of bounds for an array of dimension {ndim}")
    return int(axis) % ndim if ndim else 0


def normalize_axes(op: str, axis, ndim: int) -> tuple[int, ...] | None:
    """``None`` stays None (all axes); an int or a sequence becomes a sorted tuple of non-negative axes."""
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(normalize_axis(op, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise OpError(f"{op}: repeated axis in {axis!r}")
    return tuple(sorted(out))


def static_int(op: str, what: str, v, *, symbolic: bool = True):
    """An attribute that must be an int known when the graph is captured (not a tensor); a size expression
    (``T``, ``d // 2``) is accepted where ``symbolic`` is True: it is bound at run time."""
    v = unwrap(v)
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)
    if symbolic and isinstance(v, Expr):
        return v
    raise OpError(f"{op}: {what} must be an int known when the graph is captured, got {type(v).__name__} {v!r}")


def static_shape(op: str, shape) -> tuple:
    shape = unwrap(shape)
    if isinstance(shape, (int, np.integer, Expr)):
        shape = (shape,)
    try:
        return tuple(static_int(op, "each size", s) for s in shape)
    except TypeError:
        raise OpError(f"{op}: shape must be an int or a tuple of ints, got {shape!r}") from None


class TensorLike:
    """Marker base class of stand-in tensors (trace proxies, lazy tensors): values known only by their type."""

    __slots__ = ()


def is_tensorlike(x) -> bool:
    return isinstance(x, TensorLike)


def shape_of(x) -> tuple:
    """The shape of an operand of a bind: an array, a stand-in tensor, a Python scalar or a nested list.
    Symbolic sizes come back as expressions (``T``), never as the SymInts user code sees."""
    t = getattr(x, "type", None)
    if isinstance(t, TensorType):
        return t.shape
    shape = getattr(x, "shape", None)
    return tuple(unwrap(d) for d in shape) if shape is not None else np.shape(unwrap(x))


def ndim_of(x) -> int:
    return len(shape_of(x))
