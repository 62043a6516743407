"""graph_lab: capture Python/NumPy programs as computation graphs, check when a graph may be reused,
transform it, and run it.

The public API, re-exported here and nothing else. Two subpackages are imported on their own (they are not
needed to capture and run a graph): ``graph_lab.equivalence`` (check, counterexample, isomorphic,
structural_hash) and ``graph_lab.testing`` (the random program generator and the ways registry).

The bytecode frontend (``compile``, ``explain``), ``script``, the passes and backends (``compile_graph``,
``run_pipeline``, ``simplify``, ``replace_pattern``, ``cond_to_select``), ``parse``, ``save``/``load`` and ``view``
are imported on first use (``__getattr__`` below), so that ``import graph_lab`` loads only what capturing and
running a graph needs. ``__version__`` is read from the installed package's metadata on first use. Importing
``graph_views`` registers the views of a Graph that upper layers write (``g.code``, ``g.to_dot()``, ...).
"""

import importlib
from typing import TYPE_CHECKING, Any

from .backends.options import FusedFallbackWarning, FusedOptions
from .backends.reference import run
from .backends.interpreter import Interpreter, Transformer
from .errors import (GraphEditError, GraphExecutionError, GraphInputError, GraphLabError, GraphLoadError,
                     GraphParseError, GraphSaveError, OpError, ScriptError, TraceError, VerifyError)
from .frontends import functional as F
from .frontends.lazy import LazyRunner
from .frontends.make_graph import Spec, make_graph
from .frontends.symbols import SymFloat, SymInt
from .frontends.tensor import Tensor
from .frontends.trace import trace
from . import graph_views  # noqa: F401  (registers g.code, g.to_python(), g.to_dot(), g._repr_html_)
from .guards import GuardFailure, ShapeGuard, ValueGuard, check_guards, failing_guards
from .logs import set_logs
from .ir.builder import GraphBuilder
from .ir.graph import Graph, Node, Value
from .ir.shape_env import Dim
from .ir.source import SourceLoc
from .ir.types import TensorType
from .ops import Op

__all__ = [
    "F", "trace", "script", "make_graph", "Spec", "Dim", "SymInt", "SymFloat", "ShapeGuard",
    "run", "check_guards", "failing_guards", "LazyRunner", "compile", "CompiledFunction", "explain",
    "ExplainReport", "GraphBreak", "RecompileLimitWarning", "EagerFallbackWarning", "FrozenRandomWarning",
    "set_logs", "parse", "save", "load", "view",
    "Graph", "Node", "Value", "TensorType", "SourceLoc", "Op", "Tensor", "ValueGuard", "GuardFailure",
    "GraphBuilder", "Interpreter", "Transformer", "replace_pattern", "simplify", "cond_to_select", "compile_graph",
    "CompiledGraph", "FusedOptions", "FusedFallbackWarning", "run_pipeline", "PIPELINES",
    "GraphLabError", "TraceError", "ScriptError", "GraphExecutionError", "GraphInputError", "OpError", "VerifyError",
    "GraphEditError", "GraphParseError", "GraphLoadError", "GraphSaveError", "grad", "value_and_grad",
    "grad_graph",
]

if TYPE_CHECKING:  # what _ON_FIRST_USE loads lazily, spelled out for type checkers (never run)
    from .backends.compiled import CompiledGraph, compile_graph
    from .frontends.dynamo.explain import ExplainReport, explain
    from .frontends.dynamo.runtime import CompiledFunction, GraphBreak, RecompileLimitWarning, compile
    from .frontends.script import script
    from .ir.parser import parse
    from .ir.serialize import load, save
    from .passes.cond_to_select import cond_to_select
    from .passes.manager import run_pipeline
    from .passes.pipelines import PIPELINES
    from .frontends.patterns import replace_pattern
    from .passes.simplify import simplify
    from .viewer import view

    __version__: str

_ON_FIRST_USE = {
    "compile": "frontends.dynamo.runtime", "CompiledFunction": "frontends.dynamo.runtime",
    "GraphBreak": "frontends.dynamo.runtime", "RecompileLimitWarning": "frontends.dynamo.runtime",
    "EagerFallbackWarning": "frontends.dynamo.fallback",
    "explain": "frontends.dynamo.explain", "ExplainReport": "frontends.dynamo.explain",
    "script": "frontends.script", "view": "viewer", "replace_pattern": "frontends.patterns",
    "cond_to_select": "passes.cond_to_select", "compile_graph": "backends.compiled",
    "CompiledGraph": "backends.compiled", "run_pipeline": "passes.manager", "PIPELINES": "passes.pipelines",
    "simplify": "passes.simplify", "FrozenRandomWarning": "frontends.randomness", "parse": "ir.parser",
    "load": "ir.serialize", "save": "ir.serialize",
    "grad": "autodiff", "value_and_grad": "autodiff", "grad_graph": "autodiff",
}


def _version() -> str:
    """The installed distribution's version; read on first use, since importlib.metadata is slow to import."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("graph-lab")
    except PackageNotFoundError:  # run from a source tree that was never installed: ask its pyproject.toml
        import tomllib
        from pathlib import Path
        try:
            with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as f:
                return tomllib.load(f)["project"]["version"]
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module 'graph_lab' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # (found directly from now on)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ON_FIRST_USE) | {"__version__"})
