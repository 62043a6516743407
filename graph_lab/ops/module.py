"""``call_module``: one call of a leaf module of ``graph_lab.nn``, as torch.fx records it.

The node's ``target`` is the module's qualified name (``features.conv1``), so a pass can ask the module for it
(``gm.get_submodule(node.target)``), as the course note's Conv + BatchNorm fusion does. What the call computes is
kept too, as the node's region ``body``: the module's ``forward`` traced on stand-ins of its arguments, with its
parameters and buffers lifted into region inputs. So a graph with ``call_module`` nodes prints, parses back,
verifies and runs like any other (the region is run as ``cond`` runs its branches), and ``nn.inline_modules``
expands each node into the ops of its region for the passes and backends that want plain ops.

    call_module(*args, *state)   {body}   body: (*args, *state) -> outputs
    attributes: target (the qualified name), n_args (how many operands are the call's arguments; the rest are
    the module's parameters and buffers, in the order the body reads them), and writes (only when the module
    writes buffers: their names, comma-separated, whose new values are the outputs after the results)
"""

from __future__ import annotations

from ..errors import OpError
from .base import Op, OpDef, register, static_int
from .control import _expect_inputs, region_signature


def _call_module(*operands, target, n_args, body, writes=""):
    return tuple(body(*operands))


def _bind_call_module(body, *operands, target: str, n_args: int | None = None, writes: str = ""):
    if not isinstance(target, str) or not target:
        raise OpError(f"call_module: target must be the module's qualified name (a non-empty str), got {target!r}")
    n_args = len(operands) if n_args is None else static_int(Op.CALL_MODULE, "n_args", n_args, symbolic=False)
    attrs = {"target": target, "n_args": n_args}
    if writes:
        attrs["writes"] = str(writes)
    return list(operands), {**attrs, "body": body}


def _infer_call_module(types, attrs):
    if not isinstance(attrs.get("target"), str):
        raise OpError(f"call_module: target must be a str, got {attrs.get('target')!r}")
    if not 0 <= attrs["n_args"] <= len(types):
        raise OpError(f"call_module: n_args={attrs['n_args']} does not fit {len(types)} operands")
    ins, outs = region_signature(Op.CALL_MODULE, "body", attrs["body"])
    _expect_inputs(Op.CALL_MODULE, "body", ins, types, "the call's arguments and the module's state")
    return outs


register(OpDef(Op.CALL_MODULE, "control", _bind_call_module, _infer_call_module, _call_module, multi_output=True,
               regions=("body",), doc="a leaf module's forward (target: its qualified name), its body a region"))
