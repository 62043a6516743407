"""compile(model) against the same model run eagerly: a graph_lab.nn MLP and a small CNN, each at a small and a
realistic size, in eval mode (one graph per model), float64.

Each model's compiled call is checked against its eager call (bit for bit) before it is timed; eager and
compiled are timed interleaved (``harness.interleaved``: rounds in shuffled order, median), so a slow moment of a
shared machine hits both alike. Prints microseconds per call, the ratio, and how many guards a call checks.

    PYTHONPATH=. python3 benchmarks/bench_compile_modules.py

On a shared machine, run it with ``OPENBLAS_NUM_THREADS=1``: at the large sizes a multi-threaded BLAS competing
with other jobs varies by more than the difference between the two (docs/nn.md).
"""

from __future__ import annotations

import numpy as np

from harness import fmt_time, header, interleaved

import graph_lab
from graph_lab import nn
from graph_lab.console import print_header, print_table


def mlp(widths: tuple[int, ...]) -> nn.Module:
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def cnn(channels: int, size: int, classes: int = 10) -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(channels, 2 * channels, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(2 * channels * (size // 4) ** 2, classes))


CASES = [
    ("MLP 4-8-3, batch 5", lambda: mlp((4, 8, 3)), (5, 4)),
    ("MLP 64-128-10, batch 32", lambda: mlp((64, 128, 10)), (32, 64)),
    ("MLP 784-256-256-10, batch 128", lambda: mlp((784, 256, 256, 10)), (128, 784)),
    ("CNN 4 channels, 2x3x8x8", lambda: cnn(4, 8), (2, 3, 8, 8)),
    ("CNN 16 channels, 16x3x32x32", lambda: cnn(16, 32), (16, 3, 32, 32)),
]


def measure(make, shape, rounds: int = 9) -> tuple[float, float, int]:
    """(eager seconds, compiled seconds, guards of the compiled call) per call, medians of interleaved rounds."""
    nn.manual_seed(0)
    model = make().eval()
    x = np.random.default_rng(0).standard_normal(shape)
    compiled = graph_lab.compile(model)
    np.testing.assert_array_equal(compiled(x), model(x))  # (and the next call is a cache hit)
    guards = len(graph_lab.explain(model)(x).guards)
    eager_once = model(x)
    number = max(1, int(2e-2 / _one_call(lambda: model(x))))
    medians = interleaved({"eager": lambda: model(x), "compiled": lambda: compiled(x)}, rounds=rounds,
                          number=number)
    np.testing.assert_array_equal(compiled(x), eager_once)
    return medians["eager"], medians["compiled"], guards


def _one_call(fn) -> float:
    import time
    fn()
    start = time.perf_counter()
    fn()
    return max(time.perf_counter() - start, 1e-6)


def main() -> None:
    header("compile(model) vs eager graph_lab.nn (eval mode, float64)")
    rows = []
    for name, make, shape in CASES:
        eager, compiled, guards = measure(make, shape)
        rows.append([name, fmt_time(eager), fmt_time(compiled), f"{eager / compiled:.2f}x", str(guards)])
    print_header("per call, median of interleaved rounds")
    print_table(["model", "eager", "compile(model)", "speed-up", "guards"], rows)


if __name__ == "__main__":
    main()
