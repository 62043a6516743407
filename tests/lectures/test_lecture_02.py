"""lectures/lecture12/02_script.py runs, and every claim it prints is true of what it printed."""

from __future__ import annotations

import pytest

import graph_lab
from tests.support.lecture_runner import find_text, run_lecture
from tests.lectures.test_seed_lecture import find_line, read_tables


def ir_text(lines: list[str]) -> str:
    """The printed graph of a section: from its ``graph NAME {`` line to the closing ``}``."""
    start = next(i for i, line in enumerate(lines) if line.startswith("graph "))
    end = next(i for i in range(start, len(lines)) if lines[i] == "}")
    return "\n".join(lines[start:end + 1])


@pytest.fixture(scope="module")
def demos(tmp_path_factory) -> dict[int, list[str]]:
    return run_lecture(tmp_path_factory.mktemp("lecture02"), "02_script.py")


def test_seven_demos(demos):
    assert sorted(demos) == [1, 2, 3, 4, 5, 6, 7]


def test_demo1_trace_stops_at_the_data_dependent_if(demos):
    find_line(demos[1], r"^data-dependent value: %\d+ = gt\(.*\) \(bool\[\]\) is needed as a Python bool at "
                        r"02_script\.py:\d+: `if x\.sum\(\) > 0:`$")


def test_demo2_specialize_is_silently_wrong_and_guard_says_so(demos):
    (table,) = read_tables(demos[2])
    rows = {(r[0], r[2]): r for r in table.rows}
    assert all(r[1] == "p['b1'], p['w1']" for r in table.rows)  # one branch: layer1's parameters only
    assert float(rows["specialize", "正"][4]) == 0 and float(rows["guard", "正"][4]) == 0
    assert float(rows["specialize", "负"][4]) > 0 and rows["specialize", "负"][3] == "是"
    assert rows["guard", "负"][3] == "否" and rows["guard", "正"][3] == "是"
    assert find_text(demos[2], r"结果和 eager 差\s*([\d.e+-]+)").group(1) == rows["specialize", "负"][4]


def test_demo3_lazy_runs_two_graphs_per_call(demos):
    (table,) = read_tables(demos[3])
    for row in table.rows:
        assert row[1:] == ["2", "[2, 1]", "是"]
    assert find_text(demos[3], r"每次调用都跑\s*(\d+)\s*张图").group(1) == "2"


def test_demo4_script_keeps_both_branches_in_one_cond(demos):
    text = ir_text(demos[4])
    back = graph_lab.parse(text, allow_missing_params=True)
    assert str(back) == text  # what the lecture prints is exact IR
    conds = [n for n in back.nodes if n.op == "cond"]
    assert len(conds) == 1 and [r.name for r in conds[0].regions] == ["then", "else"]
    then, orelse = conds[0].regions
    assert [n.op for n in then.nodes if n.op != "input"] == ["linear"] == [n.op for n in orelse.nodes
                                                                          if n.op != "input"]
    assert then.nodes[-1].inputs[1].node.attrs["name"] == "p['w1']"
    assert orelse.nodes[-1].inputs[1].node.attrs["name"] == "p['w2']"
    (table,) = read_tables(demos[4])
    assert [r[1] for r in table.rows] == ["是", "是"]
    m = find_text(demos[4], r"变成\s*(\d+)\s*个 cond 节点，带\s*(\d+)\s*个区域")
    assert (int(m.group(1)), int(m.group(2))) == (1, 2)


def test_demo5_dataflow_costs_a_branch_and_where_is_safe(demos):
    lines = demos[5]
    find_line(lines, r"^%\d+ = cond\(.*\) \[02_script\.py:\d+\] -> both branches \(2 ops, now run on every "
                     r"call\) and 1 where$")
    graph = graph_lab.parse(ir_text(lines), allow_missing_params=True)
    ops = [n.op for n in graph.nodes if n.op not in ("input", "param", "const")]
    assert ops == ["sum", "gt", "linear", "linear", "where"]
    cost, hazard = read_tables(lines)
    (cond_row, where_row) = cost.rows
    assert (cond_row[1], cond_row[2], where_row[1], where_row[2]) == ("4", "1", str(len(ops)), "2")
    assert cond_row[3] == where_row[3] == "是"
    mask, unguarded, guarded = hazard.rows
    assert "nan" in mask[1] and mask[2] == "否"
    assert unguarded[2] == guarded[2] == "是" and "nan" not in unguarded[1] + guarded[1]
    assert int(unguarded[3]) > 0 and guarded[3] == "0"
    m = find_text(lines, r"每次调用执行\s*(\d+)\s*个运算（cond 版本\s*(\d+)\s*个），linear 从\s*(\d+)\s*次变成"
                         r"\s*(\d+)\s*次")
    assert m.groups() == (where_row[1], cond_row[1], cond_row[2], where_row[2])
    assert find_text(lines, r"NumPy 报了\s*(\d+)\s*个警告").group(1) == unguarded[3]
    assert find_text(lines, r"警告数\s*(\d+)；").group(1) == guarded[3]


def test_demo6_while_loop_counts_come_from_the_data(demos):
    graph = graph_lab.parse(ir_text(demos[6]))
    (loop,) = [n for n in graph.nodes if n.op == "while_loop"]
    assert [r.name for r in loop.regions] == ["cond", "body"] and len(loop.outputs) == 2
    (table,) = read_tables(demos[6])
    counts = [int(r[1]) for r in table.rows]
    assert counts == [0, 2, 5]
    for row in table.rows:
        assert row[2] == row[1] and row[3] == "是" and row[4] == "2"
        assert row[5] == ("是" if row[1] == "2" else "否")
    m = find_text(demos[6], r"这里是\s*(\d+)、(\d+)、(\d+)\s*次")
    assert [int(g) for g in m.groups()] == counts
    m = find_text(demos[6], r"写死了\s*(\d+)\s*个 mul、n 是常数\s*(\d+)")
    assert m.group(1) == m.group(2) == "2"


def test_demo7_side_by_side_table(demos):
    (table,) = read_tables(demos[7])
    rows = {r[0]: r for r in table.rows}
    assert list(rows) == ["追踪 mode=error", "追踪 mode=specialize", "追踪 mode=guard", "LazyRunner",
                          "显式算子 F.cond", "解析源码 script", "script + 转数据流"]
    assert rows["追踪 mode=error"][1] == "抓图失败"
    assert [rows[k][1] for k in list(rows)[1:]] == ["1", "1", "1", "2", "2", "2"]
    assert [rows[k][2] for k in list(rows)[1:]] == ["否", "否", "是", "是", "是", "是"]
    assert [rows[k][3] for k in list(rows)[1:]] == ["1", "1", "2", "1", "1", "1"]
    assert [rows[k][4] for k in rows] == ["1", "1", "1", "1", "1", "0", "0"]
    for row in table.rows:
        for cell in row[5:]:
            assert cell == "—" or float(cell) >= 0
    both = find_text(demos[7], r"两支都在图里的只有：(.*?)。").group(1).split("、")
    assert both == [k for k in rows if rows[k][1] == "2"]
    assert find_text(demos[7], r"script 是\s*(\d+)\s*次").group(1) == rows["解析源码 script"][4]
