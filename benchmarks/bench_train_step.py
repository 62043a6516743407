"""A training step (forward, loss, gradients, Adam update) captured once and run many times, against the eager
step: ``graph_lab.value_and_grad`` on arrays, which traces the loss and builds its joint graph on every call.

The MLP of tests/nn/test_optim_training.py (4 -> 16 -> 1, GELU, batch 64) and the small CNN (conv 1->4 3x3, ReLU,
max pool, linear; batch 32 of 8x8). Interleaved rounds, median of 5; each round times 20 steps of each way.
Prints milliseconds per step and the ratio.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from graph_lab import F, nn, optim
from graph_lab.console import print_header, print_table


def mlp_task():
    nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.GELU(), nn.Linear(16, 1))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4))
    y = np.tanh(x @ rng.standard_normal((4, 1)))

    def loss_fn(params, x, y):
        out, _ = nn.functional_call(model, params, x)
        return F.mean((out - y) ** 2)
    return model, loss_fn, (x, y)


def cnn_task():
    nn.manual_seed(1)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(4 * 4 * 4, 2))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((32, 1, 8, 8))
    onehot = np.eye(2)[rng.integers(0, 2, size=32)]

    def loss_fn(params, x, onehot):
        logits, _ = nn.functional_call(model, params, x)
        return -F.mean(F.sum(F.log_softmax(logits, axis=-1) * onehot, axis=-1))
    return model, loss_fn, (x, onehot)


def measure(task, rounds: int = 5, steps: int = 20) -> tuple[float, float, int]:
    model, loss_fn, batch = task()
    opt = optim.Adam(model, lr=0.01)
    step = optim.training_step(loss_fn, opt)

    params = {k: np.asarray(v).copy() for k, v in model.named_parameters()}
    captured = optim.CapturedStep(step, (params, opt.init(params)), *batch)
    eager_state = (params, opt.init(params))
    eager_times, captured_times = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(steps):
            _, eager_state = step(eager_state, *batch)
        eager_times.append((time.perf_counter() - start) / steps)
        start = time.perf_counter()
        for _ in range(steps):
            captured(*batch)
        captured_times.append((time.perf_counter() - start) / steps)
    return statistics.median(eager_times), statistics.median(captured_times), captured.graph.count()


def main() -> None:
    print_header("captured training step vs eager step (ms per step, median of 5 rounds)")
    rows = []
    for name, task in (("MLP 4-16-1, batch 64", mlp_task), ("CNN conv-pool-linear, batch 32", cnn_task)):
        eager, captured, nodes = measure(task)
        rows.append([name, str(nodes), f"{eager * 1e3:.2f}", f"{captured * 1e3:.2f}", f"{eager / captured:.1f}x"])
    print_table(["task", "graph ops", "eager", "captured", "speed-up"], rows)


if __name__ == "__main__":
    main()
