"""
=============================================================================
CS349E · 第 12 讲 · 05_guards.py —— 字节码抓图：guard、重新编译与 graph break
=============================================================================

【这个脚本要回答的问题】
01 脚本说 TorchDynamo "符号地执行字节码"。graph_lab.compile 就是这样做的：它自己解释 CPython 3.11 的字节码，
张量运算记进图，普通 Python 照常模拟；每张图带一组 guard，下次调用先查 guard；处理不了的地方切断图。

演示 1：一个小函数的字节码，和符号执行对每条指令做了什么。
演示 2：guard 从哪里来（每个 guard 记着源代码行）。
演示 3：换形状、换 dtype、换 Python 常量：命中缓存还是重新编译，原因是什么。
演示 4：依赖数据的 if：两张图 + 一次 graph break，正负两种输入都算对。
演示 5：self.counter += 1 这种副作用：每次调用都和 eager 一样发生。
演示 6：explain() 的报告；重新编译次数到上限后的回退。

【运行】python3 05_guards.py        （< 1 秒）
【依赖】numpy；graph_lab；../lecture01 的 console。
"""

import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

import graph_lab  # noqa: E402
from console import print_header, print_observations, print_table  # noqa: E402


def small(x, w, scale):
    h = x @ w
    return np.tanh(h) * scale


def demo1_bytecode():
    print_header("演示 1：字节码，以及符号执行对每条指令做了什么")
    rng = np.random.default_rng(0)
    cf = graph_lab.compile(small)
    cf(rng.standard_normal((4, 8)), rng.standard_normal((8, 8)), 0.5)
    seg = cf.cache[0][0]
    rows = [[off, name, arg, what] for off, name, arg, what in seg.steps]
    print_table(["偏移", "指令", "参数", "符号执行做了什么"], rows)
    recorded = sum(1 for r in rows if r[3].startswith("recorded"))
    print(f"\n{len(rows)} 条指令里，{recorded} 条往图里记了运算；图里共 {seg.graph.count()} 个运算节点。")
    print_observations([
        f"符号执行器一条一条地执行字节码：LOAD_FAST 把张量（图的输入）压栈，BINARY_OP @ 记下一个 matmul，"
        f"CALL np.tanh 通过 NumPy 的 __array_ufunc__ 协议记下 tanh——{len(rows)} 条指令里只有 {recorded} 条进了图。",
        "其余指令（LOAD_CONST、PRECALL、STORE_FAST……）只是在模拟 Python 的栈和局部变量，不产生节点。",
    ])


def demo2_guards():
    print_header("演示 2：guard 从哪里来")
    rng = np.random.default_rng(1)
    cf = graph_lab.compile(small)
    cf(rng.standard_normal((4, 8)), rng.standard_normal((8, 8)), 0.5)
    guards = cf.cache[0][0].guards.guards
    rows = [[i, g.kind, g.source.describe(), str(g.loc)] for i, g in enumerate(guards)]
    print_table(["#", "种类", "看的是什么", "源代码行"], rows)
    kinds = sorted({g.kind for g in guards})
    kinds_of = {g.source.describe(): g.kind for g in guards}
    print(f"\n共 {len(guards)} 个 guard，种类：{', '.join(kinds)}。")
    print_observations([
        f"张量参数 x、w 各有一个 array guard（类型、形状、dtype）；Python 数 scale 只有一个 {kinds_of['scale']} guard："
        f"它参与了张量运算，所以它的值作为图的一个输入传进去，而不是写死成常量。共 {len(guards)} 个 guard。",
        "每个 guard 记着让它产生的那一行代码，重新编译时的日志就能告诉你\"为什么\"。",
    ])


def demo3_recompiles():
    print_header("演示 3：换形状、dtype、常量：命中还是重新编译")
    rng = np.random.default_rng(2)
    cf = graph_lab.compile(small)
    calls = [("x[4,8] f64, scale=0.5", (4, 8), np.float64, 0.5),
             ("同样的输入再来一次", (4, 8), np.float64, 0.5),
             ("x[6,8]：换形状", (6, 8), np.float64, 0.5),
             ("x[6,8] f32：换 dtype", (6, 8), np.float32, 0.5),
             ("scale=2.0：换常量", (6, 8), np.float32, 2.0),
             ("回到第一次的输入", (4, 8), np.float64, 0.5)]
    rows, exact = [], True
    for label, shape, dtype, scale in calls:
        x = rng.standard_normal(shape).astype(dtype)
        w = rng.standard_normal((8, 8)).astype(dtype)
        before = cf.captures
        out = cf(x, w, scale)
        exact = exact and np.array_equal(out, small(x, w, scale)) and out.dtype == small(x, w, scale).dtype
        event = cf.last_events[0]
        reason = event.reasons[-1].split(" (guard from")[0] if event.reasons else "—"
        rows.append([label, "重新编译" if cf.captures > before else "命中缓存", reason])
    print_table(["调用", "结果", "原因（最近一个缓存条目没通过的 guard）"], rows)
    hits = sum(1 for r in rows if r[1] == "命中缓存")
    print(f"\n6 次调用：{cf.captures} 次编译、{hits} 次命中；结果和 eager 逐位相同：{'是' if exact else '否'}。")
    print_observations([
        f"缓存里每个条目都带着自己的 guard；新的调用按顺序试，第一个全部通过的条目就直接运行——"
        f"所以回到第一次的输入时命中了最早的条目。这 6 次调用一共编译了 {cf.captures} 次。",
        "重新编译的原因是人能读懂的话：哪个值、现在是多少、缓存的图是为多少编的、guard 来自哪一行。"
        f"换 scale 的值：{rows[4][1]}——scale 是图的输入，不是图里的常量。",
    ])


def branchy(x):
    s = x.sum()
    if s > 0:
        return x * 2.0
    return x * -1.0


def demo4_branch():
    print_header("演示 4：依赖数据的 if：两张图和一次 graph break")
    rng = np.random.default_rng(3)
    pos, neg = np.abs(rng.standard_normal((3, 4))), -np.abs(rng.standard_normal((3, 4)))
    cf = graph_lab.compile(branchy)
    rows = []
    for label, x in (("正数输入", pos), ("负数输入", neg), ("正数输入，第二次", pos)):
        before = cf.captures
        out = cf(x)
        graphs = [e.segment.graph.count() for e in cf.last_events if e.segment.graph.count()]
        rows.append([label, len(graphs), str(graphs), "重新编译" if cf.captures > before else "全部命中",
                     f"{np.abs(out - branchy(x)).max():.0e}"])
    print_table(["输入", "这次运行了几张图", "每张图的节点数", "缓存", "和 eager 的最大差"], rows)
    report = graph_lab.explain(branchy)(pos)
    print(f"\nexplain：{report.graph_count} 张图，{report.graph_break_count} 次 graph break，"
          f"原因：{report.breaks[0].reason}")
    print_observations([
        f"if s > 0 需要张量的值：编译器在这里切断图，先运行第一张图（sum、> 两个节点）拿到 s > 0 的值，"
        f"用 Python 决定走哪一支，再从分支的第一条指令开始抓第二张图。每次调用运行 {rows[0][1]} 张图。",
        "两个分支各自被抓成一张图、各自缓存：负数输入第一次来时只编译了那一支，之后正负输入都命中缓存，结果都和 eager 逐位相同。",
    ])


class Counter:
    def __init__(self, w):
        self.w = w
        self.counter = 0

    def __call__(self, x):
        self.counter += 1
        return np.tanh(x @ self.w) * self.counter


def demo5_side_effects():
    print_header("演示 5：self.counter += 1：副作用每次都发生")
    rng = np.random.default_rng(4)
    w = rng.standard_normal((4, 4))
    eager_model, compiled_model = Counter(w), Counter(w)
    step = graph_lab.compile(compiled_model.__call__.__func__)
    rows, same = [], True
    for i in range(4):
        x = rng.standard_normal((2, 4))
        a, b = eager_model(x), step(compiled_model, x)
        same = same and np.array_equal(a, b)
        rows.append([i + 1, eager_model.counter, compiled_model.counter, "相同" if np.array_equal(a, b) else "不同"])
    print_table(["第几次调用", "eager 的 counter", "compile 的 counter", "输出"], rows)
    print(f"\n4 次调用，编译 {step.captures} 次；counter 和输出每次都和 eager 一样：{'是' if same else '否'}。")
    print_observations([
        "STORE_ATTR 是图外的副作用：编译器在这里切断图，这条指令每次调用都作为普通 Python 执行，所以 counter 每次都加 1。",
        "counter 的新值之后又参与了张量运算：它不写死在图里（那样每次调用的值不同，每次都要重新编译，即\"重新编译风暴\"），"
        f"而是作为第二张图的输入传进去，所以 4 次调用只编译了 {step.captures} 次：副作用前后的两张图各一次。",
    ])


def demo6_explain_and_limit():
    print_header("演示 6：explain() 的报告；重新编译到上限以后")
    rng = np.random.default_rng(5)
    print(graph_lab.explain(branchy)(-np.abs(rng.standard_normal((2, 3)))))
    cf = graph_lab.compile(small, recompile_limit=3, dynamic=False)  # dynamic shapes off: one graph per size
    correct = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 9):
            x, w = rng.standard_normal((n, 4)), rng.standard_normal((4, 4))
            correct = correct and np.array_equal(cf(x, w, 0.5), small(x, w, 0.5))
    n_warn = sum(1 for c in caught if issubclass(c.category, graph_lab.RecompileLimitWarning))
    print(f"\n8 种 batch 大小、recompile_limit=3：编译 {cf.captures} 次，警告 {n_warn} 次，之后 eager 运行；结果都正确：{'是' if correct else '否'}。")
    print_observations([
        f"每种新的 batch 大小都让形状 guard 失败；重新编译 3 次以后到了上限，编译器发出 {n_warn} 次警告（附上最后的原因），"
        "此后这个函数直接 eager 运行——不会悄悄地一直编译下去，也不会算错。",
        "真正的解决办法是动态形状：把 batch 维当作符号（第 12 讲 03 脚本），一张图对所有 batch 大小都成立。",
    ])


if __name__ == "__main__":
    demo1_bytecode()
    demo2_guards()
    demo3_recompiles()
    demo4_branch()
    demo5_side_effects()
    demo6_explain_and_limit()
