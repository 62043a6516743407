"""lectures/lecture12/06_equivalence.py runs, and every claim it prints is true of what it printed."""

from __future__ import annotations

import re

import pytest

from tests.support.lecture_runner import find_text, run_lecture
from tests.lectures.test_seed_lecture import find_line, read_tables


@pytest.fixture(scope="module")
def demos(tmp_path_factory) -> dict[int, list[str]]:
    return run_lecture(tmp_path_factory.mktemp("lecture06"), "06_equivalence.py")


def test_six_demos(demos):
    assert sorted(demos) == [1, 2, 3, 4, 5, 6]


def test_demo1_isomorphism_is_hash_equality_and_stricter_than_equal_results(demos):
    (table,) = read_tables(demos[1])
    base_hash = table.rows[0][2]
    for row in table.rows:
        assert re.fullmatch(r"[0-9a-f]{16}", row[2])
        assert (row[3] == "是") == (row[2] == base_hash), row
    assert [r[3] for r in table.rows] == ["是", "是", "否", "是", "否"]
    assert table.rows[0][1] != table.rows[1][1]  # b really records its nodes in another order
    iso = sum(r[3] == "是" for r in table.rows)
    equal = sum(r[4] == "是" for r in table.rows)
    m = find_line(demos[1], r"5 种写法里 (\d+) 种和 a 同构，(\d+) 种算出的结果和 a 逐位相同")
    assert (int(m.group(1)), int(m.group(2))) == (iso, equal) and equal > iso
    obs = find_text(demos[1], r"(\d+)\s*种写法结果相同，只有\s*(\d+)\s*种同构")
    assert (int(obs.group(1)), int(obs.group(2))) == (equal, iso)
    assert find_line(demos[1], r"^return v\d+\.0$")


def test_demo2_counterexample_only_for_the_specialized_trace(demos):
    (table,) = read_tables(demos[2])
    specialized, guarded, compiled = table.rows
    assert specialized[1] == "找到：输入 'negatives'"
    total = float(re.search(r"和 (-?[\d.]+)", specialized[2]).group(1))
    assert total < 0
    assert guarded[1] == compiled[1] == "没找到"
    same, rejected = map(int, re.search(r"(\d+) 个输入算得一样，(\d+) 个被 guard 拒绝", guarded[2]).groups())
    assert same + rejected == 200 and rejected > 0 and same > 0
    assert re.search(r"^200 个输入全部一样", compiled[2])
    m = find_line(demos[2], r"^第 (\d+) 个输入 'negatives' 就是反例")
    assert m.group(1) == "2"
    obs = find_text(demos[2], r"第\s*(\d+)\s*个输入（全是负数，和为\s*(-?[\d.]+)）")
    assert obs.group(1) == "2" and abs(float(obs.group(2)) - total) < 0.01
    obs = find_text(demos[2], r"过不了\s*guard（(\d+)\s*个被拒绝），过得了\s*guard\s*的\s*(\d+)\s*个")
    assert (int(obs.group(1)), int(obs.group(2))) == (rejected, same)


def test_demo3_reordering_judged_against_float64(demos):
    (table,) = read_tables(demos[3])
    folded, summed, half = table.rows
    for row in table.rows:
        assert row[1] == "否" and int(row[2]) > 0
    assert (folded[5], folded[6]) == ("通过", "通过")
    assert (summed[5], summed[6]) == ("不通过", "通过")
    assert float(summed[4]) < float(summed[3])  # the pairwise sum is the more accurate one
    assert (half[5], half[6]) == ("不通过", "不通过")
    assert float(half[4]) > 2 * float(half[3])
    assert float(folded[4]) <= 2 * float(folded[3])
    m = find_line(demos[3], r"check\(顺序求和, 两两求和\)：(\S+?)，(\d+) 个输入")
    assert m.group(1) == "等价" and m.group(2) == "5"
    obs = find_text(demos[3], r"更接近\s*float64（(\S+)\s*对\s*(\S+)）")
    assert (obs.group(1), obs.group(2)) == (summed[4], summed[3])
    find_text(demos[3], r"float64\s*rtol\s*=\s*atol\s*=\s*1e-7；float32\s*rtol\s*1\.3e-6、atol\s*1e-5")


def test_demo4_trace_loses_side_effects_compile_keeps_them(demos):
    (table,) = read_tables(demos[4])
    rows = {r[0]: r[1:] for r in table.rows}
    assert rows["eager"] == ["3", "3", "3", "是"]
    assert rows["trace（specialize）"] == ["0", "1", "1", "是"]
    assert rows["graph_lab.compile"] == rows["eager"]
    assert find_line(demos[4], r"check\(step, trace 的图\)：(\S+?)——printed text").group(1) == "不等价"
    assert find_line(demos[4], r"check\(step, compile\(step\)\)：(\S+?)，").group(1) == "等价"
    obs = find_text(demos[4], r"表里是\s*(\d+)）.*停在追踪时留下的\s*(\d+)")
    assert (obs.group(1), obs.group(2)) == ("0", "1")
    assert find_text(demos[4], r"3\s*次调用打印\s*(\d+)\s*行，和\s*eager\s*完全一样").group(1) == "3"


def test_demo5_random_draws(demos):
    (table,) = read_tables(demos[5])
    rows = {r[0]: r[1:] for r in table.rows}
    assert rows["eager"][:2] == ["3", "是"]
    assert rows["trace"] == ["1", "否", "不等价"]
    assert rows["graph_lab.compile"] == ["3", "是", "等价"]
    assert find_line(demos[5], r"trace（默认 mode='error'）：(\S+?)：random draw").group(1) == "TraceError"
    warned = int(find_line(demos[5], r"FrozenRandomWarning (\d+) 次").group(1))
    assert warned == 1
    assert int(find_text(demos[5], r"但发出\s*(\d+)\s*次警告").group(1)) == warned
    obs = find_text(demos[5], r"3\s*次调用只有\s*(\d+)\s*种输出.*真正调用它：(\d+)\s*种输出")
    assert (obs.group(1), obs.group(2)) == (rows["trace"][0], rows["graph_lab.compile"][0])


def test_demo6_differential_table_adds_up(demos):
    (table,) = read_tables(demos[6])
    assert [r[0] for r in table.rows] == ["trace", "script", "lazy", "compile"]
    for row in table.rows:
        runs, calls, refused, bad, crashed = map(int, row[1:])
        assert calls == 3 * (runs - refused) and bad == 0 and crashed == 0
    m = find_line(demos[6], r"(\d+) 个随机程序，(\d+) 种方式（(\d+) 个前端 × (\d+) 种 pass 流水线 × (\d+) 个后端），"
                            r"共 (\d+) 次运行；拒绝 (\d+) 次，不一致 (\d+) 次，崩溃 (\d+) 次")
    programs, ways, frontends, pipelines, backends, runs, refused, bad, crashed = map(int, m.groups())
    assert ways == frontends * pipelines * backends and frontends == len(table.rows)
    assert runs == sum(int(r[1]) for r in table.rows) == programs * ways
    assert refused == sum(int(r[3]) for r in table.rows) and bad == crashed == 0
    script = next(r for r in table.rows if r[0] == "script")
    assert find_text(demos[6], r"script\s*拒绝了\s*(\d+)\s*次").group(1) == script[3] and int(script[3]) > 0
    assert find_line(demos[6], r"^def program\(")
