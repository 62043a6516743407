"""graph_lab: capture Python/NumPy programs as computation graphs, check when a graph may be reused,
transform it, and run it.

The public API, re-exported here and nothing else. Two subpackages are imported on their own (they are not
needed to capture and run a graph): ``graph_lab.equivalence`` (check, counterexample, isomorphic,
structural_hash) and ``graph_lab.testing`` (the random program generator and the ways registry).
"""

from .backends.compiled import CompiledGraph, compile_graph
from .backends.options import FusedFallbackWarning, FusedOptions
from .backends.interpret import run
from .backends.interpreter import Interpreter, Transformer
from .errors import (GraphEditError, GraphExecutionError, GraphInputError, GraphLabError, GraphLoadError,
                     GraphParseError, GraphSaveError, OpError, ScriptError, TraceError, VerifyError)
from .frontends import functional as F
from .frontends.dynamo.explain import ExplainReport, explain
from .frontends.dynamo.runtime import CompiledFunction, GraphBreak, RecompileLimitWarning, compile
from .frontends.lazy import LazyRunner
from .frontends.make_graph import Spec, make_graph
from .frontends.script import script
from .frontends.symbols import SymFloat, SymInt
from .frontends.tensor import Tensor
from .frontends.trace import trace
from .guards import GuardFailure, ShapeGuard, ValueGuard, check_guards, failing_guards
from .logs import set_logs
from .ir.builder import GraphBuilder
from .ir.graph import Graph, Node, Value
from .ir.parser import parse
from .ir.serialize import load, save
from .ir.shape_env import Dim
from .ir.source import SourceLoc
from .ir.types import TensorType
from .ops import Op
from .viewer import view
from .passes.rewrite import replace_pattern
from .passes.cond_to_select import cond_to_select
from .passes.manager import PIPELINES, run_pipeline
from .passes.simplify import simplify

__all__ = [
    "F", "trace", "script", "make_graph", "Spec", "Dim", "SymInt", "SymFloat", "ShapeGuard",
    "run", "check_guards", "failing_guards", "LazyRunner", "compile", "CompiledFunction", "explain",
    "ExplainReport", "GraphBreak", "RecompileLimitWarning", "set_logs", "parse", "save", "load", "view",
    "Graph", "Node", "Value", "TensorType", "SourceLoc", "Op", "Tensor", "ValueGuard", "GuardFailure",
    "GraphBuilder", "Interpreter", "Transformer", "replace_pattern", "simplify", "cond_to_select", "compile_graph",
    "CompiledGraph", "FusedOptions", "FusedFallbackWarning", "run_pipeline", "PIPELINES",
    "GraphLabError", "TraceError", "ScriptError", "GraphExecutionError", "GraphInputError", "OpError", "VerifyError",
    "GraphEditError", "GraphParseError", "GraphLoadError", "GraphSaveError",
]
__version__ = "0.1.0"
