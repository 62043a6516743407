"""
=============================================================================
CS349E · 第 12 讲 · 04_graph_surgery.py —— 手工建图、三种看法、改写与插桩
=============================================================================

【这个脚本要回答的问题】
抓到一张图以后，编译器和工具要对它做什么？课程笔记 §1.1 和 §4 给出了答案：像搭积木一样手工建图、
以表格和 Python 代码的形式阅读它、找出一个模式并整体替换（比如把手写的 GELU 换成一个 gelu 节点）、
在运行时给每个节点挂钩子看中间结果，最后把它画出来。

演示 1：手工建 y = ReLU(x @ W + b)：节点、生产者和使用者。
演示 2：同一张图的三种写法：SSA 文本、表格、Python 代码；文本还能原样读回来。
演示 3：模式改写：把追踪出来的手写 GELU（9 个节点）换成一个 gelu 节点，结果逐位不变。
演示 4：插桩：给解释器挂一个钩子，记下每个节点的形状和数值范围。
演示 5：画图：一个不联网的 HTML 文件。

【运行】python3 04_graph_surgery.py        （< 1 秒）
【依赖】numpy；graph_lab；../lecture01 的 console。
"""

import math
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

import graph_lab  # noqa: E402
from graph_lab import F, GraphBuilder, Interpreter, replace_pattern, run, trace  # noqa: E402
from console import print_header, print_observations, print_table  # noqa: E402


def build_linear_relu():
    rng = np.random.default_rng(0)
    b = GraphBuilder("linear_relu")
    x = b.input("x", (2, 4))
    w = b.param("W", rng.standard_normal((4, 3)))
    bias = b.param("b", rng.standard_normal(3))
    y = b.relu(b.add(b.matmul(x, w), bias))
    return b.output(y)


def demo1_build():
    print_header("演示 1：手工建图 y = ReLU(x @ W + b)")
    g = build_linear_relu()
    print(g)
    numbering = g.numbering()
    rows = []
    for node in g.nodes:
        users = sorted({f"%{numbering[u.outputs[0]]}" for u in node.outputs[0].users})
        makers = [f"%{numbering[v]}（{v.node.op}）" for v in node.inputs]
        rows.append([f"%{numbering[node.outputs[0]]}", node.op, "、".join(makers) or "—", "、".join(users) or "（输出）"])
    print_table(["值", "运算", "输入来自（生产者）", "被谁使用（使用者）"], rows)
    x = np.random.default_rng(1).standard_normal((2, 4))
    eager = np.maximum(x @ g.param_values["W"] + g.param_values["b"], 0)
    diff = np.abs(run(g, {"x": x})[0] - eager).max()
    print(f"\n图里 {len(g.nodes)} 个节点，其中 {g.count()} 个运算；和直接用 NumPy 算的最大差 {diff:.1e}。")
    print_observations([
        f"GraphBuilder 的每个方法（matmul、add、relu）都来自同一张算子表，建图时就按算子的规则推出类型："
        f"{g.count()} 个运算节点，每个值只定义一次。",
        "每个值记得它的生产者（producer），也记得所有使用者（users）；改图时（替换、删除节点）这些记录会自动更新。",
    ])
    return g


def gelu_mlp(x, p):
    h = x @ p["W1"]
    g = 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))
    return g @ p["W2"]


def demo2_views(g):
    print_header("演示 2：同一张图的三种写法")
    g.print_tabular()
    print()
    print(g.code)
    text = str(g)
    back = graph_lab.parse(text, dict(g.param_values))
    same_text = str(back) == text
    x = np.random.default_rng(2).standard_normal((2, 4))
    same_result = np.array_equal(run(back, {"x": x})[0], run(g, {"x": x})[0])
    same_python = np.array_equal(g.to_python()(x=x)[0], run(g, {"x": x})[0])
    print(f"\n文本读回来再打印：{'完全相同' if same_text else '不同'}；读回来的图运行结果：{'逐位相同' if same_result else '不同'}；"
          f"生成的 Python 函数运行结果：{'逐位相同' if same_python else '不同'}。")
    print_observations([
        "SSA 文本、表格、Python 代码是同一张图的三种看法。torch.fx 的文本读不回来；graph_lab 的文本有写下来的语法"
        "（docs/ir.md），打印 → 解析 → 打印得到完全相同的文本。",
        "生成的 Python 代码里变量名是 v0、v1……，输入和参数按位置传进去：用户数据里的名字不会进到要执行的代码里。",
    ])


def hand_gelu(h):
    return 0.5 * h * (1.0 + F.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * h * h * h)))


def one_gelu(h):
    return F.gelu(h)


def demo3_rewrite():
    print_header("演示 3：模式改写：手写 GELU → 一个 gelu 节点")
    rng = np.random.default_rng(3)
    p = {"W1": rng.standard_normal((8, 16)) / 3, "W2": rng.standard_normal((16, 8)) / 4}
    g = trace(gelu_mlp, {"x": (4, 8)}, p)
    x = rng.standard_normal((4, 8))
    exact_before = np.array_equal(run(g, {"x": x})[0], gelu_mlp(x, p))
    before, gelus_before = g.count(), sum(1 for n in g.nodes if n.op == "gelu")
    matches = replace_pattern(g, hand_gelu, one_gelu)
    g.verify()
    after = g.count()
    exact = np.array_equal(run(g, {"x": x})[0], gelu_mlp(x, p))
    print_table(["", "运算节点", "gelu 节点", "和 eager 逐位相同"],
                [["改写前", before, gelus_before, "是" if exact_before else "否"],
                 ["改写后", after, sum(1 for n in g.nodes if n.op == "gelu"), "是" if exact else "否"]])
    print(f"\n找到 {len(matches)} 处匹配，每处 {len(matches[0].nodes)} 个运算节点换成 1 个。")
    print_observations([
        f"模式和替换都是普通的 Python 函数，先各自追踪成小图，再在大图里找同样的运算、同样的常量、同样的连接方式："
        f"这里 {len(matches[0].nodes)} 个节点换成 1 个，图从 {before} 个运算变成 {after} 个。",
        "gelu 算子的实现就是同一串 NumPy 运算（同样的顺序、同样的常量），所以改写前后结果逐位相同——"
        "改写是否\"精确\"要看实现，不能想当然（比如 x + 0.0 对 -0.0 就不是恒等）。",
    ])
    return g


def demo4_hooks(g):
    print_header("演示 4：插桩：每个节点运行后调用一次钩子")
    records = []

    def hook(node, value):
        if node.op not in ("input", "param", "const"):
            records.append([node.op, str(np.shape(value)), f"{np.min(value):.3f}", f"{np.max(value):.3f}"])

    interp = Interpreter(g)
    handle = interp.register_hook(hook)
    x = np.random.default_rng(4).standard_normal((4, 8))
    out = interp.run({"x": x})[0]
    handle.remove()
    print_table(["运算", "形状", "最小值", "最大值"], records)
    same = np.array_equal(out, run(g, {"x": x})[0])
    print(f"\n钩子被调用了 {len(records)} 次（每个运算节点一次）；插桩不改变结果：{'是' if same else '否'}。")
    print_observations([
        f"Interpreter 对每个算子族有一个可以重写的方法，钩子在每个节点之后被调用——和课程笔记 §4.3 的 forward hook 一样，"
        f"这里记下了 {len(records)} 个中间结果的形状和范围。",
        "gelu 之后的最小值不会低于 -0.17 左右（GELU 的下界），这类范围检查就是调试数值问题的第一步。",
    ])


def demo5_picture(g):
    print_header("演示 5：画出来")
    path = os.path.join(tempfile.mkdtemp(), "gelu_mlp.html")
    graph_lab.view(g, path)
    size = os.path.getsize(path)
    print(f"写出了 {os.path.basename(path)}（{size // 1024} KB，不联网，一个文件）；仓库里 docs/gelu_mlp.png 是它的截图。")
    print_observations([
        "节点按算子族着色，输入、参数、常量单独标出，边上写着类型，鼠标停在节点上会显示生成它的源代码行。",
    ])


if __name__ == "__main__":
    linear = demo1_build()
    demo2_views(linear)
    rewritten = demo3_rewrite()
    demo4_hooks(rewritten)
    demo5_picture(rewritten)
