"""
=============================================================================
CS349E · 第 12 讲 · 05_guards.py —— 字节码抓图：guard、重新编译与 graph break
=============================================================================

【这个脚本要回答的问题】
01 脚本说 TorchDynamo "符号地执行字节码"。graph_lab.compile 就是这样做的：它自己解释 CPython 的字节码（3.11、3.12、3.13 各有各的指令），
张量运算记进图，普通 Python 照常模拟；每张图带一组 guard，下次调用先查 guard；处理不了的地方切断图。

演示 1：一个小函数的字节码，和符号执行对每条指令做了什么。
演示 2：guard 从哪里来（每个 guard 记着源代码行）。
演示 3：换形状、换 dtype、换 Python 常量：命中缓存还是重新编译，原因是什么。
演示 4：依赖数据的 if：两张图 + 一次 graph break，正负两种输入都算对；改用 F.cond 则是一张图。
演示 5：self.counter += 1 这种副作用：每次调用都和 eager 一样发生。
演示 6：explain() 的报告；重新编译次数到上限后的回退。
演示 7：命中缓存的代价：guard、图和结果合成一个生成的函数。
演示 8：写进参数的数组：图里的 index_update、图结束时的写回，和别名 guard。

【运行】python3 05_guards.py        （< 1 秒）
【依赖】numpy；graph_lab；../lecture01 的 console。
"""

import os
import sys
import time
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
    # The instructions differ between Python versions (3.13 loads x and w with one LOAD_FAST_LOAD_FAST, 3.11 has
    # a PRECALL before each CALL): the text names the ones this interpreter ran.
    loads = next(r for r in rows if r[3].startswith("tensor"))
    matmul = next(r for r in rows if r[3] == "recorded matmul")
    others = list(dict.fromkeys(r[1] for r in rows if not r[3].startswith(("recorded", "tensor"))))
    print_observations([
        f"符号执行器一条一条地执行 Python {sys.version_info.major}.{sys.version_info.minor} 的字节码："
        f"{loads[1]} 把张量（图的输入）压栈，{matmul[1]} {matmul[2]} 记下一个 matmul，"
        f"CALL np.tanh 通过 NumPy 的 __array_ufunc__ 协议记下 tanh——{len(rows)} 条指令里只有 {recorded} 条进了图。",
        f"其余指令（{'、'.join(others)}）只是在模拟 Python 的栈和局部变量，不产生节点。",
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


def branchy_cond(x):
    return graph_lab.F.cond(x.sum() > 0, lambda h: h * 2.0, lambda h: h * -1.0, x)


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
    cond_report = graph_lab.explain(branchy_cond)(pos)
    cf_cond = graph_lab.compile(branchy_cond)
    cond_exact = all(np.array_equal(cf_cond(x), branchy(x)) for x in (pos, neg, pos))
    cond_ops = [str(n.op) for n in cond_report.graphs[0].nodes if n.regions]
    print(f"改用 F.cond 写：{cond_report.graph_count} 张图，{cond_report.graph_break_count} 次 graph break，"
          f"图里的控制流节点 {cond_ops}；编译 {cf_cond.captures} 次，正负输入都和 eager 逐位相同：{'是' if cond_exact else '否'}")
    print_observations([
        f"if s > 0 需要张量的值：编译器在这里切断图，先运行第一张图（sum、> 两个节点）拿到 s > 0 的值，"
        f"用 Python 决定走哪一支，再从分支的第一条指令开始抓第二张图。每次调用运行 {rows[0][1]} 张图。",
        "两个分支各自被抓成一张图、各自缓存：负数输入第一次来时只编译了那一支，之后正负输入都命中缓存，结果都和 eager 逐位相同。",
        f"F.cond 把两个分支作为函数交给编译器：它把两个 lambda 的字节码分别抓进一个 cond 节点的两个区域，"
        f"于是只有 {cond_report.graph_count} 张图、{cond_report.graph_break_count} 次 graph break，"
        f"走哪一支在图运行时决定（PyTorch 的 torch.cond 也是这个思路）。",
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


def gelu_mlp(x, w1, w2):
    h = x @ w1
    return (0.5 * h * (1.0 + np.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))) @ w2


def _per_call_us(fn, args, n=1000):
    start = time.perf_counter()
    for _ in range(n):
        fn(*args)
    return (time.perf_counter() - start) / n * 1e6


def demo7_cache_hit():
    print_header("演示 7：命中缓存要花多少：guard 和图合成一个生成的函数")
    rng = np.random.default_rng(6)
    args = (rng.standard_normal((4, 8)), rng.standard_normal((8, 16)), rng.standard_normal((16, 8)))
    fast = graph_lab.compile(gelu_mlp, backend="codegen")
    general = graph_lab.compile(gelu_mlp, backend="codegen")
    exact = all(np.array_equal(cf(*args), gelu_mlp(*args)) for cf in (fast, general))
    general._set_fast_path(None, "为了对比关掉")
    source = fast.fast_path_source.splitlines()
    guards = sum(1 for line in source if line.strip().startswith("if not ("))
    print("生成的快速路径（前 14 行）：")
    print("\n".join(source[:14]))
    times = {"eager": [], "fast": [], "general": []}
    for _ in range(3):  # 轮流计时，取最快的一轮
        times["eager"].append(_per_call_us(gelu_mlp, args))
        times["fast"].append(_per_call_us(fast, args))
        times["general"].append(_per_call_us(general, args))
    e, f, g = (min(times[k]) for k in ("eager", "fast", "general"))
    print_table(["调用方式", "每次调用（us）", "相对 eager"],
                [["eager NumPy", f"{e:.1f}", "1.00x"], ["compile：快速路径", f"{f:.1f}", f"{f / e:.2f}x"],
                 ["compile：通用路径", f"{g:.1f}", f"{g / e:.2f}x"]])
    print(f"\n快速路径里有 {guards} 个 guard 检查；三种方式结果逐位相同：{'是' if exact else '否'}。")
    print_observations([
        f"命中缓存时，编译后的函数只运行一个生成的 Python 函数：按顺序检查 {guards} 个 guard（每个值只取一次），"
        "然后直接调用图的代码、返回结果。TorchDynamo 也是把 guard 编成一个函数，放在编译好的代码前面。",
        f"通用路径要为每个 guard 调用一次函数、为图的输入和结果走一遍\"配方\"，每次 {g:.1f} us；"
        f"快速路径 {f:.1f} us，快 {g / f:.1f} 倍，"
        + ("比 eager 还快（图的代码把 Python 常数预先转成 0 维数组，每个运算都省下一点）。" if f < e
           else f"是 eager 的 {f / e:.2f}x。"),
    ])


def relax_into(u, f):
    u[1:-1] = 0.5 * (u[:-2] + u[2:]) + f[1:-1]   # 写进参数 u：调用方的数组
    return u.sum()


def demo8_mutation():
    print_header("演示 8：写进参数的数组：函数化、写回，和别名 guard")
    rng = np.random.default_rng(8)
    step = graph_lab.compile(relax_into, backend="interpret")
    rows, same = [], True
    for i in range(3):
        u, f = rng.standard_normal(6), rng.standard_normal(6)
        eu, cu = u.copy(), u.copy()
        view = cu[2:4]                                # 调用方手里的视图
        a, b = relax_into(eu, f), step(cu, f)
        ok = a == b and np.array_equal(eu, cu) and np.array_equal(view, eu[2:4])
        same = same and ok
        rows.append([i + 1, f"{a:.6f}", f"{b:.6f}", "相同" if ok else "不同"])
    print_table(["第几次调用", "eager 返回", "compile 返回", "u 和它的视图"], rows)
    segments = [e.segment for e in step.last_events]
    n_graphs, n_breaks = len(segments), sum(1 for sg in segments if sg.end == "break")
    seg = segments[0]
    ops = [str(n.op) for n in seg.graph.nodes if n.op not in ("input", "const")]
    print(f"\n图里的运算：{ops}；写回 {len(seg.writebacks)} 个数组（{seg.writebacks[0][0].describe()}）")
    print(seg.graph)
    guards = [g.describe() for g in seg.guards.guards if g.kind in ("writeable", "disjoint")]
    for g in guards:
        print("guard:", g)
    x = rng.standard_normal(6)
    ex, cx = x.copy(), x.copy()
    a, b = relax_into(ex, ex), step(cx, cx)      # f 就是 u：两个参数是同一个数组
    alias_ok = a == b and np.array_equal(ex, cx)
    print(f"\nstep(x, x)：编译 {step.captures} 次，重新编译原因：{step.recompile_log[-1].split(': ', 1)[1]}；"
          f"结果和 eager 逐位相同：{'是' if alias_ok else '否'}")
    print(f"3 次调用：{n_graphs} 张图、{n_breaks} 次 graph break；返回值、u 和视图都和 eager 逐位相同：{'是' if same else '否'}")
    print_observations([
        f"u[1:-1] = ... 没有切断图：它变成图里的 {ops.count('index_update')} 个 index_update（纯函数：返回一个新数组），"
        "图的最后一个输出就是 u 的新值；图跑完以后，编译器把它原地拷回调用方的 u（TorchDynamo 的 copy_ 尾声），"
        "所以调用方手里的视图也看到了新值。",
        f"写回要成立，u 必须可写、并且和别的输入不共享内存：这就是那 {len(guards)} 个 guard。"
        "step(x, x) 让 u 和 f 成为同一个数组，guard 失败，编译器重新编译——这一次它看到了别名，结果仍然和 eager 一样。",
    ])


if __name__ == "__main__":
    demo1_bytecode()
    demo2_guards()
    demo3_recompiles()
    demo4_branch()
    demo5_side_effects()
    demo6_explain_and_limit()
    demo7_cache_hit()
    demo8_mutation()
