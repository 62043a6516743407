"""graph_lab: capture Python/NumPy programs as computation graphs, check when a graph may be reused,
transform it, and run it.

The public API, re-exported here and nothing else.
"""

from .backends.interpret import run
from .errors import (GraphExecutionError, GraphInputError, GraphLabError, GraphLoadError, GraphParseError,
                     GraphSaveError, OpError, TraceError, VerifyError)
from .frontends import functional as F
from .frontends.lazy import LazyRunner
from .frontends.tensor import Tensor
from .frontends.trace import trace
from .guards import GuardFailure, ValueGuard, check_guards, failing_guards
from .ir.graph import Graph, Node, Value
from .ir.parser import parse
from .ir.serialize import load, save
from .ir.source import SourceLoc
from .ir.types import TensorType
from .ops import Op

__all__ = [
    "F", "trace", "run", "check_guards", "failing_guards", "LazyRunner", "parse", "save", "load",
    "Graph", "Node", "Value", "TensorType", "SourceLoc", "Op", "Tensor", "ValueGuard", "GuardFailure",
    "GraphLabError", "TraceError", "GraphExecutionError", "GraphInputError", "OpError", "VerifyError",
    "GraphParseError", "GraphLoadError", "GraphSaveError",
]
__version__ = "0.1.0"
