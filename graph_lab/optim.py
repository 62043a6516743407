"""``graph_lab.optim``: SGD and Adam with PyTorch's update rules, and a training step captured once as a graph.

An optimizer is functional at heart: ``update(params, grads, state) -> (params, state)`` computes new values with
``F`` and operators, so it runs eagerly on arrays and is recorded on stand-ins. That is what lets a whole training
step (forward, loss, gradients, update) be traced into one graph and run many times (``CapturedStep``), as the
course note's section 2.2 describes a static training graph. ``step(grads)`` is the eager convenience: it updates
the arrays it was given in place (a module's Parameters keep their identity).

Parameters are a dict of arrays by name (``dict(model.named_parameters())``); gradients come from
``graph_lab.grad`` over that dict (see docs/autodiff.md), never from a ``.grad`` attribute.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .backends.prepared import prepare
from .frontends import functional as F, pytree
from .frontends.trace import trace


def _scalar(value: float) -> np.ndarray:
    return np.array(value, dtype=np.float64)


class Optimizer:
    """Holds the parameters (by name) and the optimizer's state; subclasses define ``init`` and ``update``."""

    def __init__(self, params):
        self.params = dict(params.named_parameters()) if hasattr(params, "named_parameters") else dict(params)
        self.state = self.init(self.params)

    def init(self, params: dict) -> dict:
        raise NotImplementedError

    def update(self, params: dict, grads: dict, state: dict) -> tuple[dict, dict]:
        raise NotImplementedError

    def step(self, grads: dict) -> None:
        """Apply one update to the parameters in place."""
        new, self.state = self.update(self.params, grads, self.state)
        for name, value in new.items():
            self.params[name][...] = value


class SGD(Optimizer):
    """PyTorch's SGD (dampening 0): ``g += weight_decay * p``; with momentum ``buf = momentum * buf + g`` (the
    buffer starts at zero, which gives PyTorch's first ``buf = g`` exactly), ``g = buf`` (or ``g + momentum * buf``
    with nesterov); ``p -= lr * g``."""

    def __init__(self, params, lr: float, momentum: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: lr, momentum and weight_decay must not be negative, got {lr}, {momentum}, "
                             f"{weight_decay}")
        if nesterov and momentum == 0:
            raise ValueError("SGD: nesterov momentum needs a momentum > 0")
        self.lr, self.momentum, self.weight_decay, self.nesterov = lr, momentum, weight_decay, nesterov
        super().__init__(params)

    def init(self, params):
        return {"momentum": {k: np.zeros_like(np.asarray(v)) for k, v in params.items()}} if self.momentum else {}

    def update(self, params, grads, state):
        new_params, new_bufs = {}, {}
        for name, p in params.items():
            g = grads[name]
            if self.weight_decay:
                g = g + self.weight_decay * p
            if self.momentum:
                buf = self.momentum * state["momentum"][name] + g
                new_bufs[name] = buf
                g = g + self.momentum * buf if self.nesterov else buf
            new_params[name] = p - self.lr * g
        return new_params, ({"momentum": new_bufs} if self.momentum else {})


class Adam(Optimizer):
    """PyTorch's Adam, its tensor calls spelled out in the same order::

        t += 1;  g += weight_decay * p
        m = m + (1 - beta1) * (g - m)                       (m.lerp_(g, 1 - beta1))
        v = v * beta2 + (1 - beta2) * g * g                 (v.mul_(beta2).addcmul_(g, g, value=1 - beta2))
        denom = sqrt(v) / sqrt(1 - beta2 ** t) + eps
        p = p - (lr / (1 - beta1 ** t)) * (m / denom)       (p.addcdiv_(m, denom, value=-step_size))

    ``beta ** t`` is NumPy's pow (``t`` is a value of the graph in a captured step); PyTorch takes Python's ``**``,
    which now and then differs from it in the last bit.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        super().__init__(params)

    def init(self, params):
        zeros = {k: np.zeros_like(np.asarray(v)) for k, v in params.items()}
        return {"step": _scalar(0.0), "m": zeros, "v": {k: z.copy() for k, z in zeros.items()}}

    def update(self, params, grads, state):
        beta1, beta2 = self.betas
        t = state["step"] + 1.0
        step_size = self.lr / (1.0 - F.pow(beta1, t))
        correction2_sqrt = F.sqrt(1.0 - F.pow(beta2, t))
        new_params, ms, vs = {}, {}, {}
        for name, p in params.items():
            g = grads[name]
            if self.weight_decay:
                g = g + self.weight_decay * p
            m = state["m"][name]
            m = m + (1.0 - beta1) * (g - m)
            v = state["v"][name] * beta2 + (1.0 - beta2) * (g * g)
            denom = F.sqrt(v) / correction2_sqrt + self.eps
            new_params[name] = p - step_size * (m / denom)
            ms[name], vs[name] = m, v
        return new_params, {"step": t, "m": ms, "v": vs}


def training_step(loss_fn: Callable, optimizer: Optimizer) -> Callable:
    """``step((params, opt_state), *batch) -> (loss, (params, opt_state))``: the gradient of ``loss_fn(params,
    *batch)`` and one update; pure, so it runs eagerly and is captured by ``CapturedStep``."""
    from .autodiff import value_and_grad

    def step(state, *batch):
        params, opt_state = state
        loss, grads = value_and_grad(loss_fn)(params, *batch)
        params, opt_state = optimizer.update(params, grads, opt_state)
        return loss, (params, opt_state)
    return step


class CapturedStep:
    """A training step traced once and run many times: ``step_fn(state, *batch) -> (loss, new_state)`` where
    ``state`` is any nest of arrays (parameters, optimizer state). The graph takes the batch arrays and the
    state as inputs, so each call feeds the state the last call returned; nothing is stored in the graph but its
    structure. ``graph`` is the captured step (forward, backward and update in one)."""

    def __init__(self, step_fn: Callable, state: Any, *example_batch: np.ndarray):
        def step(*args):
            *batch, state_ = args
            return step_fn(state_, *batch)

        shapes = {f"batch{i}": (np.shape(b), np.asarray(b).dtype) for i, b in enumerate(example_batch)}
        self.graph = trace(step, shapes, state)
        self.state = state
        self._run = prepare(self.graph)

    def __call__(self, *batch: np.ndarray) -> float:
        inputs = {f"batch{i}": np.asarray(b) for i, b in enumerate(batch)}
        inputs.update((path, np.asarray(leaf)) for path, leaf in pytree.flatten(self.state, "params")[0])
        loss, self.state = pytree.unflatten(self.graph.out_tree, self._run(inputs))
        return float(loss)

