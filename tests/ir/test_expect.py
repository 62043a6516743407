"""Expect tests: the printed IR (``str(g)``) of the traced functions in ``expect_cases.py`` is pinned in
``expect/<case>.txt``.

A change of the printed IR fails with a diff. To accept a change on purpose, run with ``GRAPH_LAB_ACCEPT=1``:
the expected files are rewritten, and the diff is then reviewed in version control like any other change.
"""

import difflib
import importlib.util
import os
from pathlib import Path

import pytest

EXPECT_DIR = Path(__file__).resolve().parent / "expect"
CASES_FILE = Path(__file__).resolve().parents[1] / "support" / "expect_cases.py"
ACCEPT_VARIABLE = "GRAPH_LAB_ACCEPT"


def _load_cases():
    # Loaded by path, so it works under any pytest import mode and never shadows another module.
    spec = importlib.util.spec_from_file_location("graph_lab_expect_cases", CASES_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


expect_cases = _load_cases()


def check_expected(actual: str, path: Path, accept: bool) -> None:
    """Compare ``actual`` with the file's text; with ``accept``, write it instead."""
    if accept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"{path.name} does not exist; run with {ACCEPT_VARIABLE}=1 to create it, then review it")
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                            fromfile=f"expected ({path.name})", tofile="actual"))
        pytest.fail(f"printed IR differs from {path.name}:\n{diff}\n"
                    f"If the change is intended, rerun with {ACCEPT_VARIABLE}=1 and review the diff.")


@pytest.mark.parametrize("case", sorted(expect_cases.CASES))
def test_printed_ir(case):
    g = expect_cases.CASES[case]()
    g.verify()
    check_expected(str(g) + "\n", EXPECT_DIR / f"{case}.txt", os.environ.get(ACCEPT_VARIABLE) == "1")


def test_every_expected_file_has_a_case():
    # views_*.txt belong to tests/ir/test_ir_views.py (print_tabular and g.code)
    stale = {p.stem for p in EXPECT_DIR.glob("*.txt") if not p.stem.startswith("views_")} - set(expect_cases.CASES)
    assert not stale, f"expected files without a case in expect_cases.py: {sorted(stale)}"


def test_printed_locations_point_into_expect_cases():
    """Each node's ``# expect_cases.py:N`` is the line that made it (so the pinned files pin real lines)."""
    made_by = {"input": ("trace(",), "reshape": (".reshape(",), "transpose": (".transpose(", ".swapaxes(", ".T"),
               "matmul": (" @ ",)}
    text = str(expect_cases.CASES["reshape_transpose"]())
    source = (CASES_FILE).read_text(encoding="utf-8").splitlines()
    checked = 0
    for line in text.splitlines():
        if "# expect_cases.py:" in line:
            code = source[int(line.rsplit(":", 1)[1]) - 1]
            op = line.split(" = ", 1)[1].split()[0]
            assert any(token in code for token in made_by[op]), (line, code)
            checked += 1
    assert checked == 8


def test_mismatch_fails_with_a_diff(tmp_path):
    path = tmp_path / "case.txt"
    path.write_text("graph f {\n  %0: f64[2] = input \"x\"\n  return %0\n}\n", encoding="utf-8")
    check_expected(path.read_text(encoding="utf-8"), path, accept=False)  # equal: passes
    with pytest.raises(pytest.fail.Exception) as e:
        check_expected("graph f {\n  %0: f32[2] = input \"x\"\n  return %0\n}\n", path, accept=False)
    msg = str(e.value)
    assert '-  %0: f64[2] = input "x"' in msg and '+  %0: f32[2] = input "x"' in msg
    assert ACCEPT_VARIABLE in msg


def test_accept_rewrites_and_missing_file_fails(tmp_path):
    path = tmp_path / "sub" / "new.txt"
    with pytest.raises(pytest.fail.Exception, match="does not exist"):
        check_expected("text\n", path, accept=False)
    check_expected("text\n", path, accept=True)
    assert path.read_text(encoding="utf-8") == "text\n"
    check_expected("text\n", path, accept=False)
