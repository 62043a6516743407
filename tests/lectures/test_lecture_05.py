"""lectures/lecture12/05_guards.py runs, and every claim it prints is true of what it printed."""

from __future__ import annotations

import dis
import re
import sys

import pytest

from tests.support.lecture_runner import REPO, find_text, run_lecture
from tests.lectures.test_seed_lecture import find_line, function_code, read_tables


@pytest.fixture(scope="module")
def demos(tmp_path_factory) -> dict[int, list[str]]:
    return run_lecture(tmp_path_factory.mktemp("lecture05"), "05_guards.py")


def test_eight_demos(demos):
    assert sorted(demos) == [1, 2, 3, 4, 5, 6, 7, 8]


def test_demo1_counts_recorded_instructions(demos):
    (table,) = read_tables(demos[1])
    recorded = [r for r in table.rows if r[3].startswith("recorded")]
    m = find_line(demos[1], r"(\d+) 条指令里，(\d+) 条往图里记了运算；图里共 (\d+) 个运算节点")
    assert int(m.group(1)) == len(table.rows)
    assert int(m.group(2)) == len(recorded) == int(m.group(3))
    assert [r[1] for r in recorded] == ["BINARY_OP", "CALL", "BINARY_OP"]
    obs = find_text(demos[1], r"(\d+)\s*条指令里只有\s*(\d+)\s*条进了图")
    assert (int(obs.group(1)), int(obs.group(2))) == (len(table.rows), len(recorded))


def test_demo1_lists_this_pythons_bytecode(demos):
    """The table is the bytecode of ``small`` as dis shows it on the Python running the tests (the script ran
    under the same), and the observations name the instructions of that listing, not of another version's."""
    (table,) = read_tables(demos[1])
    code = function_code(REPO / "lectures" / "lecture12" / "05_guards.py", "small")
    assert [(int(r[0]), r[1], r[2]) for r in table.rows] == [
        (i.offset, i.opname, i.argrepr) for i in dis.get_instructions(code)]
    version = find_text(demos[1], r"执行\s*Python\s*(\d+)\.(\d+)\s*的字节码")
    assert tuple(map(int, version.groups())) == sys.version_info[:2]
    loads = next(r[1] for r in table.rows if r[3].startswith("tensor"))
    assert find_text(demos[1], r"的字节码：(\w+)\s*把张量").group(1) == loads
    others = find_text(demos[1], r"其余指令（(.*?)）").group(1).split("、")
    assert others == list(dict.fromkeys(r[1] for r in table.rows if not r[3].startswith(("recorded", "tensor"))))


def test_demo2_guards(demos):
    (table,) = read_tables(demos[2])
    kinds = {r[2]: r[1] for r in table.rows}
    assert kinds["x"] == "array" and kinds["w"] == "array" and kinds["scale"] == "type"
    assert find_text(demos[2], r"scale\s*只有一个\s*(\w+)\s*guard").group(1) == "type"
    assert all(re.fullmatch(r"05_guards\.py:\d+", r[3]) for r in table.rows)
    m = find_line(demos[2], r"^共 (\d+) 个 guard，种类")
    assert int(m.group(1)) == len(table.rows)
    assert int(find_text(demos[2], r"共\s*(\d+)\s*个\s*guard。").group(1)) == len(table.rows)


def test_demo3_hits_and_recompiles(demos):
    (table,) = read_tables(demos[3])
    results = [r[1] for r in table.rows]
    assert results == ["重新编译", "命中缓存", "重新编译", "重新编译", "命中缓存", "命中缓存"]
    assert "x.shape[0] is 6" in table.rows[2][2]
    assert "dtype is float32" in table.rows[3][2]
    assert find_text(demos[3], r"换\s*scale\s*的值：(\S+?)——").group(1) == results[4]
    m = find_line(demos[3], r"6 次调用：(\d+) 次编译、(\d+) 次命中；结果和 eager 逐位相同：(.)")
    assert int(m.group(1)) == results.count("重新编译") and int(m.group(2)) == results.count("命中缓存")
    assert m.group(3) == "是"
    assert int(find_text(demos[3], r"一共编译了\s*(\d+)\s*次").group(1)) == int(m.group(1))


def test_demo4_branch_is_two_graphs_and_exact(demos):
    (table,) = read_tables(demos[4])
    for row in table.rows:
        assert row[1] == "2" and row[2] == "[2, 1]" and float(row[4]) == 0.0
    assert [r[3] for r in table.rows] == ["重新编译", "重新编译", "全部命中"]
    m = find_line(demos[4], r"explain：(\d+) 张图，(\d+) 次 graph break")
    assert (m.group(1), m.group(2)) == ("2", "1")
    assert find_text(demos[4], r"每次调用运行\s*(\d+)\s*张图").group(1) == "2"
    m = find_line(demos[4], r"改用 F.cond 写：(\d+) 张图，(\d+) 次 graph break，图里的控制流节点 \['cond'\]；编译 (\d+) 次，"
                            r"正负输入都和 eager 逐位相同：(.)")
    assert m.groups() == ("1", "0", "1", "是")
    obs = find_text(demos[4], r"于是只有\s*(\d+)\s*张图、(\d+)\s*次\s*graph\s*break")
    assert obs.groups() == ("1", "0")


def test_demo5_side_effect_every_call(demos):
    (table,) = read_tables(demos[5])
    for i, row in enumerate(table.rows, 1):
        assert row[1] == row[2] == str(i) and row[3] == "相同"
    m = find_line(demos[5], r"4 次调用，编译 (\d+) 次；counter 和输出每次都和 eager 一样：(.)")
    assert m.group(2) == "是"
    assert find_text(demos[5], r"4\s*次调用只编译了\s*(\d+)\s*次").group(1) == m.group(1) == "2"


def test_demo6_explain_and_recompile_limit(demos):
    find_line(demos[6], r"explain\(branchy\): 2 graph\(s\), 1 graph break\(s\)")
    m = find_line(demos[6], r"recompile_limit=3：编译 (\d+) 次，警告 (\d+) 次，之后 eager 运行；结果都正确：(.)")
    assert m.group(1) == "4" and m.group(2) == "1" and m.group(3) == "是"
    assert find_text(demos[6], r"编译器发出\s*(\d+)\s*次警告").group(1) == m.group(2)


def test_demo7_cache_hit_cost(demos):
    (table,) = read_tables(demos[7])
    us = {r[0]: float(r[1]) for r in table.rows}
    e, f, g = us["eager NumPy"], us["compile：快速路径"], us["compile：通用路径"]
    for row, value in zip(table.rows, (e, f, g)):
        # The ratio printed is of the unrounded times, each shown rounded to 0.1 us: it lies between the ratios of
        # the rounding bounds (and is itself rounded to 0.01).
        low, high = (value - 0.05) / (e + 0.05), (value + 0.05) / (e - 0.05)
        assert low - 0.005 - 1e-9 <= float(row[2].rstrip("x")) <= high + 0.005 + 1e-9
    m = find_line(demos[7], r"快速路径里有 (\d+) 个 guard 检查；三种方式结果逐位相同：(.)")
    assert int(m.group(1)) >= 3 and m.group(2) == "是"
    assert find_text(demos[7], r"按顺序检查\s*(\d+)\s*个\s*guard").group(1) == m.group(1)
    text = find_text(demos[7], r"每次\s*([\d.]+)\s*us；快速路径\s*([\d.]+)\s*us，快\s*([\d.]+)\s*倍，(比\s*eager\s*还快|是\s*eager\s*的\s*([\d.]+)x)")
    assert (float(text.group(1)), float(text.group(2))) == (g, f)
    assert abs(float(text.group(3)) - g / f) <= 0.1 + 1e-9  # (the text divides the unrounded times)
    assert (text.group(4).startswith("比")) == (f < e) or abs(f - e) < 0.1
    source = [line for line in demos[7] if line.startswith(("def make(", "    def __call__("))]
    assert len(source) == 2  # the generated function is printed


def test_demo8_mutated_argument_written_back(demos):
    (table,) = read_tables(demos[8])
    assert len(table.rows) == 3
    for i, row in enumerate(table.rows, 1):
        assert row[0] == str(i) and row[1] == row[2] and row[3] == "相同"
    m = find_line(demos[8], r"图里的运算：\[(.*)\]；写回 (\d+) 个数组（(\w+)）")
    ops = [o.strip().strip("'") for o in m.group(1).split(",")]
    assert (m.group(2), m.group(3)) == ("1", "u")
    graph = [line for line in demos[8] if line.lstrip().startswith("%")]
    assert sum("= index_update %0" in line for line in graph) == ops.count("index_update") >= 1
    update = next(line for line in graph if "index_update" in line).split(":")[0].strip()
    assert any(line.strip().startswith("return") and update in line for line in demos[8])  # u's new value is an output
    guards = [line for line in demos[8] if line.startswith("guard: ")]
    assert guards == ["guard: u is writeable (the graph writes into it)",
                      "guard: u shares no memory with f (the graph writes into it)"]
    m = find_line(demos[8], r"step\(x, x\)：编译 (\d+) 次，重新编译原因：(.*)；结果和 eager 逐位相同：(.)")
    assert m.group(1) == "2" and "may share memory with f" in m.group(2) and m.group(3) == "是"
    m = find_line(demos[8], r"3 次调用：(\d+) 张图、(\d+) 次 graph break；返回值、u 和视图都和 eager 逐位相同：(.)")
    assert m.groups() == ("1", "0", "是")  # the observation's "没有切断图"
    assert int(find_text(demos[8], r"变成图里的\s*(\d+)\s*个\s*index_update").group(1)) == ops.count("index_update")
    assert int(find_text(demos[8], r"这就是那\s*(\d+)\s*个\s*guard").group(1)) == len(guards)
