"""A short tour of graph_lab: capture a NumPy model as a graph, run it, guard it, and run it lazily.

    .venv/bin/python examples/tour.py        (after `python3 dev.py demo` or `python3 dev.py test`)
    PYTHONPATH=. python3 examples/tour.py    (from the repository root, without the virtual environment)

Every step prints what it shows, so the output reads as a walk-through.
"""

from __future__ import annotations

import numpy as np

from graph_lab import F, LazyRunner, check_guards, failing_guards, run, trace


def two_layer_net(x, params):
    """A tiny classifier head: linear -> ReLU -> linear -> softmax over the classes."""
    hidden = F.relu(x @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"] + params["b2"]
    return F.softmax(logits, axis=-1)


def step(title: str) -> None:
    print(f"\n--- {title}")


def capture_and_run(rng: np.random.Generator) -> None:
    step("1. trace: call the model once on stand-in tensors and record every tensor operation")
    params = {"w1": rng.standard_normal((6, 5)) / 2, "b1": np.zeros(5),
              "w2": rng.standard_normal((5, 3)) / 2, "b2": np.zeros(3)}
    graph = trace(two_layer_net, {"x": (4, 6)}, params)
    print(graph)
    print(f"{graph.count()} operations; inputs and parameters are nodes too, but count() leaves them out.")

    step("2. run: execute the graph and compare it with the same model run eagerly on arrays")
    x = rng.standard_normal((4, 6))
    from_graph = run(graph, {"x": x})[0]
    eager = two_layer_net(x, params)
    print(f"max difference graph vs eager: {np.abs(from_graph - eager).max():.1e}")
    print("(the graph calls the same NumPy functions in the same order, so the results agree bit for bit)")


def normalize_if_large(x):
    """Divides by the largest entry, but only when it exceeds 1: a branch on a value the data decides."""
    if x.max() > 1.0:
        return x / x.max()
    return x


def guards(rng: np.random.Generator) -> None:
    step("3. guards: a branch on tensor data is decided by an example and recorded as a guard")
    small = rng.uniform(0.0, 0.5, size=(2, 3))
    large = small * 10.0
    graph = trace(normalize_if_large, {"x": (2, 3)}, mode="guard", example={"x": large})
    print(graph)
    print(f"guards recorded: {len(graph.guards)}")
    print(f"check_guards with another large input: {check_guards(graph, {'x': large + 1.0})}")
    print(f"check_guards with a small input:       {check_guards(graph, {'x': small})}")
    for failure in failing_guards(graph, {"x": small}):
        print(f"  fails: {failure}")
    for failure in failing_guards(graph, {"x": np.ones((5, 3))}):
        print(f"  a [5, 3] input fails too: {failure}")


def lazy_power_iteration(rng: np.random.Generator) -> None:
    step("4. LazyRunner: record lazily, run a graph only when Python needs a value (a graph break)")
    a = rng.standard_normal((4, 4))
    lr = LazyRunner()
    matrix = lr.tensor(a @ a.T)  # symmetric, so power iteration finds its largest eigenvalue
    v = lr.tensor(np.ones(4) / 2.0)
    for iteration in range(1, 51):
        w = matrix @ v
        new_v = w / F.sqrt(F.sum(w * w))
        change = float(F.max(F.abs(new_v - v)))  # float() needs a value: the pending ops run here
        v = new_v
        if change < 1e-10:
            break
    eigenvalue = float(F.sum(v * (matrix @ v)))
    print(f"converged after {iteration} iterations; largest eigenvalue {eigenvalue:.6f} "
          f"(NumPy says {np.linalg.eigvalsh(a @ a.T).max():.6f})")
    print(f"graphs executed: {len(lr.graphs)}, node counts of the first three: {lr.graphs[:3]}")
    print(f"cache: {lr.cache_misses} graphs built (the loop body, then the eigenvalue), {lr.cache_hits} "
          f"executions reused one: every iteration records the same graph, so it is built once")


def main() -> None:
    rng = np.random.default_rng(0)
    capture_and_run(rng)
    guards(rng)
    lazy_power_iteration(rng)


if __name__ == "__main__":
    main()
