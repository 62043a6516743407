"""lectures/lecture12/04_graph_surgery.py runs, and every claim it prints is true of what it printed."""

from __future__ import annotations

import re

import pytest

from tests.support.lecture_runner import REPO, find_text, run_lecture
from tests.lectures.test_seed_lecture import find_line, read_tables


@pytest.fixture(scope="module")
def demos(tmp_path_factory) -> dict[int, list[str]]:
    return run_lecture(tmp_path_factory.mktemp("lecture04"), "04_graph_surgery.py")


def test_five_demos(demos):
    assert sorted(demos) == [1, 2, 3, 4, 5]


def test_demo1_graph_producers_and_users(demos):
    lines = demos[1]
    defined = [int(m.group(1)) for m in (re.match(r"\s+%(\d+): ", line) for line in lines) if m]
    assert defined == list(range(len(defined)))  # SSA: each %N once, in order
    (table,) = read_tables(lines)
    ops = {row[0]: row[1] for row in table.rows}
    assert [ops[f"%{i}"] for i in range(6)] == ["input", "param", "param", "matmul", "add", "relu"]
    # a producer listed for a value must name the user back, and the reverse
    for row in table.rows:
        for producer in re.findall(r"(%\d+)（", row[2]):
            user_row = next(r for r in table.rows if r[0] == producer)
            assert row[0] in user_row[3]
    m = find_line(lines, r"图里 (\d+) 个节点，其中 (\d+) 个运算；和直接用 NumPy 算的最大差 (\S+)。")
    assert int(m.group(1)) == len(defined) and int(m.group(2)) == 3 and float(m.group(3)) == 0.0
    assert find_text(lines, r"推出类型：(\d+)\s*个运算节点").group(1) == "3"


def test_demo2_three_views_and_round_trip(demos):
    lines = demos[2]
    (table,) = read_tables(lines)
    assert [r[1] for r in table.rows] == ["input", "param", "param", "matmul", "add", "relu", "return"]
    assert any(line.startswith("def forward(") for line in lines)
    assert find_line(lines, r"文本读回来再打印：(\S+)；读回来的图运行结果：(\S+)；生成的 Python 函数运行结果：(\S+)。").groups() \
        == ("完全相同", "逐位相同", "逐位相同")
    code = [line for line in lines if re.match(r"\s+v\d+ = ", line)]
    assert code and all('"' not in line and "'" not in line for line in code)  # no names from user data


def test_demo3_rewrite(demos):
    (table,) = read_tables(demos[3])
    before, after = table.rows
    assert before[3] == after[3] == "是"
    assert (int(before[2]), int(after[2])) == (0, 1)
    m = find_line(demos[3], r"找到 (\d+) 处匹配，每处 (\d+) 个运算节点换成 1 个。")
    assert m.group(1) == "1"
    assert int(before[1]) - int(after[1]) == int(m.group(2)) - 1
    obs = find_text(demos[3], r"这里\s*(\d+)\s*个节点换成\s*1\s*个，图从\s*(\d+)\s*个运算变成\s*(\d+)\s*个")
    assert obs.groups() == (m.group(2), before[1], after[1])


def test_demo4_hooks(demos):
    (table,) = read_tables(demos[4])
    assert [r[0] for r in table.rows] == ["matmul", "gelu", "matmul"]
    for row in table.rows:
        assert float(row[2]) <= float(row[3])
    assert float(table.rows[1][2]) >= -0.1701  # the claimed lower bound of (tanh) GELU
    m = find_line(demos[4], r"钩子被调用了 (\d+) 次（每个运算节点一次）；插桩不改变结果：(.)。")
    assert int(m.group(1)) == len(table.rows) and m.group(2) == "是"


def test_demo5_picture(demos):
    m = find_line(demos[5], r"写出了 gelu_mlp\.html（(\d+) KB")
    assert int(m.group(1)) > 0
    assert (REPO / "docs" / "gelu_mlp.png").is_file()
