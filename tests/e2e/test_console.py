"""graph_lab.console: display widths, table alignment with CJK text, bold markup, observation wrapping.

Expected outputs are written out by hand (a CJK character is two columns), not computed with the module.
"""

import importlib.util
import io
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from graph_lab import console
from graph_lab.console import display_width, pad, print_header, print_observations, print_table

REPO = Path(__file__).resolve().parents[2]


def columns(s: str) -> int:
    """The test's own width rule, kept independent of the module: W/F are 2 columns, marks 0."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in s)


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def as_terminal(monkeypatch) -> FakeTerminal:
    """Make stdout look like a terminal with colour allowed; returns the buffer that receives output.

    Called inside the test body: pytest's own capture replaces sys.stdout after fixtures are set up.
    """
    out = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return out


# --- widths -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, width", [
    ("演示", 4),
    ("abc", 3),
    ("（x：[4, 8]）", 13),      # （ ： ） are full-width, 2 columns each; "x" and "[4, 8]" 7 more
    ("e\u0301", 1),              # e + combining acute accent
    ("—…", 2),                   # em dash and ellipsis are ambiguous-width: 1 column each
    ("\x1b[1m张量\x1b[0m", 4),   # ANSI bold codes take no columns
    ("", 0),
])
def test_display_width(text, width):
    assert display_width(text) == width


def test_pad_counts_columns_not_characters():
    assert pad("演示", 6) == "演示  "
    assert pad("演示", 6, "right") == "  演示"
    assert pad("ab", 6, "right") == "    ab"
    assert pad("演示演示", 4) == "演示演示"  # never truncates


def test_pad_rejects_unknown_alignment():
    with pytest.raises(ValueError, match="align"):
        pad("x", 3, "middle")


# --- tables -----------------------------------------------------------------------------------------


def test_table_exact_layout_with_cjk(capsys):
    print_table(["名称", "n"], [["演示", 3], ["ab", 12]])
    # column 1 is 4 wide ("名称", "演示"), column 2 is 2 wide ("12") and numeric, so right-aligned
    assert capsys.readouterr().out.splitlines() == [
        "名称   n",
        "----  --",
        "演示   3",
        "ab    12",
    ]


def test_table_columns_line_up_with_mixed_text(capsys):
    headers = ["前端的做法", "得到什么", "n"]
    rows = [
        ["报错（像 jax.jit）", "TraceError", 1],
        ["graph break", "2 张图，节点数 [3, 1]", 22],
        ["记一个 guard", "guard：s > 0", 333],
    ]
    print_table(headers, rows)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 + len(rows)
    # by hand: "报错（像 jax.jit）" is 报错（像 (8) + " jax.jit" (8) + ） (2) = 18 columns, the widest
    # first cell, so the second column starts at column 18 + 2 on every line
    second_cells = ["得到什么", "TraceError", "2 张图", "guard："]
    starts = [columns(line[:line.index(cell)]) for line, cell in zip(lines[:1] + lines[2:], second_cells)]
    starts.append(lines[1].index("  -") + 2)  # the separator is ASCII: columns = characters
    assert starts == [20] * len(lines)
    # numbers are right-aligned: every line ends at the same display column
    assert len({columns(line) for line in lines}) == 1


def test_table_formats_numbers(capsys):
    print_table(["value"], [[0.1 + 0.2], [1234567.0], [1e-7], [2.0], [np.float64(21.1)], [np.int64(80)],
                            [True], ["text"]])
    cells = [line.strip() for line in capsys.readouterr().out.splitlines()[2:]]
    assert cells == ["0.3", "1234567.0", "1e-07", "2", "21.1", "80", "True", "text"]


def test_table_aligns_each_cell_by_its_kind(capsys):
    print_table(["name", "x"], [["a", 1.5], ["b", "left"], ["c", True]])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "name  x"       # a column with text in it keeps its header on the left
    assert lines[2] == "a      1.5"    # a number is right-aligned in its 4-column cell
    assert lines[3] == "b     left"
    assert lines[4] == "c     True"    # a bool reads as a word: left-aligned


def test_table_rejects_ragged_rows():
    with pytest.raises(ValueError, match="row 1 has 3 cells but there are 2 headers"):
        print_table(["a", "b"], [[1, 2], [1, 2, 3]])


def test_table_strips_bold_when_not_a_terminal(capsys):
    print_table(["**名称**", "x"], [["**演示**", 1]])
    out = capsys.readouterr().out
    assert "**" not in out and "\x1b" not in out
    assert out.splitlines()[2] == "演示  1"


def test_table_bold_in_terminal_keeps_alignment(monkeypatch):
    terminal = as_terminal(monkeypatch)
    print_table(["名称", "x"], [["**演示**", 1], ["ab", 22]])
    lines = terminal.getvalue().splitlines()
    assert lines[2] == "\x1b[1m演示\x1b[0m   1"
    assert lines[3] == "ab    22"


# --- bold markup ------------------------------------------------------------------------------------


def test_observations_strip_bold_when_not_a_terminal(capsys):
    print_observations(["追踪只记录**张量**运算"])
    assert capsys.readouterr().out.splitlines()[-1] == "1. 追踪只记录张量运算"


def test_observations_render_bold_in_a_terminal(monkeypatch):
    terminal = as_terminal(monkeypatch)
    print_observations(["追踪只记录**张量**运算"])
    assert terminal.getvalue().splitlines()[-1] == "1. 追踪只记录\x1b[1m张量\x1b[0m运算"


def test_no_color_turns_bold_off(monkeypatch):
    terminal = as_terminal(monkeypatch)
    monkeypatch.setenv("NO_COLOR", "1")
    print_observations(["**粗体**"])
    assert terminal.getvalue().splitlines()[-1] == "1. 粗体"


# --- header -----------------------------------------------------------------------------------------


def test_header_short_title_uses_minimum_rule(capsys):
    print_header("演示 1：**追踪**")
    assert capsys.readouterr().out.split("\n") == ["", "=" * 60, "演示 1：追踪", "=" * 60, ""]


def test_header_rule_spans_a_wide_title(capsys):
    title = "演示" * 20 + "abc"  # 80 + 3 columns
    print_header(title)
    assert capsys.readouterr().out.split("\n") == ["", "=" * 83, title, "=" * 83, ""]


# --- observations -----------------------------------------------------------------------------------


def observation_lines(capsys) -> list[str]:
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["", "观察："]
    return lines[2:]


def test_observations_wrap_cjk_by_display_width(capsys):
    print_observations(["演" * 150])
    lines = observation_lines(capsys)
    # "1. " takes 3 columns, leaving 97: 48 wide characters (96 columns) fit, the 49th would not
    assert lines == ["1. " + "演" * 48, "   " + "演" * 48, "   " + "演" * 48, "   " + "演" * 6]


def test_observations_break_english_at_spaces(capsys):
    words = [f"word{i:02d}" for i in range(40)]
    print_observations([" ".join(words)])
    lines = observation_lines(capsys)
    assert len(lines) > 1
    assert all(columns(line) <= 100 for line in lines)
    assert lines[0].startswith("1. word00 ")
    assert all(line.startswith("   word") for line in lines[1:])  # hanging indent, whole words
    assert " ".join(line[3:] for line in lines).split(" ") == words


def test_observations_mixed_text_keeps_words_whole(capsys):
    item = "同一份模型代码既能用 numpy 数组立即执行，也能被追踪——这正是 PyTorch 的设计：torch.compile 在上面抓图。" * 4
    print_observations([item])
    lines = observation_lines(capsys)
    assert len(lines) >= 3
    assert all(columns(line) <= 100 for line in lines)
    assert all(line.startswith("   ") and not line.startswith("    ") for line in lines[1:])
    body = [line[3:] for line in lines]
    # no ASCII word is cut at a line end (the joined text differs from the item only by break spaces)
    for left, right in zip(body, body[1:]):
        assert not (left[-1].isascii() and left[-1].isalnum() and right[0].isascii() and right[0].isalnum())
    assert "".join(body).replace(" ", "") == item.replace(" ", "")


def test_observations_never_start_a_line_with_a_comma(capsys):
    print_observations(["演" * 48 + "，后面的话"])
    lines = observation_lines(capsys)
    assert lines == ["1. " + "演" * 48 + "，", "   后面的话"]


def test_observations_number_and_indent_many_items(capsys):
    print_observations([f"第 {i} 条" for i in range(1, 11)] + ["演" * 60])
    lines = observation_lines(capsys)
    assert lines[0] == " 1. 第 1 条"
    assert lines[9] == "10. 第 10 条"
    assert lines[10] == "11. " + "演" * 48
    assert lines[11] == "    " + "演" * 12


def test_observations_cut_a_word_longer_than_a_line(capsys):
    print_observations(["x" * 150])
    assert observation_lines(capsys) == ["1. " + "x" * 97, "   " + "x" * 53]


# --- the course's console module --------------------------------------------------------------------


def test_lecture01_console_reexports_graph_lab_console():
    path = REPO / "lectures" / "lecture01" / "console.py"
    spec = importlib.util.spec_from_file_location("lecture01_console", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.print_header is console.print_header
    assert module.print_table is console.print_table
    assert module.print_observations is console.print_observations
    assert sorted(module.__all__) == ["print_header", "print_observations", "print_table"]
