"""``fold_conv_bn(g)``: a batch norm with running statistics that reads a convolution becomes part of it.

Inference-mode batch norm is a per-channel affine map, ``y = (z - mean) * s + beta`` with
``s = gamma / sqrt(var + eps)``, and a convolution is linear in its weights, so::

    batch_norm(conv2d(x, w, b)) == conv2d(x, w * s[:, None, None, None], (b - mean) * s + beta)

The pass writes the new weight and bias as ordinary nodes computed from the old ones; when those are constants
(``freeze_params`` first), ``fold_constants`` then computes them once and the batch norm is gone from every
call. Not bit for bit (the scale is applied to the weights before the sums instead of after), so it belongs to
the ``inference`` pipeline, checked within a tolerance.

A fold is refused, with the reason reported, when
- the convolution's output is read by anything else (it would see the normalized values instead);
- the statistics, scale or shift depend on the graph's inputs (batch statistics, as in training mode: they are
  computed *from* the convolution's output, so the new weights could not be computed before it);
- the convolution's weights depend on the inputs (nothing could be folded ahead of time);
- the batch norm computes in another dtype than the convolution (float64 statistics under a float32 convolution):
  the folded convolution would then sum in float64, which is not the float32 convolution's result.
Groups need no special case: each output channel belongs to one group and has its own row of ``w``.
"""

from __future__ import annotations

from ..ir.graph import Graph, Node, Value
from ..ops import Op


def _static(v: Value, memo: dict) -> bool:
    """True when ``v`` depends on no graph input (only on constants and parameters)."""
    node = v.node
    if id(node) not in memo:
        if node.op == Op.INPUT:
            memo[id(node)] = False
        else:
            memo[id(node)] = all(_static(u, memo) for u in node.inputs)
    return memo[id(node)]


def refusal(graph: Graph, bn: Node, memo: dict) -> str | None:
    """Why ``bn`` cannot be folded into the convolution it reads; None when it can."""
    conv_out = bn.inputs[0]
    conv = conv_out.node
    if not all(_static(v, memo) for v in bn.inputs[1:]):
        return "the statistics or the affine parameters depend on the graph's inputs (batch statistics)"
    if not all(_static(v, memo) for v in conv.inputs[1:]):
        return "the convolution's weights depend on the graph's inputs"
    if len(set(map(id, conv_out.users))) > 1 or conv_out in graph.outputs:
        return "the convolution's output is also read elsewhere"
    if conv_out.type.dtype != bn.output.type.dtype:
        return (f"the convolution computes {conv_out.type.dtype} but the batch norm {bn.output.type.dtype}: the "
                f"folded convolution would sum in {bn.output.type.dtype}, another result")
    return None


def _fold(graph: Graph, bn: Node) -> Value:
    conv = bn.inputs[0].node
    x, w = conv.inputs[0], conv.inputs[1]
    mean, var, *affine = bn.inputs[1:]
    affine_it = iter(affine)
    gamma = next(affine_it) if bn.attrs["has_weight"] else None
    beta = next(affine_it) if bn.attrs["has_bias"] else None

    def emit(op, *args, **attrs) -> Value:
        inputs = [a if isinstance(a, Value) else graph.insert_before(bn, Op.CONST, [], {"value": a}, bn.loc).output
                  for a in args]
        return graph.insert_before(bn, op, inputs, attrs, bn.loc).output

    scale = emit(Op.RECIPROCAL, emit(Op.SQRT, emit(Op.ADD, var, bn.attrs["eps"])))
    if gamma is not None:
        scale = emit(Op.MUL, gamma, scale)
    new_w = emit(Op.MUL, w, emit(Op.RESHAPE, scale, shape=(scale.type.shape[0], 1, 1, 1)))
    old_b = conv.inputs[2] if conv.attrs["has_bias"] else None
    shifted = emit(Op.NEG, mean) if old_b is None else emit(Op.SUB, old_b, mean)
    new_b = emit(Op.MUL, shifted, scale)
    if beta is not None:
        new_b = emit(Op.ADD, new_b, beta)
    attrs = dict(conv.attrs, has_bias=True)
    return graph.insert_before(bn, Op.CONV2D, [x, new_w, new_b], attrs, conv.loc).output


def fold_conv_bn(graph: Graph) -> list[str]:
    report = []
    memo: dict = {}
    numbering = graph.numbering()
    for bn in list(graph.nodes):
        if bn.op != Op.BATCH_NORM or bn.inputs[0].node.op != Op.CONV2D:
            continue
        conv = bn.inputs[0].node
        text = f"{graph.node_text(conv, numbering)} + {graph.node_text(bn, numbering)}"
        why = refusal(graph, bn, memo)
        if why is None:
            folded = _fold(graph, bn)
            if folded.type != bn.output.type:
                why = (f"the folded convolution would compute {folded.type} where the batch norm computes "
                       f"{bn.output.type}")
                _erase_unread(graph, folded.node)
        if why is not None:
            report.append(f"refused {text}: {why}")
            continue
        graph.replace_all_uses_with(bn.output, folded)
        graph.erase_node(bn)
        graph.erase_node(conv)
        report.append(f"folded {text}")
    return report


def _erase_unread(graph: Graph, node: Node) -> None:
    """Remove ``node`` and whatever it alone needed among the nodes just inserted for it."""
    stack = [node]
    while stack:
        n = stack.pop()
        if any(v.users or v in graph.outputs for v in n.outputs) or n.op in (Op.INPUT, Op.PARAM):
            continue
        inputs = list(n.inputs)
        graph.erase_node(n)
        stack.extend(v.node for v in inputs if v.node in graph.nodes)
