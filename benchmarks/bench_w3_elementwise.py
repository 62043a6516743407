"""W3: an elementwise-heavy chain on 16M float32 values, ``gelu(x) * sigmoid(x) + x * x``: time and achieved
GB/s next to the machine's measured copy bandwidth (the physical limit: the chain reads 64 MB and writes 64 MB),
and the bandwidth-bound control ``x * x + x``. The fused backend is shown as the cost model chose it, and on 1 and
2 threads (the model measures whether the second thread pays; it does not assume so).

    PYTHONPATH=. python3 benchmarks/bench_w3_elementwise.py
"""

from __future__ import annotations

import numpy as np

from harness import backend_variants, fmt_time, header, interleaved, optional_libraries, print_header, print_table

from graph_lab import F, trace

N = 16 * 1024 * 1024


def w3(x):
    return F.gelu(x) * F.sigmoid(x) + x * x


def control(x):
    return x * x + x


def library_variants(fn_name: str, x) -> dict:
    out = {}
    libs = optional_libraries()
    if "torch" in libs:
        torch = libs["torch"]
        tx = torch.from_numpy(x)
        f = {"w3": lambda t: torch.nn.functional.gelu(t, approximate="tanh") * torch.sigmoid(t) + t * t,
             "control": lambda t: t * t + t}[fn_name]
        compiled = torch.compile(f)
        compiled(tx)
        out["torch.compile"] = lambda: compiled(tx)
    if "jax" in libs:
        jax = libs["jax"]
        jnp = jax.numpy
        jx = jnp.asarray(x)
        f = {"w3": lambda t: jax.nn.gelu(t, approximate=True) * jax.nn.sigmoid(t) + t * t,
             "control": lambda t: t * t + t}[fn_name]
        jitted = jax.jit(f)
        jitted(jx).block_until_ready()
        out["jax.jit"] = lambda: jitted(jx).block_until_ready()
    return out


def variants_for(fn, name: str, x) -> tuple[dict, object]:
    variants, auto = backend_variants(fn, trace(fn, {"x": ((N,), "float32")}), x)
    variants.update(library_variants(name, x))
    return variants, auto


def main() -> None:
    header("W3: gelu(x) * sigmoid(x) + x * x on 16M float32")
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    traffic = 2 * x.nbytes  # read x once, write the result once
    destination = np.empty_like(x)
    copies = {"copy: x.copy() (new memory, as results are)": lambda: x.copy(),
              "copy: np.copyto (into a reused array)": lambda: np.copyto(destination, x)}
    for fn, name, title in ((w3, "w3", "gelu(x) * sigmoid(x) + x * x"), (control, "control", "control: x * x + x")):
        variants, auto = variants_for(fn, name, x)
        medians = interleaved({**variants, **copies}, rounds=7)  # the copies in the same rounds: same conditions
        base, limit = medians["eager NumPy"], medians["copy: x.copy() (new memory, as results are)"]
        rows = [[k, fmt_time(t), f"{base / t:.2f}x", f"{traffic / t / 1e9:.1f}", f"{limit / t:.0%}"]
                for k, t in medians.items()]
        print_header(f"{title} (16M float32, median of 7 interleaved rounds)")
        print_table(["variant", "median", "speed-up vs eager", "GB/s (128 MB moved)", "of x.copy() bandwidth"], rows)
        print("cost model: " + "; ".join(g.decision.reason for g in auto.partition.groups))


if __name__ == "__main__":
    main()
