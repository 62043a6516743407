"""
=============================================================================
CS349E · 第 12 讲 · 03_symbolic.py —— 符号形状：一张图对所有 batch 大小都成立
=============================================================================

【这个脚本要回答的问题】
01 脚本的演示 2 里，T, d = x.shape 把 4 和 8 写死进了图：[4, 8] 追踪出的图跑不了 [5, 8]。课程笔记 §3.3 的
第三种抓图策略——符号化（抽象解释，jax.make_jaxpr）——只跟踪形状和类型：形状里的大小可以是符号 T，
x.shape 返回符号，Python 对它的算术得到表达式（2*T、d//2），reshape、切片、除数、1/√d 都在运行时按真实
输入算出来。规则证明不了的事实（d 是偶数）变成带源代码行的 shape guard；TorchDynamo 的"自动动态形状"
在此基础上决定什么时候把一维变成符号。

演示 1：同一个函数，x 的形状写成 ("T", 8)：一张图跑 [4, 8]、[5, 8]、[6, 8]。
演示 2：静态图和符号图并排看：哪些类型变成了符号。
演示 3：make_graph：只给形状和 dtype（不给数据）的抽象解释，课程笔记 §3.3 的 simple_function。
演示 4：shape guard：d // 2 个头要求 d 是偶数；奇数 d 的输入被拒绝，原因和源代码行都在。
演示 5：compile 的自动动态形状：batch 大小 1..32 各调用一次，编译几次？

【运行】python3 03_symbolic.py        （< 1 秒）
【依赖】numpy；graph_lab；../lecture01 的 console。
"""

import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

import graph_lab  # noqa: E402
from graph_lab import F, Spec, failing_guards, make_graph, run, trace  # noqa: E402
from console import print_header, print_observations, print_table  # noqa: E402


def f(x, p, n_layers=3):
    """01 脚本演示 2 的函数：残差 MLP，然后拆成 2 个头再拼回来，乘 1/√d。"""
    for _ in range(n_layers):
        x = x + F.tanh(x @ p["W"])
    T, d = x.shape
    heads = x.reshape(T, 2, d // 2).transpose(1, 0, 2)
    return heads.transpose(1, 0, 2).reshape(T, d) * (1.0 / math.sqrt(d))


def demo1_one_graph_for_every_length():
    print_header("演示 1：x 的形状写成 (\"T\", 8)：一张图跑所有长度")
    rng = np.random.default_rng(1)
    p = {"W": rng.standard_normal((8, 8)) / 3}
    static = trace(f, {"x": (4, 8)}, p)
    symbolic = trace(f, {"x": ("T", 8)}, p)
    rows = []
    for T in (4, 5, 6):
        x = rng.standard_normal((T, 8))
        try:
            np.asarray(run(static, {"x": x})[0])
            static_result = "能跑"
        except ValueError:
            static_result = "报错"
        diff = np.abs(run(symbolic, {"x": x})[0] - f(x, p)).max()
        rows.append([f"[{T}, 8]", static_result, f"{diff:.1e}"])
    print_table(["输入形状", "[4, 8] 追踪的静态图", "符号图和 eager 的最大差"], rows)
    failed = sum(1 for r in rows if r[1] == "报错")
    print(f"\n静态图在 {failed} 种形状上报错；符号图在 3 种形状上都和 eager 逐位相同，"
          f"图里有 {symbolic.count()} 个运算节点，与静态图的 {static.count()} 个一样多。")
    print_observations([
        "T, d = x.shape 这一行在追踪时执行：T 是一个符号（SymInt），d 是 8。T 传给 reshape 就成了 reshape 的属性 "
        "shape=(T, 2, 4)，运行时按输入的真实长度求值——同一份 Python 代码，不用改一行。",
        f"静态图把 reshape 的目标形状 (4, 2, 4) 写死了，所以只有 [4, 8] 能跑（{failed} 种形状报错）；"
        "符号图的每个节点都带着 T，对任何长度都成立。",
        "math.sqrt(d) 的 d 是 8，一个普通的 Python 数：1/√8 照样算成一个常量。只有真正会变的大小才需要是符号。",
    ])


def demo2_types_side_by_side():
    print_header("演示 2：静态图和符号图并排看")
    rng = np.random.default_rng(2)
    p = {"W": rng.standard_normal((8, 8)) / 3}
    static = trace(lambda x, p: f(x, p, 1), {"x": (4, 8)}, p)
    symbolic = trace(lambda x, p: f(x, p, 1), {"x": ("T", 8)}, p)
    rows, changed = [], 0
    for a, b in zip(static.nodes, symbolic.nodes):
        attrs = "shape=(" + ", ".join(map(str, b.attrs["shape"])) + ")" if b.op == "reshape" else ""
        changed += str(a.output.type) != str(b.output.type)
        rows.append([b.op, str(a.output.type), str(b.output.type), attrs])
    print_table(["节点", "静态类型", "符号类型", "符号图里的属性"], rows)
    print(f"\n{len(rows)} 个节点里有 {changed} 个的类型带上了 T；符号图的文本：\n")
    print(symbolic)
    print_observations([
        "这就是 jax.make_jaxpr 打印的那种带类型的 IR，只是形状里允许出现符号：f64[T,8]、f64[T,2,4]、f64[2,T,4]。"
        "W 是参数，它的类型 f64[8,8] 不变。",
        "图后面的 guard #0 写着 T >= 2：符号大小默认至少是 2。大小 0 和 1 是特例（和 TorchDynamo 一样）："
        "1 会广播、0 里没有元素，一张对它们也成立的图到处都得分情况，所以它们各用自己的静态图。",
    ])


def simple_function(x, W, b):
    """课程笔记 §3.3 的 JAX 例子：matmul、加 bias、relu。"""
    return F.relu(x @ W + b)


def demo3_make_graph():
    print_header("演示 3：make_graph：只给形状和 dtype 的抽象解释")
    g = make_graph(simple_function, Spec(("B", 128), "float32"), Spec((128, 64), "float32"),
                   Spec((64,), "float32"))
    print(g)
    rng = np.random.default_rng(3)
    W, b = rng.standard_normal((128, 64)).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    rows = []
    for B in (2, 32, 100):
        x = rng.standard_normal((B, 128)).astype(np.float32)
        out = run(g, {"x": x, "W": W, "b": b})[0]
        rows.append([B, f"{out.dtype}{list(out.shape)}", "相同" if np.array_equal(out, simple_function(x, W, b))
                     else "不同"])
    print()
    print_table(["B", "输出", "和 eager 比"], rows)
    print(f"\n图里 {g.count()} 个运算节点，没有用到任何数据；输出类型 {g.outputs[0].type}。")
    print_observations([
        "课程笔记里 jax.make_jaxpr 要先造一个 jnp.ones((32, 128)) 才能抽象执行；make_graph 直接收形状和 dtype："
        "Spec((\"B\", 128), \"float32\") 说\"B 行 128 列的 float32\"，得到 f32[B,128] → f32[B,64]。",
        "每个节点的类型都由 op 的形状规则推出来（matmul 要求内维相等，add 按广播规则）——这正是抽象解释：只算类型，不算数值。",
    ])


def two_heads(x):
    T, d = x.shape
    heads = x.reshape(T, 2, d // 2)
    return heads.transpose(1, 0, 2) * (1.0 / np.sqrt(d))


def demo4_shape_guards():
    print_header("演示 4：shape guard：d // 2 个头要求 d 是偶数")
    g = trace(two_heads, {"x": ("T", "d")})
    print(g)
    rows = []
    rng = np.random.default_rng(4)
    for shape in ((4, 8), (5, 6), (4, 7)):
        x = rng.standard_normal(shape)
        failures = failing_guards(g, {"x": x})
        if failures:
            result = "拒绝：" + "; ".join(str(fl) for fl in failures)
        else:
            same = np.array_equal(run(g, {"x": x})[0], two_heads(x))
            result = "通过，和 eager " + ("相同" if same else "不同")
        rows.append([str(list(shape)), result])
    print()
    print_table(["输入形状", "guard 检查"], rows)
    try:
        run(g, {"x": rng.standard_normal((4, 7))})
        message = "没有报错"
    except ValueError as e:
        message = str(e).split(". Capture again")[0]
    print(f"\nrun 在奇数 d 上的报错：{message}")
    print_observations([
        "reshape 要求元素个数不变：T*d == T*2*(d//2)。这对所有 d 不成立，只在 d % 2 == 0 时成立——形状规则证明不了，"
        "就把它记成 shape guard，附上让它产生的那一行代码；np.sqrt(d) 变成了运行时才算的 size 节点。",
        "奇数 d 的输入在运行之前就被 guard 拒绝，错误信息说出了哪个 guard、d 是多少、来自哪一行——不会悄悄算出错的结果。"
        "规则能证伪的事实（比如把 [B, 2] reshape 成 [B, 3]）在抓图时就直接报错。",
    ])


def small(x, w):
    return np.tanh(x @ w) * 0.5


def demo5_automatic_dynamic():
    print_header("演示 5：compile 的自动动态形状：batch 1..32 各调用一次")
    rng = np.random.default_rng(5)
    w = rng.standard_normal((4, 4))
    rows, first_logs = [], {}
    for label, dynamic in (("None（自动，默认）", None), ("False（从不）", False), ("True（一开始就符号）", True)):
        cf = graph_lab.compile(small, dynamic=dynamic, recompile_limit=64)
        exact = True
        for B in range(1, 33):
            x = rng.standard_normal((B, 4))
            exact = exact and np.array_equal(cf(x, w), small(x, w))
        rows.append([label, cf.captures, "是" if exact else "否"])
        first_logs[label] = cf.recompile_log[0] if cf.recompile_log else ""
    print_table(["dynamic", "32 种 batch 大小编译了几次", "结果都和 eager 相同"], rows)
    print("\n（recompile_limit 提高到 64，让 dynamic=False 每种大小都真的编译；默认的上限 8 见 05 脚本演示 6。）")
    log = first_logs["None（自动，默认）"].split(": ", 1)[1]
    print(f"\n自动模式的重新编译日志：{log}")
    print_observations([
        f"dynamic=None：第一次按静态形状编译（B=1）；B=2 时形状 guard 失败、只是大小变了，于是把这一维变成符号 s0 "
        f"重新编译，之后的 30 种大小都命中这张符号图：一共 {rows[0][1]} 次，而 dynamic=False 编译了 {rows[1][1]} 次。",
        "dynamic=True 一开始就把每一维当符号，但 B=1 仍然单独编译：大小 0 和 1 是特例（0/1 specialization）。",
        "日志说清楚了哪一维变成了动态、为什么——这正是 TorchDynamo 的 automatic dynamic shapes 做的事。",
    ])


if __name__ == "__main__":
    demo1_one_graph_for_every_length()
    demo2_types_side_by_side()
    demo3_make_graph()
    demo4_shape_guards()
    demo5_automatic_dynamic()
