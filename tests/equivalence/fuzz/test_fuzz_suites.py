"""CI's sample of every fuzz suite (F1-F9), with the fixed seed and counts of ``run_fuzz.SUITES``.

``python3 dev.py fuzz`` runs the same suites at the large counts docs/equivalence.md reports.
"""

from __future__ import annotations

import pytest

from tests.equivalence.fuzz.run_fuzz import SEED, SUITES
from tests.support.backend_support import needs_compiler


def sample(name: str):
    run, _, quick = SUITES[name]
    figure = run(quick, SEED)
    assert figure.ok, figure.text()
    return figure


def test_f1_differential_every_way_agrees_with_eager():
    figure = sample("F1")
    assert figure.value("mismatches") == figure.value("crashes") == figure.value("discarded (eager raised)") == 0
    assert figure.value("calls compared") > 0
    assert int(figure.value("ops of the table exercised").split(" of ")[0]) >= 70  # all 77: test_generator.py


def test_f2_every_pass_keeps_every_result_and_fires():
    figure = sample("F2")
    assert figure.value("differences") == figure.value("invalid graphs after a pass") == 0
    fired = [int(str(v).split(" / ")[0]) for label, v in figure.rows if label.startswith("rule ")]
    assert int(figure.value("pipeline exact: changes / graphs changed").split(" / ")[0]) > 0
    assert sum(1 for f in fired if f > 0) >= len(fired) - 2  # nearly every rule had something to do


def test_f3_every_planted_bug_is_caught():
    figure = sample("F3")
    assert figure.value("caught") == figure.value("planted bugs")


def test_f4_metamorphic_rewrites_change_nothing():
    figure = sample("F4")
    assert figure.value("mismatches against the original") == figure.value("crashes") == 0


def test_f5_no_stale_result_after_any_guarded_change():
    figure = sample("F5")
    assert figure.value("stale results") == figure.value("crashes") == 0


def test_f6_side_effects_happen_as_in_eager_code():
    figure = sample("F6")
    assert figure.value("different effects or order") == figure.value("crashes") == 0
    assert figure.value("side-effect statements") > 0


def test_f7_malformed_inputs_raise_only_documented_errors():
    figure = sample("F7")
    assert not any("undocumented" in label for label, _ in figure.rows)
    assert figure.value("hangs (over 5 s)") == 0


def test_f8_no_payload_ever_runs():
    figure = sample("F8")
    assert figure.value("canary files created") == 0



@needs_compiler
def test_f9_forced_kernels_and_c_programs_agree_with_eager():
    figure = sample("F9")
    assert figure.value("mismatches") == figure.value("crashes") == figure.value("discarded (eager raised)") == 0
    graphs, kernels, programs = (int(n.replace(",", "")) for n in
                                 figure.value("graphs compiled / with C kernels / with C programs").split(" / "))
    assert kernels > 0 and programs > 0 and graphs >= kernels

@pytest.mark.parametrize("name", sorted(SUITES))
def test_every_suite_has_a_large_and_a_quick_count(name):
    _, large, quick = SUITES[name]
    assert large > quick > 0


def test_f7_stops_a_loop_that_never_ends_and_runs_symbolic_graphs():
    """F7 runs what parses: a graph whose loop never ends is stopped by its timer and counted (not a hang, not a
    failure); a graph with symbolic sizes runs with each size symbol set to 3, and gives NumPy's answer."""
    from collections import Counter

    import numpy as np

    from tests.equivalence.fuzz import suite_f7_malformed as f7
    from tests.equivalence.fuzz.fuzz_report import Figure
    from graph_lab import F, parse, trace

    endless = trace(lambda x: F.while_loop(lambda v: v.sum() > -1.0, lambda v: v + 1.0, x), {"x": (3,)})
    symbolic = trace(lambda x: x * 2.0 + 1.0, {"x": ("B", 4)})
    tally, figure = Counter(), Figure("F7 test")
    f7.run_parsed(parse(str(endless)), tally, figure, "endless", "text")
    f7.run_parsed(parse(str(symbolic)), tally, figure, "symbolic", "text")
    assert not figure.failures, figure.failures
    assert tally[f"text run stopped after {f7.LOOP_SECONDS} s (a mutated loop that may never end)"] == 1
    assert tally[f"text with symbolic sizes: run with each size symbol = {f7.EXAMPLE_SIZE}"] == 1
    assert tally["text run accepted"] == 1
    assert f7._example_shapes(symbolic.input_types()) == {"x": (3, 4)}
    np.testing.assert_array_equal(f7.run_graph(symbolic, {"x": np.ones((3, 4))})[0], np.full((3, 4), 3.0))
