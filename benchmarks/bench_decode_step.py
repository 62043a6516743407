"""One decode step of the corpus's two language models, eager vs ``graph_lab.compile`` of the forward function.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_decode_step.py [--quick] [--backend auto|codegen] [--cpu-time]

The models and sizes are the corpus kernels' (``benchmarks/corpus/language_models.py``, ``llama_decode`` and
``gpt2_greedy`` at their benchmark size): a Llama-style model fed one token per step with its key/value caches on
its layers, and a GPT-2-style model that reruns the growing list of token ids at every step. Each is compiled as
one would compile a model's forward (``graph_lab.compile(model.forward)``) and driven by a Python decode loop;
after a warm-up decode (the captures: the prompt's graph, then the step's, with the position or the length a
size symbol), the same step is timed eagerly and compiled, interleaved, at positions that change from call to
call, and the compiled step's tokens are checked against eager's first. The table gives the median time per
step and the ratio eager/compiled (above 1: the compiled step is faster).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # (as bench_corpus.py: a shared machine's BLAS threads wait)

import numpy as np
from harness import fmt_time, interleaved, machine

import graph_lab
from corpus import language_models as lm
from graph_lab.console import print_header, print_table

STEPS = 20


def llama_case(backend: str):
    """(eager step, compiled step, captures): the step at a position that moves on every call."""
    eager_model, prompt, _ = lm.llama_decode_inputs(64, np.random.default_rng(0))
    model, _, _ = lm.llama_decode_inputs(64, np.random.default_rng(0))
    compiled = graph_lab.compile(model.forward, backend=backend)

    def decode(forward):
        logits, pos, tokens = forward(prompt, 0), len(prompt), []
        for _ in range(STEPS):
            tokens.append(int(np.argmax(logits[-1])))
            logits = forward([tokens[-1]], pos)
            pos += 1
        return tokens

    if decode(compiled) != decode(eager_model.forward):
        raise AssertionError("llama: the compiled decode's tokens differ from eager's")
    positions = iter(range(10**9))

    def step(forward):
        return lambda: forward([7], len(prompt) + next(positions) % (64 - len(prompt) - 1))

    return step(eager_model.forward), step(compiled), compiled.__func__.captures


def gpt2_case(backend: str):
    model, prompt, _ = lm.gpt2_greedy_inputs(64, np.random.default_rng(0))
    compiled = graph_lab.compile(lm._gpt2_logits, backend=backend)

    def decode(forward):
        ids = list(prompt)
        for _ in range(STEPS):
            ids.append(int(np.argmax(forward(model, ids)[-1])))
        return ids

    ids = decode(lm._gpt2_logits)
    if decode(compiled) != ids:
        raise AssertionError("gpt2: the compiled decode's tokens differ from eager's")
    lengths = iter(range(10**9))

    def step(forward):
        return lambda: forward(model, ids[:len(prompt) + next(lengths) % STEPS])

    return step(lm._gpt2_logits), step(compiled), compiled.captures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--cpu-time", action="store_true")
    opts = parser.parse_args(argv)
    clock = time.process_time if opts.cpu_time else time.perf_counter
    print(f"one decode step, eager vs graph_lab.compile(forward, backend={opts.backend!r})\nmachine: {machine()}; "
          f"{'process CPU time' if opts.cpu_time else 'wall time'}\n")
    rows = []
    for name, case in (("llama_decode", llama_case), ("gpt2_greedy", gpt2_case)):
        eager, compiled, captures = case(opts.backend)
        medians = interleaved({"eager": eager, "compiled": compiled}, rounds=9 if opts.quick else 31,
                              number=20, clock=clock)
        rows.append([name, str(captures), fmt_time(medians["eager"]), fmt_time(medians["compiled"]),
                     f"{medians['eager'] / medians['compiled']:.2f}x"])
    print_header("time per decode step (interleaved, median)")
    print_table(["model", f"captures over {STEPS} steps", "eager", "compiled", "eager/compiled"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
