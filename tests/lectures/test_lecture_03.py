"""lectures/lecture12/03_symbolic.py runs, and every claim it prints is true of what it printed."""

from __future__ import annotations

import re

import pytest

from tests.support.lecture_runner import REPO, find_text, run_lecture
from tests.lectures.test_seed_lecture import find_line, read_tables

SCRIPT = REPO / "lectures" / "lecture12" / "03_symbolic.py"


def script_line(code: str) -> int:
    (n,) = [i for i, line in enumerate(SCRIPT.read_text(encoding="utf-8").splitlines(), 1) if line.strip() == code]
    return n


@pytest.fixture(scope="module")
def demos(tmp_path_factory) -> dict[int, list[str]]:
    return run_lecture(tmp_path_factory.mktemp("lecture03"), "03_symbolic.py")


def test_five_demos(demos):
    assert sorted(demos) == [1, 2, 3, 4, 5]


def test_demo1_one_symbolic_graph_runs_every_length(demos):
    (table,) = read_tables(demos[1])
    assert [r[0] for r in table.rows] == ["[4, 8]", "[5, 8]", "[6, 8]"]
    assert [r[1] for r in table.rows] == ["能跑", "报错", "报错"]
    assert all(float(r[2]) == 0.0 for r in table.rows)
    m = find_line(demos[1], r"静态图在 (\d+) 种形状上报错；符号图在 3 种形状上都和 eager 逐位相同，图里有 (\d+) 个运算节点，"
                            r"与静态图的 (\d+) 个一样多")
    assert int(m.group(1)) == 2 and m.group(2) == m.group(3)
    assert find_text(demos[1], r"（(\d+)\s*种形状报错）").group(1) == "2"
    assert "shape=(T, 2, 4)" in "".join(demos[1])


def test_demo2_types_side_by_side(demos):
    (table,) = read_tables(demos[2])
    changed = [r for r in table.rows if r[1] != r[2]]
    assert all("T" in r[2] and "T" not in r[1] for r in changed)
    assert [r[0] for r in table.rows if r[1] == r[2]] == ["param", "const"]
    m = find_line(demos[2], r"(\d+) 个节点里有 (\d+) 个的类型带上了 T")
    assert (int(m.group(1)), int(m.group(2))) == (len(table.rows), len(changed))
    text = "\n".join(demos[2])
    assert 'f64[T,8] = input "x"' in text and "f64[T,2,4] = reshape %4 shape=(T, 2, 4)" in text
    assert re.search(r"guard #0: shape T >= 2 at 03_symbolic\.py:\d+", text)


def test_demo3_make_graph_from_shapes_alone(demos):
    text = "\n".join(demos[3])
    assert 'f32[B,128] = input "x"' in text and "f32[B,64] = relu" in text
    ops = re.findall(r"= (matmul|add|relu) ", text)
    assert ops == ["matmul", "add", "relu"]
    (table,) = read_tables(demos[3])
    for row in table.rows:
        assert row[1] == f"float32[{row[0]}, 64]" and row[2] == "相同"
    m = find_line(demos[3], r"图里 (\d+) 个运算节点，没有用到任何数据；输出类型 (\S+)。")
    assert int(m.group(1)) == len(ops) and m.group(2) == "f32[B,64]"


def test_demo4_the_shape_guard_names_the_line_and_rejects_odd_d(demos):
    line = script_line("heads = x.reshape(T, 2, d // 2)")
    guard = f"guard #2: shape d % 2 == 0 at 03_symbolic.py:{line}: `heads = x.reshape(T, 2, d // 2)`"
    assert guard in demos[4]
    (table,) = read_tables(demos[4])
    assert [r[1] for r in table.rows[:2]] == ["通过，和 eager 相同"] * 2
    assert table.rows[2][0] == "[4, 7]"
    assert table.rows[2][1] == f"拒绝：shape guard #2 d % 2 == 0: fails for d = 7 (guard from 03_symbolic.py:{line})"
    m = find_line(demos[4], r"run 在奇数 d 上的报错：(.*)$")
    assert f"shape guard #2 d % 2 == 0 at 03_symbolic.py:{line}" in m.group(1) and "d = 7" in m.group(1)
    assert "int = size d" in "\n".join(demos[4])


def test_demo5_automatic_dynamic_compiles_twice(demos):
    (table,) = read_tables(demos[5])
    counts = {r[0].split("（")[0]: int(r[1]) for r in table.rows}
    assert counts == {"None": 2, "False": 32, "True": 2}
    assert all(r[2] == "是" for r in table.rows)
    log = find_line(demos[5], r"自动模式的重新编译日志：(.*)$").group(1)
    assert "x.shape[0] is 2, the cached graph was built for 1" in log
    assert "x.shape[0] changed from 1 to 2, so it becomes dynamic" in log
    m = find_text(demos[5], r"一共\s*(\d+)\s*次，而\s*dynamic=False\s*编译了\s*(\d+)\s*次")
    assert (int(m.group(1)), int(m.group(2))) == (counts["None"], counts["False"])
