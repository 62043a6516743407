"""Graph surgery on GraphModules: ``ModuleTransformer``, ``inline_modules`` and ``fuse_conv_bn``.

``ModuleTransformer`` walks a GraphModule's graph building a new one (``backends.interpreter.Transformer``), with
one more method to override, ``call_module``: return new values to replace a module call by a subgraph.
``inline_modules`` is that transformer with every call replaced by its region's ops, giving a plain graph that
the passes and backends take. ``fuse_conv_bn`` is the course note's Conv + BatchNorm fusion on ``call_module``
nodes: in eval mode, ``bn(conv(x))`` becomes one convolution with folded weights and bias.
"""

from __future__ import annotations

import numpy as np

from ..backends.interpreter import Transformer
from ..errors import GraphEditError
from ..ir.graph import Graph, Node
from ..ops import Op
from .layers import BatchNorm2d, Conv2d
from .module import Module, Parameter
from .structure import structure_changed
from .symbolic import module_body


class ModuleTransformer(Transformer):
    """``Transformer`` over a GraphModule: parameters take the modules' current values, and each ``call_module``
    node goes through ``call_module(node, target, args)``, which copies the call unless overridden."""

    def __init__(self, gm: Module):
        super().__init__(gm.graph)
        self.module = gm

    def read_param(self, node: Node):
        path, _, attr = node.attrs["name"].rpartition(".")
        return self.builder.param(node.attrs["name"], np.asarray(getattr(self.module.get_submodule(path), attr)))

    def control(self, node: Node, args: tuple):
        if node.op != Op.CALL_MODULE:
            return super().control(node, args)
        return self.call_module(node, node.attrs["target"], args)

    def call_module(self, node: Node, target: str, args: tuple):
        """The new values of ``node``'s outputs (a tuple); ``args`` are all its operands, the call's arguments
        first (``node.attrs['n_args']`` of them), then the module's parameters and buffers."""
        return self.call_op(node, args)

    def inline(self, region: Graph, args) -> tuple:
        """Emit ``region``'s ops on ``args`` into the new graph (nested module calls inlined too)."""
        env = dict(zip((n.outputs[0] for n in region.input_nodes), args))
        for n in region.nodes:
            if n.op == Op.INPUT:
                continue
            if n.op == Op.CONST:
                env[n.outputs[0]] = self.builder.const(n.attrs["value"])
                continue
            ins = [env[v] for v in n.inputs]
            if n.op == Op.CALL_MODULE:
                outs = self.inline(n.attrs["body"], ins)
            else:
                made = self.builder.emit(n.op, ins, n.attrs)
                outs = made if isinstance(made, tuple) else (made,)
            for v, new in zip(n.outputs, outs):
                env[v] = new
        return tuple(env[v] for v in region.outputs)


class _Inliner(ModuleTransformer):
    def call_module(self, node, target, args):
        if node.attrs.get("writes"):
            raise GraphEditError(f"inline_modules: {target} ({type(self.module.get_submodule(target)).__name__}) "
                                 f"writes its buffers {node.attrs['writes']} when called (training mode), a side "
                                 f"effect a plain graph would drop; call gm.eval() and trace again, or run the "
                                 f"GraphModule itself")
        return self.inline(node.attrs["body"], args)


def inline_modules(gm: Module) -> Graph:
    """A plain graph computing what ``gm`` computes: every ``call_module`` replaced by its region's ops, every
    parameter a ``param`` node holding the module's current value. Passes and backends take it."""
    return _Inliner(gm).transform()


# --- Conv2d -> BatchNorm2d folding


def _module_at(gm: Module, node: Node):
    return gm.get_submodule(node.attrs["target"]) if node.op == Op.CALL_MODULE else None


def fold_conv_bn_weights(conv: Conv2d, bn: BatchNorm2d) -> tuple[np.ndarray, np.ndarray]:
    """``w * s`` and ``(b - mean) * s + beta`` with ``s = gamma / sqrt(running_var + eps)`` per output channel."""
    scale = 1.0 / np.sqrt(bn.running_var + bn.eps)
    if bn.affine:
        scale = bn.weight * scale
    weight = conv.weight * scale.reshape(-1, 1, 1, 1)
    bias = conv.bias if conv.bias is not None else np.zeros(conv.out_channels)
    bias = (bias - bn.running_mean) * scale + (bn.bias if bn.affine else 0.0)
    return np.asarray(weight), np.asarray(bias)


def _why_not(gm: Module, conv_node: Node, bn_node: Node) -> str | None:
    bn, target = gm.get_submodule(bn_node.attrs["target"]), bn_node.attrs["target"]
    if bn.training:
        return (f"{target} is in training mode: it normalizes with each batch's own statistics (and updates its "
                f"running ones), which no fixed weights reproduce; call gm.eval() first")
    if not bn.track_running_stats:
        return f"{target} keeps no running statistics (track_running_stats=False), so it has none to fold"
    out = conv_node.outputs[0]
    readers = [u for u in dict.fromkeys(out.users) if u is not bn_node]
    if readers or any(v is out for v in gm.graph.outputs) or bn_node.inputs[0] is not out:
        who = ", ".join(f"%{gm.graph.numbering()[u.outputs[0]]} = {u.op}" for u in readers) or "the graph's output"
        return (f"the output of {conv_node.attrs['target']} is also read by {who}: folding the batch norm into the "
                f"convolution would change what that reader sees")
    return None


def fuse_conv_bn(gm: Module) -> list[str]:
    """Fold each ``call_module`` Conv2d -> BatchNorm2d pair of ``gm`` into one convolution, editing ``gm`` in place
    (its graph, and a new Conv2d at the convolution's target; the user's model is not touched). Returns one line
    per pair: what was fused, or why it was not (training mode, another reader of the convolution's output).

    Folding reassociates the arithmetic: the result matches the unfused graph within float64 rounding (the
    documented tolerance is rtol = atol = 1e-7 of docs/nn.md; measured differences are near 1e-15)."""
    report = []
    graph = gm.graph
    for bn_node in list(graph.nodes):
        if not isinstance(_module_at(gm, bn_node), BatchNorm2d) or bn_node.attrs["n_args"] != 1:
            continue
        conv_node = bn_node.inputs[0].node
        if not isinstance(_module_at(gm, conv_node), Conv2d):
            continue
        pair = f"{conv_node.attrs['target']} -> {bn_node.attrs['target']}"
        reason = _why_not(gm, conv_node, bn_node)
        if reason is not None:
            report.append(f"kept {pair}: {reason}")
            continue
        _fold(gm, conv_node, bn_node)
        report.append(f"fused {pair} into {conv_node.attrs['target']}")
    graph.remove_dead_code()
    graph.verify()
    return report


def _fold(gm: Module, conv_node: Node, bn_node: Node) -> None:
    graph, target = gm.graph, conv_node.attrs["target"]
    conv, bn = gm.get_submodule(target), gm.get_submodule(bn_node.attrs["target"])
    weight, bias = fold_conv_bn_weights(conv, bn)
    fused = Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, conv.dilation,
                   conv.groups, bias=True)
    fused.weight, fused.bias = Parameter(weight), Parameter(bias)
    fused.train(False)
    parent, _, attr = target.rpartition(".")
    gm.get_submodule(parent)._modules[attr] = fused
    structure_changed()
    w_value = graph.insert_before(conv_node, Op.PARAM, [], {"name": f"{target}.weight", "type": _type(weight)})
    b_value = graph.insert_before(conv_node, Op.PARAM, [], {"name": f"{target}.bias", "type": _type(bias)})
    for node, value in ((w_value, weight), (b_value, bias)):
        graph.param_values[node.attrs["name"]] = value
    old_params = [v.node for v in conv_node.inputs[1:]]
    x = conv_node.inputs[0]
    body = module_body(fused, fused.forward, [x.type], ["x"], [_type(weight), _type(bias)])
    new = graph.insert_before(bn_node, Op.CALL_MODULE, [x, w_value.outputs[0], b_value.outputs[0]],
                              {"target": target, "n_args": 1, "body": body.graph})
    new.loc = conv_node.loc
    graph.replace_all_uses_with(bn_node.outputs[0], new.outputs[0])
    graph.erase_node(bn_node)
    graph.erase_node(conv_node)
    for node in old_params:  # the stale param nodes of the old convolution (their names are now the new ones')
        if not node.outputs[0].users:
            graph.nodes.remove(node)


def _type(array):
    from ..ir.types import TensorType
    return TensorType.of(np.asarray(array))
