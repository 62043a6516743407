"""The op table: one definition per op, grouped by family. Importing this package fills ``REGISTRY``."""

from . import (alloc, control, conv, elementwise, indexing, library, linalg, movement, nn, reduce,  # noqa: F401
               scan, shape, source_ops, statistics)  # (each registers its ops)
from . import module  # noqa: F401  (call_module)
from .base import REGISTRY, SOURCE_OPS, Op, OpDef, TensorLike, is_tensorlike, opdef

__all__ = ["REGISTRY", "SOURCE_OPS", "Op", "OpDef", "TensorLike", "is_tensorlike", "opdef"]

_missing = [op for op in Op if op not in REGISTRY]
assert not _missing, f"ops without a definition: {_missing}"
