"""SGD and Adam against their update equations written out in NumPy (float64, bit for bit), and training steps
captured once and run many times: an MLP and a CNN on synthetic deterministic tasks reach a stated loss."""

from __future__ import annotations

import time

import numpy as np
import pytest

import graph_lab as gl
from graph_lab import F, nn, optim

RNG = np.random.default_rng(11)


def _params():
    return {"w": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2)}


def _grads_sequence(n):
    return [{"w": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2)} for _ in range(n)]


def test_sgd_momentum_weight_decay_matches_its_equations():
    params = _params()
    opt = optim.SGD({k: v.copy() for k, v in params.items()}, lr=0.1, momentum=0.9, weight_decay=0.01)
    p = {k: v.copy() for k, v in params.items()}
    buf = {k: None for k in p}
    for grads in _grads_sequence(5):
        opt.step(grads)
        for k in p:  # PyTorch's SGD, written out
            g = grads[k] + 0.01 * p[k]
            buf[k] = g.copy() if buf[k] is None else 0.9 * buf[k] + g
            p[k] = p[k] - 0.1 * buf[k]
        for k in p:
            np.testing.assert_array_equal(opt.params[k], p[k])


def test_adam_matches_pytorchs_update_bit_for_bit():
    params = _params()
    opt = optim.Adam({k: v.copy() for k, v in params.items()}, lr=0.01, betas=(0.8, 0.99), eps=1e-8,
                     weight_decay=0.1)
    p = {k: v.copy() for k, v in params.items()}
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(x) for k, x in p.items()}
    for t, grads in enumerate(_grads_sequence(6), start=1):
        opt.step(grads)
        for k in p:
            g = grads[k] + 0.1 * p[k]
            m[k] = m[k] + (1 - 0.8) * (g - m[k])                    # exp_avg.lerp_(grad, 1 - beta1)
            v[k] = v[k] * 0.99 + (1 - 0.99) * (g * g)               # exp_avg_sq.mul_(beta2).addcmul_(g, g, 1 - beta2)
            # beta ** t with NumPy's pow (PyTorch uses Python's **, which differs in the last bit now and then)
            step_size = 0.01 / (1 - np.power(0.8, np.float64(t)))
            denom = np.sqrt(v[k]) / np.sqrt(1 - np.power(0.99, np.float64(t))) + 1e-8
            p[k] = p[k] - step_size * (m[k] / denom)                # param.addcdiv_(exp_avg, denom, -step_size)
        for k in p:
            np.testing.assert_array_equal(opt.params[k], p[k])


def test_step_updates_module_parameters_in_place():
    model = nn.Linear(3, 2)
    weight = model.weight
    opt = optim.SGD(model, lr=0.5)
    opt.step({"weight": np.ones((2, 3)), "bias": np.ones(2)})
    assert model.weight is weight
    assert isinstance(model.weight, nn.Parameter)


def _mse_task():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4))
    y = np.tanh(x @ rng.standard_normal((4, 1)))
    return x, y


def _train(model, loss_fn, opt, batch, steps):
    step = optim.training_step(loss_fn, opt)
    params = {k: np.asarray(v).copy() for k, v in model.named_parameters()}
    captured = optim.CapturedStep(step, (params, opt.init(params)), *batch)
    losses = [captured(*batch) for _ in range(steps)]
    return captured, losses, step, params


def test_captured_mlp_step_trains_to_the_stated_loss_and_equals_the_eager_step():
    nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.GELU(), nn.Linear(16, 1))
    x, y = _mse_task()

    def loss_fn(params, x, y):
        out, _ = nn.functional_call(model, params, x)
        return F.mean((out - y) ** 2)

    opt = optim.Adam(model, lr=0.05)
    start = time.perf_counter()
    captured, losses, step, params = _train(model, loss_fn, opt, (x, y), 300)
    seconds = time.perf_counter() - start
    assert losses[0] > 1.0 and losses[-1] < 0.001, (losses[0], losses[-1])  # measured: 1.18 -> 0.00024
    assert seconds < 10
    # the captured step computes what the eager step computes, bit for bit
    state = (params, opt.init(params))
    eager_losses = []
    for _ in range(3):
        loss, state = step(state, x, y)
        eager_losses.append(float(loss))
    assert eager_losses == losses[:3]


def _bars(n, rng):
    """8x8 images of one horizontal (class 0) or vertical (class 1) bar plus noise."""
    images = rng.standard_normal((n, 1, 8, 8)) * 0.3
    labels = rng.integers(0, 2, size=n)
    where = rng.integers(1, 7, size=n)
    for i in range(n):
        if labels[i] == 0:
            images[i, 0, where[i], :] += 1.5
        else:
            images[i, 0, :, where[i]] += 1.5
    return images, np.eye(2)[labels]


def test_captured_cnn_step_trains_to_the_stated_loss():
    nn.manual_seed(1)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(4 * 4 * 4, 2))
    x, onehot = _bars(32, np.random.default_rng(2))

    def loss_fn(params, x, onehot):
        logits, _ = nn.functional_call(model, params, x)
        return -F.mean(F.sum(F.log_softmax(logits, axis=-1) * onehot, axis=-1))

    opt = optim.SGD(model, lr=0.1, momentum=0.9)
    captured, losses, _, _ = _train(model, loss_fn, opt, (x, onehot), 60)
    assert losses[0] > 0.5 and losses[-1] < 0.05, (losses[0], losses[-1])
    counts = {}
    for node in captured.graph.nodes:
        counts[str(node.op)] = counts.get(str(node.op), 0) + 1
    assert counts["conv2d"] == 2  # forward and the kernel's cotangent (the images need none: dead code)
    assert counts["max_pool2d"] == 1


def test_captured_step_refuses_dropout_in_training_mode():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))

    def loss_fn(params, x):
        out, _ = nn.functional_call(model, params, x)
        return F.sum(out)

    with pytest.raises(gl.TraceError, match="Dropout in training mode"):
        gl.grad(loss_fn)({k: np.asarray(v) for k, v in model.named_parameters()}, np.ones((1, 2)))
