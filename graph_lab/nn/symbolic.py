"""``symbolic_trace``: a model captured as torch.fx captures it, its leaf modules kept as ``call_module`` nodes.

The tracer calls the root module's ``forward`` on stand-in tensors. Every ``module(...)`` call on the way reaches
``Tracer.call_module`` instead of ``Module.__call__`` (so no hook fires while tracing, the course note's point):
a leaf module (``is_leaf_module``: by default the built-in layers) becomes one ``call_module`` node whose target
is its qualified name, any other module's ``forward`` is traced through. Parameters and buffers are the graph's
``param`` nodes, named by qualified name (``features.0.weight``).

A ``call_module`` node keeps what the call computes as its region (``module_body``): the module's ``forward``
traced on stand-ins of its arguments and of its own parameters and buffers, returning its result and then the new
value of each buffer it wrote (batch norm's running statistics in training mode).
"""

from __future__ import annotations

import inspect
from typing import Any, Mapping

from ..errors import TraceError
from ..frontends import pytree
from ..frontends.control import recorder_of
from ..frontends.tensor import Storage, Tensor
from ..frontends.trace import Tracer as _Recorder
from ..frontends.trace import bind_arguments, finish, input_type, parse_spec
from ..ir.graph import Graph
from ..ir.source import user_location
from ..ir.types import TensorType
from ..ops import Op
from .module import Module, StateBinding, bound_state, intercepting


class _ForwardOnly:
    """An interceptor that calls ``forward`` directly: inside a module's body nothing is a leaf, no hook fires."""

    @staticmethod
    def call_module(module: Module, args: tuple, kwargs: dict):
        return module.forward(*args, **kwargs)


class ModuleBody:
    """A module's forward traced into a region graph: inputs (*args, *state), outputs (*results, *writes)."""

    def __init__(self, graph: Graph, out_tree: Any, n_results: int, state: list[str], writes: list[str]):
        self.graph, self.out_tree, self.n_results = graph, out_tree, n_results
        self.state = state
        """The module's parameters and buffers (names relative to the module), in region-input order."""
        self.writes = writes
        """The buffers its forward wrote, in region-output order after the results."""


def module_body(module: Module, forward, arg_types: list[TensorType], arg_names: list[str],
                state_types: list[TensorType], shape_env=None) -> ModuleBody:
    """Trace ``forward(*stand_ins)`` (``module``'s forward, its Python arguments fixed) on stand-ins of the tensor
    arguments and of the module's parameters and buffers. ``shape_env``: the enclosing capture's symbolic sizes
    (the region's shape facts become guards of the graph around, as a control-flow region's do)."""
    graph = Graph(type(module).__name__)
    rec = _Recorder(graph, "error", None)
    rec.shape_env = shape_env
    slots = module._state_slots()
    args = [Tensor(rec, graph.add_input(name, t), Storage(f"input {name!r} of {type(module).__name__}"))
            for name, t in zip(arg_names, arg_types)]
    state = [Tensor(rec, graph.add_input(name, t), Storage(f"parameter {name!r}"))
             for (name, _, _), t in zip(slots, state_types)]
    binding = StateBinding({(id(owner), attr): s for (_, owner, attr), s in zip(slots, state)},
                           {(id(owner), attr): name for name, owner, attr in slots})
    kept: list = []

    def call(*stand_ins):
        with bound_state(binding), intercepting(_ForwardOnly):
            result = forward(*stand_ins)
        found, tree = pytree.flatten(result)
        kept[:] = [tree, len(found), list(binding.writes)]
        return [leaf for _, leaf in found] + list(binding.writes.values())

    finish(rec, call, args)
    out_tree, n_results, writes = kept
    return ModuleBody(graph, out_tree, n_results, [name for name, _, _ in slots], writes)


def record_call(module: Module, target: str, args: tuple, kwargs: Mapping | None = None):
    """``module(*args)`` as one ``call_module`` node of the capture its stand-in arguments belong to (a trace, a
    lazy runner, a symbolic trace); on arrays, the module called eagerly (hooks and all).

    The node's operands are the tensor arguments and then the module's parameters and buffers as the capture sees
    them: the stand-ins ``symbolic_trace`` binds them to, or (under a plain ``trace``) their arrays, recorded as
    constants as any array a traced function reads. Other arguments and keywords are Python values, baked in.
    """
    kwargs = dict(kwargs or {})
    leaves, tree = pytree.flatten(list(args))
    values = [leaf for _, leaf in leaves]
    rec = recorder_of(values)
    if rec is None:
        return module(*args, **kwargs)
    if recorder_of(list(kwargs.values())) is not None:
        raise TraceError(f"call_module {target}: keyword arguments holding tensors are not supported; pass tensors "
                         f"positionally")
    tensors = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
    names = _argument_names(module, len(values))
    state_values = [getattr(owner, attr) for _, owner, attr in module._state_slots()]
    state_types = [v.type if isinstance(v, Tensor) else TensorType.of(v) for v in state_values]

    def forward(*stand_ins):
        full, it = list(values), iter(stand_ins)
        for i in tensors:
            full[i] = next(it)
        return module.forward(*pytree.unflatten(tree, full), **kwargs)

    body = module_body(module, forward, [values[i].type for i in tensors], [names[i] for i in tensors], state_types,
                       rec.shape_env)
    operands = [values[i] for i in tensors] + state_values
    attrs = {"target": target, "n_args": len(tensors)}
    if body.writes:
        attrs["writes"] = ",".join(body.writes)
    outs = rec.emit(Op.CALL_MODULE, operands, {**attrs, "body": body.graph})
    for name, value in zip(body.writes, outs[body.n_results:]):
        path, _, attr = name.rpartition(".")
        module.get_submodule(path)._set_buffer(attr, value)  # into the capture's binding, or refused
    return pytree.unflatten(body.out_tree, list(outs[:body.n_results]))


def _argument_names(module: Module, n: int) -> list[str]:
    try:
        params = [p.name for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return (params + [f"arg{i}" for i in range(len(params), n)])[:n]


class Tracer:
    """torch.fx's ``Tracer``: the policy of what a leaf is. Subclass it and override ``is_leaf_module``."""

    def is_leaf_module(self, module: Module, qualified_name: str) -> bool:
        """By default the built-in layers of ``graph_lab.nn`` are leaves, containers and user modules are not."""
        from .containers import ModuleDict, ModuleList, Sequential
        return (type(module).__module__.startswith("graph_lab.nn.")
                and not isinstance(module, (Sequential, ModuleList, ModuleDict)))

    def trace(self, root: Module, shapes: Mapping[str, Any]) -> Graph:
        """The graph of ``root.forward`` on inputs of ``shapes`` (as ``trace`` takes them)."""
        loc = user_location(2)
        if not isinstance(root, Module):
            raise TraceError(f"symbolic_trace takes a graph_lab.nn.Module, got {type(root).__name__}; use "
                             f"graph_lab.trace for a function")
        if not shapes:
            raise TraceError("symbolic_trace: give shapes={'x': (N, C, H, W), ...} for the arguments of forward")
        specs = {name: parse_spec(name, spec) for name, spec in shapes.items()}
        order, _ = bind_arguments(root.forward, list(specs), False)
        from .graph_module import ModuleGraph
        rec = _Recorder(ModuleGraph(type(root).__name__), "error", None)
        graph = rec.graph
        args = [Tensor(rec, graph.add_input(name, input_type(rec, name, *specs[name], loc), loc),
                       Storage(f"input {name!r}")) for name in order]
        slots = root._state_slots()
        state = {}
        for name, owner, attr in slots:
            state[(id(owner), attr)] = Tensor(rec, graph.add_param(name, getattr(owner, attr), loc),
                                              Storage(f"parameter {name}"))
        binding = StateBinding(state, {(id(owner), attr): name for name, owner, attr in slots})
        self.root, self.names = root, {id(m): name for name, m in root.named_modules()}
        with bound_state(binding), intercepting(self):
            finish(rec, root.forward, args)
        stray = [name for name in binding.writes if not _written_by_leaf(graph, binding.writes[name])]
        if stray:
            raise TraceError(f"symbolic_trace: forward writes the buffer(s) {', '.join(stray)} outside a leaf "
                             f"module; a GraphModule runs its leaf modules, which update their own buffers, but "
                             f"cannot replay a write made by traced code. Make the module that writes a leaf "
                             f"(Tracer.is_leaf_module)")
        return graph

    def call_module(self, module: Module, args: tuple, kwargs: dict):
        name = self.names.get(id(module))
        if name is None:
            raise TraceError(f"symbolic_trace: forward called a {type(module).__name__} that is not a submodule "
                             f"of the traced {type(self.root).__name__}; assign it to an attribute in __init__ so "
                             f"that it is registered")
        if module is not self.root and self.is_leaf_module(module, name):
            return record_call(module, name, args, kwargs)
        return module.forward(*args, **kwargs)


def _written_by_leaf(graph: Graph, value) -> bool:
    return isinstance(value, Tensor) and value._value.node.op == Op.CALL_MODULE


def symbolic_trace(root: Module, shapes: Mapping[str, Any], tracer: Tracer | None = None):
    """Capture ``root`` as a ``GraphModule`` (see the module docstring); ``tracer`` sets the leaf policy."""
    from .graph_module import GraphModule
    tracer = tracer or Tracer()
    graph = tracer.trace(root, shapes)
    return GraphModule(root, graph)
