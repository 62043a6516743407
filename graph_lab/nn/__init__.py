"""``graph_lab.nn``: modules in NumPy with PyTorch's conventions, and torch.fx's capture of them.

``Module``, ``Parameter`` and the built-in layers run eagerly on arrays and are recorded by every frontend
(each layer calls ``graph_lab.F``). ``symbolic_trace(model, shapes)`` captures a model as a ``GraphModule`` whose
leaf modules are ``call_module`` nodes (torch.fx's model); ``inline_modules`` expands them into plain ops,
``fuse_conv_bn`` folds Conv2d -> BatchNorm2d pairs. See docs/nn.md.
"""

from .containers import ModuleDict, ModuleList, Sequential
from .layers import (AvgPool2d, BatchNorm2d, Conv2d, Dropout, Embedding, Flatten, GELU, Identity, LayerNorm, Linear,
                     MaxPool2d, ReLU, manual_seed)
from .graph_module import GraphModule, ModuleGraph, ModuleInterpreter
from .module import Module, Parameter, RemovableHandle, StateDictError, functional_call
from .structure import structure_changed
from .surgery import ModuleTransformer, fold_conv_bn_weights, fuse_conv_bn, inline_modules
from .symbolic import Tracer, record_call, symbolic_trace

__all__ = [
    "Module", "Parameter", "RemovableHandle", "StateDictError", "functional_call", "manual_seed",
    "Linear", "Conv2d", "BatchNorm2d", "MaxPool2d", "AvgPool2d", "ReLU", "GELU", "LayerNorm", "Embedding",
    "Dropout", "Flatten", "Identity", "Sequential", "ModuleList", "ModuleDict",
    "symbolic_trace", "Tracer", "GraphModule", "ModuleGraph", "ModuleInterpreter", "ModuleTransformer",
    "inline_modules", "fuse_conv_bn", "fold_conv_bn_weights", "record_call", "structure_changed",
]
