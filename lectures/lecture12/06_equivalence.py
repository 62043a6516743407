"""
=============================================================================
CS349E · 第 12 讲 · 06_equivalence.py —— 抓到的图和原来的代码等价吗：结构、计算、数值、语义
=============================================================================

【这个脚本要回答的问题】
讲义第 6 节列了四种"等价"：结构等价（节点和边相同，图同构）、计算等价（相同输入相同输出，随机测试）、
渐近（数值）等价（输出在浮点误差内相同）、语义等价（连副作用也相同）。每一种都能用工具回答，并且量出来：
graph_lab.equivalence 里的 isomorphic / structural_hash、counterexample、check（一张容差表 + float64 裁判）。

演示 1：结构等价：两种写法、节点顺序不同的图是否同构；同构比"算得一样"更严格。
演示 2：计算等价：给 if s > 0 的特化 trace 找一个反例（和为负的输入）；加了 guard 的图和 compile 找不到。
演示 3：数值等价：float32 里换一种加法顺序（(W1 @ W2) @ x 和 W1 @ (W2 @ x)、顺序求和和两两求和），
        和 float64 参考值比，谁更准；容差表怎么判，float64 裁判怎么判。
演示 4：语义等价：print、list.append、属性赋值——trace 丢掉，compile 每次都照做。
演示 5：随机操作：trace 默认拒绝随机抽样，特化时把随机数冻成常量并警告；compile 每次都真正抽样，生成器前进得和 eager 一样。
演示 6：差分测试：随机生成程序，用每一种"抓图方式 × pass 流水线 × 后端"跑，和 eager 比（Csmith / NNSmith 的做法）。

【运行】python3 06_equivalence.py        （几秒）
【依赖】numpy；graph_lab；../lecture01 的 console。
"""

import os
import sys
import warnings
from contextlib import redirect_stdout
from io import StringIO

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

import graph_lab  # noqa: E402
from graph_lab.equivalence import (canonical_form, check, compare, counterexample, isomorphic,  # noqa: E402
                                   structural_hash)
from graph_lab.equivalence.inputs import EDGE_CASES  # noqa: E402
from graph_lab.testing.differential import differential  # noqa: E402
from graph_lab.testing.generator import generate  # noqa: E402
from graph_lab.testing.ways import BACKENDS, FRONTENDS, PIPELINES, WAYS  # noqa: E402
from console import print_header, print_observations, print_table  # noqa: E402


def a(x, y):
    return np.tanh(x) + np.exp(y)


def b(x, y):
    e = np.exp(y)  # 先记下 exp：图里的节点顺序变了
    return np.tanh(x) + e


def c(x, y):
    return np.exp(y) + np.tanh(x)  # 加法的两个操作数对调


def d(p, q):
    return np.tanh(p) + np.exp(q)  # 只是参数改了名


def e(x, y):
    return np.tanh(x) + np.exp(y) * 1.0  # 多一个 *1.0 节点


def demo1_structural():
    print_header("演示 1：结构等价：两张图同构吗")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(4), rng.standard_normal(4)
    base = graph_lab.trace(a, {"x": (4,), "y": (4,)})
    rows, same_structure, same_result = [], 0, 0
    for label, fn in (("a：tanh(x) + exp(y)", a), ("b：先算 exp(y) 再相加", b), ("c：exp(y) + tanh(x)", c),
                      ("d：参数改名 p、q", d), ("e：tanh(x) + exp(y) * 1.0", e)):
        names = fn.__code__.co_varnames[:2]
        g = graph_lab.trace(fn, {names[0]: (4,), names[1]: (4,)})
        order = " ".join(str(n.op) for n in g.nodes if n.op not in ("input", "const"))
        iso = isomorphic(base, g)
        equal = np.array_equal(graph_lab.run(g, dict(zip(names, (x, y))))[0], a(x, y))
        same_structure += iso
        same_result += equal
        rows.append([label, order, structural_hash(g), "是" if iso else "否", "是" if equal else "否"])
    print_table(["写法", "图里的运算（按记录顺序）", "结构哈希", "和 a 同构", "结果和 a 逐位相同"], rows)
    print("\na 的规范形式（从输出出发、按操作数顺序深度优先编号，和节点记录的先后无关）：")
    print(canonical_form(base))
    print(f"\n5 种写法里 {same_structure} 种和 a 同构，{same_result} 种算出的结果和 a 逐位相同。")
    print_observations([
        "结构等价就是图同构：同样的节点、同样的边。graph_lab 把图从输出出发按操作数顺序深度优先编号，得到一个"
        "**规范形式**，同构的图规范形式相同、结构哈希相同。b 的节点记录顺序和 a 不同，d 的参数名不同，它们仍和 a 同构。",
        f"结构等价比计算等价严格：c 只是对调了加法的两个操作数，e 多了一个 *1.0，它们和 a 都不同构，却算出逐位相同的结果——"
        f"{same_result} 种写法结果相同，只有 {same_structure} 种同构。所以编译器比较两张图时，同构可以证明等价，"
        "不同构却什么也证明不了。",
    ])


def branchy(x):
    s = x.sum(axis=-1).sum(axis=-1)
    if s > 0:  # 依赖数据的值
        return x * 2.0
    return x * -1.0


def demo2_computational():
    print_header("演示 2：计算等价：为特化的 trace 找一个反例")
    pos = np.abs(np.random.default_rng(2).standard_normal((3, 4)))
    specialized = graph_lab.trace(branchy, {"x": (3, 4)}, mode="specialize", example={"x": pos})
    guarded = graph_lab.trace(branchy, {"x": (3, 4)}, mode="guard", example={"x": pos})
    found = counterexample(branchy, specialized)
    guarded_found = counterexample(branchy, guarded, tries=200)
    guarded_report = check(branchy, guarded, n=200)
    compiled_report = check(branchy, graph_lab.compile(branchy), {"x": (3, 4)}, n=200)
    x = found.inputs["x"]
    rows = [
        ["trace，mode=\"specialize\"（用正数例子）", f"找到：输入 '{found.label}'",
         f"和 {x.sum():.3f}，eager 给出 x·(-1)，图给出 x·2"],
        ["trace，mode=\"guard\"", "找到" if guarded_found else "没找到",
         f"{guarded_report.trials} 个输入算得一样，{guarded_report.rejected} 个被 guard 拒绝（要重新追踪）"],
        ["graph_lab.compile", "找到" if not compiled_report else "没找到",
         f"{compiled_report.trials} 个输入全部一样（两条分支各抓一张图）"],
    ]
    print_table(["抓图方式", "反例", "说明"], rows)
    print(f"\n反例的第一个差别：{found.mismatch.detail}")
    print(f"第 {EDGE_CASES.index(found.label) + 1} 个输入 {found.label!r} 就是反例：counterexample 先试 0、负数、"
          f"很大的数、argmax 的并列，再试随机数。")
    print_observations([
        "计算等价只能靠测试：在很多输入上比较原函数和图的输出。counterexample 专找让特化的 trace 出错的输入——"
        f"用正数追踪、图里只剩 x·2 这一支，第 {EDGE_CASES.index(found.label) + 1} 个输入（全是负数，和为 {x.sum():.2f}）"
        "就让它算错了，而且没有任何警告。",
        f"加了 guard 的图不会被这样骗：和为负的输入过不了 guard（{guarded_report.rejected} 个被拒绝），"
        f"过得了 guard 的 {guarded_report.trials} 个都算得一样；compile 在 if 处切断图，每个输入都走对的分支。",
    ])


def fold_weights(w1, w2, x):
    return w1 @ (w2 @ x)  # 原来的写法：先 W2 @ x


def folded(w1, w2, x):
    return (w1 @ w2) @ x  # 常数折叠后：先算 W1 @ W2（讲义 6.2 的例子）


def sequential_sum(x):
    return np.cumsum(x)[-1]  # 从左到右一个一个加


def pairwise_sum(x):
    return np.sum(x)  # 两两相加（NumPy 的做法，也是并行归约的做法）


def ulps(a, b) -> float:
    return float(np.max(np.abs(a.astype(np.float64) - b) / np.spacing(np.abs(a).astype(a.dtype)).astype(np.float64)))


def demo3_numeric():
    print_header("演示 3：数值等价：float32 里换一种加法顺序")
    rng = np.random.default_rng(3)
    w1, w2 = rng.standard_normal((64, 64)).astype(np.float32), rng.standard_normal((64, 64)).astype(np.float32)
    x = rng.standard_normal(64).astype(np.float32)
    v = (np.random.default_rng(0).standard_normal(100_000) * 100).astype(np.float32)
    cases = [("W1 @ (W2 @ x) → (W1 @ W2) @ x", fold_weights(w1, w2, x), folded(w1, w2, x),
              fold_weights(*(t.astype(np.float64) for t in (w1, w2, x)))),
             ("10 万个数：顺序求和 → 两两求和", sequential_sum(v), pairwise_sum(v), np.sum(v.astype(np.float64))),
             ("同上，但在 float16 里累加（错的）", sequential_sum(v), np.float32(np.sum(v.astype(np.float16))),
              np.sum(v.astype(np.float64)))]
    rows = []
    for label, eager, other, ref64 in cases:
        eager, other = np.asarray(eager), np.asarray(other)
        err_e = float(np.sqrt(np.mean((eager.astype(np.float64) - ref64) ** 2)))
        err_o = float(np.sqrt(np.mean((other.astype(np.float64) - ref64) ** 2)))
        table_ok = compare(eager, other) is None
        judge_ok = compare(eager, other, ref64=ref64) is None
        rows.append([label, "是" if np.array_equal(eager, other) else "否", f"{ulps(eager, other):.0f}",
                     f"{err_e:.2e}", f"{err_o:.2e}", "通过" if table_ok else "不通过", "通过" if judge_ok else "不通过"])
    print_table(["float32 计算（eager → 换了顺序）", "逐位相同", "最大差（ulp）", "eager 离 float64",
                 "换序后离 float64", "容差表", "float64 裁判"], rows)
    report = check(sequential_sum, pairwise_sum, {"v": ((100_000,), "float32")}, n=5)
    print(f"\ncheck(顺序求和, 两两求和)：{'等价' if report else '不等价'}，{report.trials} 个输入，"
          f"最大相对误差 {report.max_rel_error:.1e}。")
    print_observations([
        "浮点加法不满足结合律：换一种加法顺序，结果就可能差几个、几十个 ulp。融合算子、常数折叠、并行归约都会换顺序，"
        "所以编译后的图和 eager 通常**不是**逐位相同的——这时要问的是数值等价：误差是不是和 eager 自己的误差一样小。",
        "graph_lab 的容差表只有一张：整数和布尔精确相等；float64 rtol = atol = 1e-7；float32 rtol 1.3e-6、atol 1e-5。"
        "求和、矩阵乘、融合算子超出这张表时，再像 PyTorch 的精度检查那样请 float64 当裁判："
        "换序后的结果离 float64 的均方根误差不超过 eager 自己误差的 2 倍（加 atol/10）就算通过。",
        f"10 万个数的两两求和比顺序求和更接近 float64（{rows[1][4]} 对 {rows[1][3]}），容差表判它不通过，"
        "裁判判它通过；在 float16 里累加的那一行两关都过不了——裁判并不是一味放宽。",
    ])


class Stats:
    def __init__(self):
        self.calls = 0


log = []
stats = Stats()


def step(x, w):
    h = np.tanh(x @ w)
    stats.calls += 1                       # 属性赋值
    log.append(round(float(h.sum()), 4))   # 往列表里加东西
    print(f"    [step] 第 {stats.calls} 次调用，h.sum() = {log[-1]}")  # 打印
    return h * 2.0


def demo4_semantic():
    print_header("演示 4：语义等价：print、append、属性赋值")
    rng = np.random.default_rng(4)
    w = rng.standard_normal((4, 4))
    xs = [rng.standard_normal((2, 4)) for _ in range(3)]
    expected = [np.tanh(x @ w) * 2.0 for x in xs]
    rows = []
    for label in ("eager", "trace（specialize）", "graph_lab.compile"):
        log.clear()
        stats.calls = 0
        with redirect_stdout(StringIO()) as out:
            if label == "eager":
                run = step
            elif label == "graph_lab.compile":
                run = graph_lab.compile(step)
            else:
                g = graph_lab.trace(step, {"x": (2, 4), "w": (4, 4)}, mode="specialize",
                                    example={"x": xs[0], "w": w})
                out.seek(0)
                out.truncate()  # what tracing printed is not a call's printing
                run = lambda x, w: graph_lab.run(g, {"x": x, "w": w})[0]  # noqa: E731
            results = [run(x, w) for x in xs]
        same = all(np.array_equal(r, want) for r, want in zip(results, expected))
        rows.append([label, len(out.getvalue().splitlines()), len(log), stats.calls, "是" if same else "否"])
    log.clear()
    stats.calls = 0
    with redirect_stdout(StringIO()):
        traced = graph_lab.trace(step, {"x": (2, 4), "w": (4, 4)}, mode="specialize",
                                 example={"x": xs[0], "w": w})
    lost = check(step, traced, n=5)
    kept = check(step, graph_lab.compile(step), {"x": (2, 4), "w": (4, 4)}, n=5)
    print_table(["方式", "3 次调用打印了几行", "log 里几条", "stats.calls", "输出正确"], rows)
    print(f"\ncheck(step, trace 的图)：{'等价' if lost else '不等价'}——{lost.difference.mismatch.path}："
          f"eager 打印了一行，图什么也没打印。")
    print(f"check(step, compile(step))：{'等价' if kept else '不等价'}，{kept.trials} 个输入，"
          f"打印、log 和 stats 都一样。")
    print_observations([
        "语义等价连副作用一起比：check 在同一个状态下分别运行原函数和抓到的图，比较输出、打印出来的文字、"
        "函数读写的全局变量和闭包（这里是 log 和 stats）以及被原地改写的参数。",
        f"trace 只在追踪时把函数体跑了一遍：之后 3 次调用一行也没打印（表里是 {rows[1][1]}），log 和 stats 停在"
        f"追踪时留下的 {rows[1][2]}——输出对了，语义却不一样。compile 在 print、append、属性赋值处切断图，把这几条指令当普通 Python 每次都执行："
        f"3 次调用打印 {rows[2][1]} 行，和 eager 完全一样。",
    ])


rng = np.random.default_rng(5)


def noisy(x):
    return x + rng.standard_normal(x.shape)  # 随机操作


def demo5_random():
    print_header("演示 5：随机操作：抽样也是副作用")
    x = np.zeros(3)
    rows = []
    try:
        graph_lab.trace(noisy, {"x": (3,)})  # 默认 mode="error"
        refused = "没有拒绝"
    except graph_lab.TraceError as e:
        refused = f"TraceError：{str(e).split(', so')[0]}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graph = graph_lab.trace(noisy, {"x": (3,)}, mode="specialize", example={"x": x})
    frozen = sum(issubclass(w.category, graph_lab.FrozenRandomWarning) for w in caught)
    print(f"trace（默认 mode='error'）：{refused}")
    print(f"trace（mode='specialize'）：照样追踪，发出 FrozenRandomWarning {frozen} 次\n")
    compiled = graph_lab.compile(noisy)
    for label, run in (("eager", noisy), ("trace", lambda x: graph_lab.run(graph, {"x": x})[0]),
                       ("graph_lab.compile", compiled)):
        before = rng.bit_generator.state["state"]["state"]
        outputs = [run(x) for _ in range(3)]
        moved = rng.bit_generator.state["state"]["state"] != before
        distinct = len({o.tobytes() for o in outputs})
        rows.append([label, distinct, "是" if moved else "否"])
    traced_report = check(noisy, graph, n=10)
    compiled_report = check(noisy, compiled, {"x": (3,)}, n=10)
    rows[1].append("不等价" if not traced_report else "等价")
    rows[2].append("等价" if compiled_report else "不等价")
    rows[0].append("—")
    print_table(["方式", "3 次调用得到几种不同的输出", "随机数生成器前进了", "check 的结论"], rows)
    print(f"\ntrace 的图里，噪声是一个常量：{traced_report.difference.mismatch.detail[:70]}…")
    print_observations([
        "随机操作让\"相同输入相同输出\"本身不成立：eager 每次调用都得到新的噪声。等价要重新定义：同样的随机数"
        "生成器状态下得到同样的结果，并且生成器前进得一样——check 把生成器的状态当作函数的状态保存、恢复和比较。",
        f"默认的 mode='error' 下，trace 发现追踪期间随机数生成器前进了，直接拒绝；mode='specialize' 照样追踪，"
        f"但发出 {frozen} 次警告（FrozenRandomWarning）。"
        f"trace 在追踪时抽了一次样，把那组数冻成了图里的常量：3 次调用只有 {rows[1][1]} 种输出，生成器也不再前进。"
        f"compile 把 rng.standard_normal 当成副作用，在那里切断图、真正调用它：{rows[2][1]} 种输出，和 eager 逐位相同。",
    ])


PROGRAMS = 4  # (each runs 60 ways; python3 dev.py fuzz runs ten thousand)


def demo6_differential():
    print_header("演示 6：差分测试：随机程序 × 每一种抓图方式")
    tally: dict[str, list[int]] = {}  # frontend -> [runs, calls compared, refused, mismatches, crashes]
    sizes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(PROGRAMS):
            program = generate(seed)
            sizes.append((len(program.source()), program))
            for o in differential(program, WAYS).outcomes:
                counts = tally.setdefault(o.way.split("/")[0], [0, 0, 0, 0, 0])
                counts[0] += 1
                counts[1] += 3 if o.status == "ok" else 0
                counts[2] += o.status == "refused"
                counts[3] += o.status == "mismatch"
                counts[4] += o.status == "crash"
    rows = [[frontend, *counts] for frontend, counts in tally.items()]
    print_table(["前端", "程序 × 流水线 × 后端", "比较的调用次数", "拒绝（有文档的错误）", "不一致", "崩溃"], rows)
    total, refused = sum(r[1] for r in rows), sum(r[3] for r in rows)
    print(f"\n{PROGRAMS} 个随机程序，{len(WAYS)} 种方式（{len(FRONTENDS)} 个前端 × {len(PIPELINES)} 种 pass 流水线 × "
          f"{len(BACKENDS)} 个后端），共 {total} 次运行；拒绝 {refused} 次，不一致 {sum(r[4] for r in rows)} 次，"
          f"崩溃 {sum(r[5] for r in rows)} 次。最短的一个程序：")
    print(min(sizes, key=lambda t: t[0])[1].source())
    script_refused = tally.get("script", [0, 0, 0])[2]
    print_observations([
        "Csmith（C 编译器）和 NNSmith（深度学习编译器）用同一个办法找到了几百个悄悄算错的 bug：随机生成合法的程序，"
        "用不同的编译方式运行，和参考实现比较。这里的参考实现是 eager NumPy，每个程序用 3 组输入（随机、随机、正负零）。",
        f"script 拒绝了 {script_refused} 次：它读源代码、不运行函数，所以不接受 float(张量) 这种要马上知道数值的写法，"
        "而是报一个指明那一行的 ScriptError——拒绝是有文档的行为，悄悄算错才是 bug。",
        "生成器覆盖算子表里的每一个算子，值域保持合法（log 的参数先取绝对值再加 0.5，除数远离 0），还会写出 Python 的"
        "if/for/while 和依赖数据的 if。出错的程序会被自动缩小成一个几行的可独立运行的脚本；python3 dev.py fuzz 跑一万个程序。",
    ])


if __name__ == "__main__":
    demo1_structural()
    demo2_computational()
    demo3_numeric()
    demo4_semantic()
    demo5_random()
    demo6_differential()
