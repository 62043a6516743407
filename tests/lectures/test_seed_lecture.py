"""The course's lecture-12 script runs unmodified against graph_lab, and everything it prints is true.

The script is a seed document kept outside the repository (``<repo>/../shared/seeds/lecture12/``); the project
never holds a copy. This test copies the project's ``lectures/`` tree to a temporary folder, puts the script in
as ``lectures/lecture12/01_tracing.py``, runs it in a subprocess (stdout is a pipe, so ``**bold**`` markers
are dropped), and then checks each claim the script prints against the rest of what it printed: the counts it
states against the graph text it shows, the table cells against the lecture's statements, and every table's
columns against its separator row, measured in display columns (a CJK character is two wide).
"""

from __future__ import annotations

import dis
import os
import re
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from graph_lab.console import display_width

REPO = Path(__file__).resolve().parents[2]
SEED = REPO.parent / "shared" / "seeds" / "lecture12" / "01_tracing.py"
RULE = re.compile(r"^=+$")
SEPARATOR = re.compile(r"^-+(?: +-+)*$")


# --- running the script -----------------------------------------------------------------------------------


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def seed_run(tmp_path_factory) -> Run:
    if not SEED.is_file():
        pytest.fail(f"the course's lecture-12 script is missing: {SEED} . graph_lab must run it unmodified, and "
                    f"this test reads it from ../shared/seeds next to the repository (it is never copied into "
                    f"the project). Run the tests inside the course workplace, where that folder exists.")
    tmp = tmp_path_factory.mktemp("seed-lecture")
    lectures = tmp / "lectures"
    shutil.copytree(REPO / "lectures", lectures, ignore=shutil.ignore_patterns("__pycache__"))
    (lectures / "lecture12").mkdir(exist_ok=True)
    shutil.copy(SEED, lectures / "lecture12" / "01_tracing.py")

    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONIOENCODING="utf-8")
    env.pop("NO_COLOR", None)  # plain output must come from stdout not being a terminal, nothing else
    result = subprocess.run([sys.executable, "01_tracing.py"], cwd=lectures / "lecture12", env=env,
                            capture_output=True, text=True, encoding="utf-8", timeout=120)
    return Run(result.returncode, result.stdout, result.stderr)


@pytest.fixture(scope="module")
def demos(seed_run) -> dict[int, list[str]]:
    """The script's output split at its headers: demo number -> the lines after its header."""
    assert seed_run.returncode == 0, f"01_tracing.py failed:\n{seed_run.stderr}"
    return split_demos(seed_run.stdout)


def split_demos(stdout: str) -> dict[int, list[str]]:
    lines = stdout.splitlines()
    starts = []  # (demo number, index of the first line after the header)
    for i in range(len(lines) - 2):
        if RULE.match(lines[i]) and RULE.match(lines[i + 2]):
            m = re.match(r"演示 (\d+)：", lines[i + 1])
            assert m, f"a header that is not a demo title: {lines[i + 1]!r}"
            starts.append((int(m.group(1)), i + 3))
    sections = {}
    for k, (number, start) in enumerate(starts):
        end = starts[k + 1][1] - 4 if k + 1 < len(starts) else len(lines)  # stop before the blank line + rule
        sections[number] = lines[start:end]
    return sections


def find_line(lines: list[str], pattern: str) -> re.Match:
    hits = [m for m in (re.search(pattern, line) for line in lines) if m]
    assert len(hits) == 1, f"expected one line matching {pattern!r}, found {len(hits)}:\n" + "\n".join(lines)
    return hits[0]


# --- tables, read back by display column -------------------------------------------------------------------


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]


def spans(separator: str) -> list[tuple[int, int]]:
    """The display-column ranges [start, end) of the dash runs of a separator row (it is pure ASCII)."""
    return [m.span() for m in re.finditer(r"-+", separator)]


def split_by_columns(line: str, columns: list[tuple[int, int]]) -> list[str]:
    """Cut a printed table line into cells at the separator's column ranges.

    Fails if a character falls in the gap between two columns or past the last one, or if a wide character
    straddles a column edge: each means the line is not aligned with its separator.
    """
    cells = [""] * len(columns)
    col = 0
    for ch in line:
        width = display_width(ch)
        inside = [k for k, (start, end) in enumerate(columns) if start <= col and col + width <= end]
        if inside:
            cells[inside[0]] += ch
        elif not ch.isspace() or width != 1:
            raise AssertionError(f"{ch!r} at display column {col} is outside the columns {columns}:\n"
                                 f"{line!r}")
        col += width
    return [cell.strip() for cell in cells]


def read_tables(lines: list[str]) -> list[Table]:
    """Every table in ``lines``: a header, a separator of dashes, rows up to a blank line or the next header."""
    separators = [i for i, line in enumerate(lines) if SEPARATOR.match(line)]
    tables = []
    for k, i in enumerate(separators):
        assert i > 0, "a separator row with no header above it"
        end = separators[k + 1] - 1 if k + 1 < len(separators) else len(lines)
        body = []
        for line in lines[i + 1:end]:
            if not line.strip():
                break
            body.append(line)
        columns = spans(lines[i])
        tables.append(Table(split_by_columns(lines[i - 1], columns),
                            [split_by_columns(line, columns) for line in body]))
    return tables


def test_table_reader_catches_misalignment():
    # The checks below are only as good as this reader: a CJK cell padded by len() instead of display width
    # must be refused.
    separator = "----  ---"
    assert split_by_columns("残差  abc", spans(separator)) == ["残差", "abc"]
    with pytest.raises(AssertionError):
        split_by_columns("残差    abc", spans(separator))  # padded to 4 characters, so 6 columns
    with pytest.raises(AssertionError):
        split_by_columns("x残差 abc", spans(separator))  # a wide character across a column edge


# --- the whole run ------------------------------------------------------------------------------------------


def test_runs_cleanly(seed_run):
    assert seed_run.returncode == 0, f"01_tracing.py failed:\n{seed_run.stderr}"
    assert seed_run.stderr == "", f"01_tracing.py wrote to stderr:\n{seed_run.stderr}"


def test_output_is_plain_text_when_not_a_terminal(seed_run):
    assert "**" not in seed_run.stdout
    assert "\x1b[" not in seed_run.stdout


def test_all_four_demos_print(demos):
    assert sorted(demos) == [1, 2, 3, 4]


def test_every_table_lines_up_by_display_width(demos):
    # read_tables raises if any header or row is off its separator's columns; here each table is also
    # checked to have the number of columns and rows the script builds.
    shapes = {number: [(len(t.header), len(t.rows)) for t in read_tables(lines)]
              for number, lines in demos.items()}
    assert shapes == {1: [], 2: [(6, 3)], 3: [(3, 4)], 4: [(4, 5), (3, 3)]}
    for lines in demos.values():
        for table in read_tables(lines):
            for row in table.rows:
                assert all(row), f"an empty cell in {row}: the row was cut at the wrong columns"


# --- demo 1: the traced gelu_mlp ----------------------------------------------------------------------------


NODE_LINE = re.compile(r"^\s+(?P<defs>%\d+: \S+(?:, %\d+: \S+)*) = (?P<op>\w+)(?P<rest>.*?)(?:\s+# \S+:\d+)?$")


def graph_text(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if re.match(r"^graph \w+ \{$", line))
    end = next(i for i in range(start, len(lines)) if lines[i] == "}")
    return lines[start:end + 1]


def parse_nodes(text: list[str]) -> tuple[list[tuple[list[int], str, list[int]]], list[int]]:
    """(defined values, op, used values) per node line, and the values returned."""
    nodes = []
    for line in text[1:-2]:
        m = NODE_LINE.match(line)
        assert m, f"not a node line: {line!r}"
        defined = [int(n) for n in re.findall(r"%(\d+):", m.group("defs"))]
        used = [int(n) for n in re.findall(r"%(\d+)", m.group("rest"))]
        nodes.append((defined, m.group("op"), used))
    ret = re.match(r"^\s+return (%\d+(?:, %\d+)*)$", text[-2])
    assert ret, f"not a return line: {text[-2]!r}"
    return nodes, [int(n) for n in re.findall(r"%(\d+)", ret.group(1))]


def test_demo1_graph_matches_eager(demos):
    m = find_line(demos[1], r"最大差 (\S+)；")
    assert float(m.group(1)) <= 1e-12


def test_demo1_graph_is_ssa(demos):
    nodes, returned = parse_nodes(graph_text(demos[1]))
    defined_so_far: set[int] = set()
    for defined, op, used in nodes:
        for v in used:
            assert v in defined_so_far, f"%{v} is used by {op} before it is defined"
        for v in defined:
            assert v not in defined_so_far, f"%{v} is defined twice"
            defined_so_far.add(v)
    for v in returned:
        assert v in defined_so_far, f"the graph returns %{v}, which no node defines"
    assert sorted(defined_so_far) == list(range(len(defined_so_far))), "values are not numbered %0, %1, ..."


def test_demo1_printed_counts_match_the_graph(demos):
    nodes, _ = parse_nodes(graph_text(demos[1]))
    m = find_line(demos[1], r"图里 (\d+) 个运算节点、(\d+) 个常量")
    ops = [op for _, op, _ in nodes]
    assert int(m.group(1)) == sum(1 for op in ops if op not in ("input", "param", "const"))
    assert int(m.group(2)) == ops.count("const")
    # gelu_mlp's own structure: x and two weights come in, two matmuls and one tanh are recorded.
    assert (ops.count("input"), ops.count("param"), ops.count("matmul"), ops.count("tanh")) == (1, 2, 2, 1)


# --- demo 2: what a trace sees ------------------------------------------------------------------------------


def test_demo2_table(demos):
    (table,) = read_tables(demos[2])
    assert table.header == ["n_layers", "残差", "图里的运算节点", "matmul", "add", "reshape / transpose"]
    seen = []
    for cells in table.rows:
        n_layers, residual, count, matmul, add, movement = cells
        n_layers, count, matmul, add, movement = map(int, (n_layers, count, matmul, add, movement))
        assert residual in ("有", "无")
        seen.append((n_layers, residual))
        assert matmul == n_layers, f"the loop unrolls into one matmul per layer: {cells}"
        assert add == (n_layers if residual == "有" else 0), f"one add per residual layer, none without: {cells}"
        assert movement == 4, f"two reshapes and two transposes: {cells}"
        # Each layer records matmul + tanh (+ add); then the four reshape/transposes and one scaling mul.
        assert count == 2 * n_layers + add + movement + 1, f"the op count disagrees with its parts: {cells}"
    assert seen == [(1, "有"), (3, "有"), (3, "无")]


def test_demo2_side_effects_happen_only_while_tracing(demos):
    assert int(find_line(demos[2], r"追踪时 log 里有 (\d+) 条记录").group(1)) == 1
    assert int(find_line(demos[2], r"跑完后 log 里还是 (\d+) 条").group(1)) == 1


def test_demo2_wrong_shape_reports_the_failing_node(demos):
    m = find_line(demos[2], r"\[5, 8\] 的输入：(.*)$")
    assert m.group(1).startswith("报错："), f"running the [4, 8] graph on [5, 8] did not fail: {m.group(1)!r}"
    assert m.group(1).removeprefix("报错：").startswith("while executing")


# --- demo 3: data-dependent branches ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo3_rows(demos) -> list[list[str]]:
    (table,) = read_tables(demos[3])
    assert table.header == ["前端的做法", "得到什么", "后果"]
    assert len(table.rows) == 4
    return table.rows


def test_demo3_error_mode_raises_trace_error(demo3_rows):
    assert demo3_rows[0][1].startswith("TraceError：")


def test_demo3_specialize_is_silently_wrong(demo3_rows):
    _, got, consequence = demo3_rows[1]
    assert int(re.search(r"（(\d+) 个节点）", got).group(1)) == 1
    assert float(re.search(r"最大误差 (\S+)，", consequence).group(1)) > 0


def test_demo3_guard_passes_for_positive_and_fails_for_negative(demo3_rows):
    _, got, consequence = demo3_rows[2]
    assert int(re.search(r"（(\d+) 个）", got).group(1)) == 1
    assert "正数输入 guard 通过" in consequence
    assert "负数输入 guard 失败" in consequence


def test_demo3_graph_break_is_exact(demo3_rows):
    _, got, consequence = demo3_rows[3]
    m = re.fullmatch(r"(\d+) 张图，节点数 \[(.*)\]", got)
    assert m, got
    counts = [int(n) for n in m.group(2).split(",")]
    assert int(m.group(1)) == len(counts) == 2
    assert counts == [3, 1]
    error = re.search(r"最大误差 (\S+)）", consequence).group(1)
    assert error == "0e+00"


# --- demo 4: bytecode ----------------------------------------------------------------------------------------


def function_code(path: Path, name: str) -> types.CodeType:
    """The code object of the module-level function ``name`` in the script at ``path``, compiled by this
    interpreter (the one the script ran under), without running the script."""
    module = compile(path.read_text(encoding="utf-8"), str(path), "exec")
    (code,) = [c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == name]
    return code


def test_demo4_bytecode_listing_is_this_pythons_dis(demos):
    lines = demos[4]
    m = find_line(lines, r"gelu_mlp 编译成 (\d+) 条字节码（Python (\d+)\.(\d+)）。前 (\d+) 条：")
    total, major, minor, shown = map(int, m.groups())
    assert (major, minor) == sys.version_info[:2], "the script ran under another Python than the test's"
    start = lines.index(m.group(0)) + 1
    listing = []
    for line in lines[start:]:
        ins = re.match(r"^  ([ \d]{4})  ([A-Z][A-Z0-9_]*) *(.*)$", line)
        if not ins:
            break
        listing.append((int(ins.group(1)), ins.group(2), ins.group(3)))
    assert len(listing) == shown == 12, f"the script says it lists {shown} instructions but lists {len(listing)}"

    # The reference: what dis says of the same function on this Python version (the listing differs between
    # versions: 3.11 has PRECALL before each CALL, 3.12 drops it, 3.13 loads two locals with LOAD_FAST_LOAD_FAST).
    expected = list(dis.get_instructions(function_code(SEED, "gelu_mlp")))
    assert total == len(expected)
    assert listing == [(i.offset, i.opname, i.argrepr) for i in expected[:12]]
    kinds = find_line(lines, r"其中二元运算 (\d+) 条、函数调用 (\d+) 条")
    names = [i.opname for i in expected]
    assert int(kinds.group(1)) == sum(1 for n in names if n.startswith("BINARY"))
    assert int(kinds.group(2)) == sum(1 for n in names if "CALL" in n)
    # gelu_mlp has two @ and eight of + and *, so at least ten binary operations whatever the Python version.
    assert int(kinds.group(1)) >= 10
