"""Autodiff on the IR: one derivative rule (VJP) per differentiable op, registered into the op table
(``OpDef.vjp``) by the ``rules_*`` modules, and ``grad`` / ``value_and_grad`` / ``grad_graph`` built on them.
See docs/autodiff.md."""

from . import (rules_complex, rules_control, rules_elementwise, rules_library, rules_linalg, rules_movement,  # noqa: F401
               rules_nn, rules_scan, rules_statistics, rules_structure)  # (each registers its rules)
from .core import NoDerivativeError, grad, grad_graph, value_and_grad

__all__ = ["grad", "value_and_grad", "grad_graph", "NoDerivativeError"]
