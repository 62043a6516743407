"""The random program generator, the ways registry, the shrinker and the reproducers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from graph_lab.testing.differential import differential, replay, reproducer
from graph_lab.testing.generator import MENU, Options, generate, uncovered_ops
from graph_lab.testing.shrink import minimize
from graph_lab.testing.ways import BACKENDS, FRONTENDS, PIPELINES, WAYS, way
from tests.equivalence.fuzz.planted_bugs import BUGS

REPO = Path(__file__).resolve().parents[3]


def test_every_op_of_the_table_has_a_template():
    assert uncovered_ops() == []


@pytest.mark.parametrize("op", sorted(op.value for op in MENU))
def test_each_template_makes_its_op_in_a_captured_graph(op):
    for seed in range(20):
        program = generate(seed, Options(focus=(op,), statements=(4, 8)))
        outcome = differential(program, [way("trace/none/prepare")]).outcomes[0]
        assert outcome.status == "ok", outcome.detail
        if op in outcome.ops:
            return
    pytest.fail(f"no program in 20 made a {op} node")


def test_programs_are_deterministic_from_the_seed():
    for seed in (0, 7, 12345):
        for options in (Options(), Options(side_effects=True, probes=True)):
            assert generate(seed, options).source() == generate(seed, options).source()
            a, b = generate(seed, options).inputs(1), generate(seed, options).inputs(1)
            assert all((x == y).all() if hasattr(x, "shape") else x == y for x, y in zip(a, b))


def test_generated_programs_run_eagerly():
    for seed in range(150):
        verdict = differential(generate(seed, Options(side_effects=seed % 2 == 0, probes=seed % 3 == 0)), [])
        assert verdict.discarded is None, (seed, verdict.discarded)


def test_the_registry_is_every_combination():
    assert len(WAYS) == len(FRONTENDS) * len(PIPELINES) * len(BACKENDS)
    assert len({w.name for w in WAYS}) == len(WAYS)
    assert way("compile/exact/to_python").frontend is FRONTENDS["compile"]
    with pytest.raises(KeyError, match="no way named"):
        way("nope/none/prepare")


def _first_failure(bug_name: str):
    bug = next(b for b in BUGS if b.name == bug_name)
    with bug.plant():
        for seed in range(50):
            program = generate(seed, Options(focus=bug.focus))
            failures = differential(program, [way("trace/none/prepare")]).failures
            if failures:
                small, outcome = minimize(program, way("trace/none/prepare"))
                return bug, program, small, outcome
    pytest.fail("the planted bug was not found")


def test_a_failure_shrinks_to_a_small_reproducer_that_runs_on_its_own(tmp_path):
    bug, program, small, outcome = _first_failure("sub computes y - x")
    assert outcome.status == "mismatch"
    assert len(small.source().splitlines()) < len(program.source().splitlines())
    assert len(small.body) <= 6 and len(small.body) < len(program.body)
    script = reproducer(small, "trace/none/prepare", max(outcome.call, 0))
    path = tmp_path / "repro.py"
    path.write_text(script)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    clean = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=60)
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.strip() == "no difference"  # the bug is planted only inside this test's process
    with bug.plant():
        namespace: dict = {}
        exec(compile(script.replace("print(replay(", "RESULT = (replay("), str(path), "exec"), namespace)
        assert namespace["RESULT"] is not None and namespace["RESULT"].kind in ("bits", "value", "shape")


def test_replay_finds_nothing_on_a_correct_program():
    program = generate(3)
    assert replay(program.source(), "compile/none/prepare", [program.inputs(0), program.inputs(1)]) is None


def test_mutation_programs_write_alias_and_run_eagerly():
    options = Options(mutation=True)
    programs = [generate(seed, options) for seed in range(120)]
    for program in programs:
        verdict = differential(program, [])
        assert verdict.discarded is None, (program.seed, verdict.discarded)
    texts = [p.source() for p in programs]
    assert sum(bool(p.aliases) for p in programs) >= 10
    assert sum(any(a[2] is not None for a in p.aliases) for p in programs) >= 3  # overlapping slices
    for form in ("] = ", "] *= 0.5", "> 0] = ", "np.maximum.at(", "np.copyto(", "out=", "np.zeros_like(",
                 ".T\n", "= float(", "[:-2] * 0.25 + ", "[::-1][1:] * 0.5"):  # (the last two: time loops of slices)
        assert any(form in t for t in texts), form


def test_argument_contents_are_compared(monkeypatch):
    """A compile() that forgot to write back is caught by the final contents of the arguments."""
    import numpy as np
    from graph_lab.frontends.dynamo import segment
    source = "def program(x0, x1):\n    x0[0] = 2.0\n    x1[x1 > 0] -= 1.0\n    return x0.sum()\n"
    calls = [[np.ones(3), np.ones(2)], [np.zeros(3), -np.ones(2)]]
    assert replay(source, "compile/none/interpret", calls) is None
    assert replay(source, "compile/none/interpret", [[np.ones(3), None]], ((1, 0, (slice(1, None),)),)) is None
    monkeypatch.setattr(segment, "write_back", lambda writebacks, inputs, outs: None)
    mismatch = replay(source, "compile/none/interpret", calls)
    assert mismatch is not None and mismatch.path.startswith("argument"), mismatch


def test_the_generator_writes_integer_updates_in_place_and_they_agree():
    """Shifts and masks written into int arrays, in place and in time loops (``menu_writes.integer_updates``),
    run compiled as eager code runs them."""
    ways = [way("compile/exact/codegen"), way("compile/none/fused"), way("lazy/exact/fused")]
    found = []
    for seed in range(300):
        program = generate(seed, Options(mutation=True))
        text = program.source()
        if ">>= 1" in text or ".dtype) *" in text or "]) >> 1" in text or ">> 1, " in text:
            verdict = differential(program, ways)
            assert verdict.discarded is None and not verdict.failures, (seed, verdict.failures)
            found.append(seed)
        if len(found) >= 4:
            break
    assert len(found) >= 4, found
