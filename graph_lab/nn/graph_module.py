"""``GraphModule``: a module whose forward is a graph, as torch.fx's; and the FX views of that graph.

A GraphModule holds the traced root's module tree, rebuilt: each leaf module (a ``call_module`` target) is the
root's own object, shared as FX shares it; each module above the leaves is a new plain ``Module`` holding the same
parameters and buffers, so a pass can put a new module at a target (``fuse_conv_bn``) without touching the user's
model. Calling it runs the graph with ``ModuleInterpreter``: parameters are read from the modules on every call
(never the values stored when traced) and each ``call_module`` node calls its module, hooks included, as the code
FX generates does.

``gm.graph.print_tabular()`` prints FX's columns (opcode, name, target, args, kwargs) and ``gm.code`` FX's
``forward``. That code is for reading: the GraphModule never executes generated text.
"""

from __future__ import annotations

from ..backends.interpreter import Interpreter
from ..console import print_table
from ..frontends import pytree
from ..ir.graph import Graph, Node
from ..ir.literals import format_attr_value
from ..ops import Op, opdef
from .module import Module
from .structure import structure_changed

FX_HEADERS = ("opcode", "name", "target", "args", "kwargs")


class ModuleGraph(Graph):
    """The graph of a GraphModule: a ``Graph`` whose ``print_tabular`` shows torch.fx's columns."""

    def print_tabular(self) -> None:
        print_table(FX_HEADERS, fx_rows(self))


def fx_names(graph: Graph) -> dict:
    """FX's name of each value: inputs by name, parameters and module calls by qualified name with ``_`` for
    ``.``, other ops by op name, numbered from the second on (``add``, ``add_1``)."""
    names, taken = {}, {}

    def fresh(base: str) -> str:
        base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in base) or "v"
        n = taken.get(base, 0)
        taken[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    for node in graph.nodes:
        if node.op in (Op.INPUT, Op.PARAM):
            base = node.attrs["name"].replace(".", "_")
        elif node.op == Op.CALL_MODULE:
            base = node.attrs["target"].replace(".", "_")
        elif node.op == Op.CONST:
            base = "_tensor_constant"
        else:
            base = str(node.op)
        first = fresh(base)
        for i, v in enumerate(node.outputs):
            names[v] = first if i == 0 else f"{first}[{i}]"
    return names


def _module_state_only(node: Node) -> bool:
    """A parameter that only module calls read (as their state operands): FX shows no ``get_attr`` for it, since
    the module reads its own parameters."""
    return node.op == Op.PARAM and all(u.op == Op.CALL_MODULE and
                                       all(i >= u.attrs["n_args"] for i, v in enumerate(u.inputs) if v is node.outputs[0])
                                       for u in node.outputs[0].users)


def _is_scalar_const(node: Node) -> bool:
    return node.op == Op.CONST and getattr(node.attrs["value"], "ndim", 0) == 0


def _arg(v, names) -> str:
    return format_attr_value(v.node.attrs["value"]) if _is_scalar_const(v.node) else names[v]


def _kwargs(node: Node) -> dict:
    hidden = set(opdef(node.op).regions) | {"target", "n_args"}
    return {k: v for k, v in node.attrs.items() if k not in hidden}


def fx_rows(graph: Graph) -> list[list[str]]:
    """One row per node as torch.fx's ``print_tabular`` shows it (scalar constants appear inline in args)."""
    names, rows = fx_names(graph), []
    for node in graph.nodes:
        name = names[node.outputs[0]]
        if node.op == Op.INPUT:
            rows.append(["placeholder", name, node.attrs["name"], "()", "{}"])
        elif node.op == Op.PARAM:
            if not _module_state_only(node):
                rows.append(["get_attr", name, node.attrs["name"], "()", "{}"])
        elif node.op == Op.CONST:
            if not _is_scalar_const(node):
                rows.append(["get_attr", name, name, "()", "{}"])
        else:
            args = node.inputs[:node.attrs["n_args"]] if node.op == Op.CALL_MODULE else node.inputs
            shown = "(" + ", ".join(_arg(v, names) for v in args) + ("," if len(args) == 1 else "") + ")"
            kwargs = "{" + ", ".join(f"{k}: {format_attr_value(v)}" for k, v in _kwargs(node).items()) + "}"
            opcode, target = (("call_module", node.attrs["target"]) if node.op == Op.CALL_MODULE
                              else ("call_function", f"F.{node.op}"))
            rows.append([opcode, name, target, shown, kwargs])
    outs = "(" + ", ".join(_arg(v, names) for v in graph.outputs) + ("," if len(graph.outputs) == 1 else "") + ")"
    rows.append(["output", "output", "output", outs, "{}"])
    return rows


def _attribute_path(qualified: str) -> str:
    """``self.features.conv1``, with ``getattr`` for parts that are not identifiers (``Sequential``'s ``0``)."""
    text = "self"
    for part in qualified.split("."):
        text = f"{text}.{part}" if part.isidentifier() else f"getattr({text}, {part!r})"
    return text


def fx_code(graph: Graph) -> str:
    """The ``forward`` torch.fx would generate for ``graph``: one line per node."""
    names = fx_names(graph)
    inputs = [names[n.outputs[0]] for n in graph.input_nodes]
    lines = [f"def forward(self, {', '.join(inputs)}):"]
    for node in graph.nodes:
        if node.op == Op.INPUT or _is_scalar_const(node) or _module_state_only(node):
            continue
        outs = names[node.outputs[0]] if len(node.outputs) == 1 else \
            "(" + ", ".join(names[v].replace("[", "_").rstrip("]") for v in node.outputs) + ")"
        if node.op == Op.PARAM:
            lines.append(f"    {outs} = {_attribute_path(node.attrs['name'])}")
        elif node.op == Op.CONST:
            lines.append(f"    {outs} = self.{outs}")
        elif node.op == Op.CALL_MODULE:
            args = ", ".join(_arg(v, names) for v in node.inputs[:node.attrs["n_args"]])
            lines.append(f"    {outs} = {_attribute_path(node.attrs['target'])}({args})")
        else:
            parts = [_arg(v, names) for v in node.inputs]
            parts += [f"{k}={format_attr_value(v)}" for k, v in _kwargs(node).items()]
            lines.append(f"    {outs} = F.{node.op}({', '.join(parts)})")
    result = ", ".join(_arg(v, names) for v in graph.outputs)
    lines.append(f"    return {result}")
    return "\n".join(lines) + "\n"


class GraphModule(Module):
    """A module whose ``forward`` runs ``graph`` (see the module docstring)."""

    def __init__(self, root: Module, graph: Graph):
        super().__init__()
        targets = {n.attrs["target"] for n in graph.nodes if n.op == Op.CALL_MODULE}
        _copy_tree(root, self, "", targets)
        structure_changed()  # (the tree was written into the dicts directly)
        object.__setattr__(self, "graph", graph)
        object.__setattr__(self, "root_type", type(root).__name__)
        self.train(root.training)

    @property
    def code(self) -> str:
        """FX's generated ``forward`` for this graph (for reading; the module runs the graph itself)."""
        return fx_code(self.graph)

    def print_tabular(self) -> None:
        print_table(FX_HEADERS, fx_rows(self.graph))

    def forward(self, *args):
        names = self.graph.input_names
        if len(args) != len(names):
            raise TypeError(f"GraphModule of {self.root_type} takes {len(names)} argument(s) ({', '.join(names)}), "
                            f"got {len(args)}")
        flat = ModuleInterpreter(self).run(dict(zip(names, args)))
        return pytree.unflatten(self.graph.out_tree, flat) if self.graph.out_tree is not None else flat

    def extra_repr(self) -> str:
        return f"traced from {self.root_type}"


def _copy_tree(source: Module, target: Module, prefix: str, leaves: set[str]) -> None:
    for name, p in source._parameters.items():
        target._parameters[name] = p
    for name, b in source._buffers.items():
        target._buffers[name] = b
    target._non_persistent.update(source._non_persistent)
    for name, child in source._modules.items():
        path = f"{prefix}.{name}" if prefix else name
        if child is None or path in leaves:
            target._modules[name] = child
        else:
            shell = Module()
            object.__setattr__(shell, "training", child.training)
            _copy_tree(child, shell, path, leaves)
            target._modules[name] = shell


class ModuleInterpreter(Interpreter):
    """Runs a GraphModule's graph: parameters read from the modules, ``call_module`` nodes calling their module.
    Override ``call_module`` to run a module call differently."""

    def __init__(self, gm: Module, graph: Graph | None = None):
        super().__init__(graph if graph is not None else gm.graph)
        self.module = gm
        """The module tree that targets and parameter names refer to."""

    def read_param(self, node: Node):
        name = node.attrs["name"]
        if name in self.inputs:
            return self.inputs[name]
        path, _, attr = name.rpartition(".")
        return getattr(self.module.get_submodule(path), attr)

    def control(self, node: Node, args: tuple):
        if node.op != Op.CALL_MODULE:
            return super().control(node, args)
        target = node.attrs["target"]
        result = self.call_module(target, args[:node.attrs["n_args"]])
        outs = [leaf for _, leaf in pytree.flatten(result)[0]]
        module = self.module.get_submodule(target)
        writes = node.attrs.get("writes", "")
        outs += [getattr(module, name) for name in writes.split(",")] if writes else []
        return tuple(outs)

    def call_module(self, target: str, args: tuple):
        """Call the module at ``target`` (through ``Module.__call__``: its hooks fire)."""
        return self.module.get_submodule(target)(*args)
