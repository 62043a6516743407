"""lectures/lecture12/08_modules_and_training.py runs, and every claim it prints is true of what it printed."""

from __future__ import annotations

import re

import pytest

from tests.support.lecture_runner import find_text, run_lecture


@pytest.fixture(scope="module")
def demos(tmp_path_factory) -> dict[int, list[str]]:
    return run_lecture(tmp_path_factory.mktemp("lecture08"), "08_modules_and_training.py")


def rows(lines: list[str], first: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in lines if line.strip().startswith(first)]


def test_demo1_call_module_rows_and_bit_for_bit(demos):
    lines = demos[1]
    call_rows = rows(lines, "call_module")
    assert [r[2] for r in call_rows] == ["features.0", "features.1", "features.2", "features.3", "classifier.0",
                                         "classifier.1"]
    m = find_text(lines, r"逐位相同 = (True|False)；call_module 行 (\d+) 个")
    assert m.group(1) == "True" and int(m.group(2)) == len(call_rows)
    assert find_text(lines, r"；(\d+) 个内置层是叶子").group(1) == str(len(call_rows))
    assert "    features_0 = getattr(self.features, '0')(x)" in lines


def test_demo2_hook_counts_and_the_counter(demos):
    table = {r[0]: r[1:] for r in (re.split(r"\s{2,}", line.strip()) for line in demos[2]) if len(r) == 3}
    eager, trace, calls = table["立即执行 model(x) 一次"], table["symbolic_trace 一次"], table["GraphModule 调用三次"]
    assert eager[0] == "1" and trace[0] == "0" and calls[0] == "3"
    assert int(trace[1]) == int(eager[1]) + 1 and calls[1] == trace[1]
    assert find_text(demos[2], r"钩子触发 (\d+) 次：追踪器").group(1) == trace[0]
    assert find_text(demos[2], r"追踪时执行了一次（变成 (\d+)）").group(1) == trace[1]
    compiled = table["compile(model) 调用三次"]
    assert compiled[0] == "3" and int(compiled[1]) == int(calls[1]) + 3  # hooks and counter run on every call
    m = find_text(demos[2], r"compile\(model\) 调用三次，钩子触发 (\d+) 次、counter 加到 (\d+)")
    assert m.groups() == tuple(compiled)


def test_demo5_compile_guards_mode_and_key(demos):
    lines = demos[5]
    table = [re.split(r"\s{2,}", line.strip()) for line in lines if line.strip().startswith(("eval", "model."))]
    assert [r[1] for r in table] == ["True"] * 5
    assert [r[2] for r in table] == ["是", "否（命中缓存）", "是", "是", "否（命中缓存）"]
    assert "    args[1] == 'cls'" in lines
    assert "    self.__dict__['_modules']['drop'].training == False" in lines
    m = find_text(lines, r"图 (\d+) 张，输入里有 (\d+) 个参数；.*逐位相同 = (True|False)，新抓图 (\d+) 次")
    assert m.groups() == ("1", "4", "True", "0")  # body, cls head: a weight and a bias each
    assert find_text(lines, r"参数不是常量：(\d+) 个参数").group(1) == m.group(2)


def test_demo3_fusion_and_refusal(demos):
    lines = demos[3]
    assert any("fused features.0 -> features.1 into features.0" in line for line in lines)
    before, after = map(int, find_text(lines, r"call_module 行数\s*(\d+) → (\d+)").groups())
    assert after == before - 1
    diff = float(find_text(lines, r"融合前后最大差\s*([0-9.e+-]+)").group(1))
    assert diff < 1e-7
    assert any("kept features.0 -> features.1: features.1 is in training mod" in line for line in lines)
    assert find_text(lines, r"少了一个 call_module（(\d+) → (\d+)）").groups() == (str(before), str(after))


def test_demo4_training_graph_claims(demos):
    lines = demos[4]
    losses = [float(r[1]) for r in (line.split() for line in lines) if len(r) == 2 and r[0].isdigit()]
    assert len(losses) == 5 and all(a > b for a, b in zip(losses, losses[1:])) and losses[-1] < 0.001
    forward = int(find_text(lines, r"前向 \+ 损失的运算节点\s*(\d+)").group(1))
    backward = int(find_text(lines, r"加上反向（grad_graph）\s*(\d+)").group(1))
    total = int(find_text(lines, r"整个训练步\s*(\d+)").group(1))
    assert forward < backward < total
    m = find_text(lines, r"前向只有 (\d+) 个节点，反向让它变成 (\d+) 个（反向比前向大），Adam 又加了 (\d+) 个")
    assert tuple(map(int, m.groups())) == (forward, backward, total - backward)
    eager = float(find_text(lines, r"立即执行\s*([0-9.]+) ms").group(1))
    captured = float(find_text(lines, r"抓成图\s*([0-9.]+) ms").group(1))
    assert captured < eager
    m = find_text(lines, r"损失从 ([0-9.]+) 降到 ([0-9.]+)（200 步）.*是一张 (\d+) 个运算节")
    assert float(m.group(2)) == losses[-1] and int(m.group(3)) == total
