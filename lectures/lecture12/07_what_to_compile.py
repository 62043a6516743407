"""
=============================================================================
CS349E · 第 12 讲 · 07_what_to_compile.py —— 哪些子图值得编译：量出来，而不是猜
=============================================================================

【这个脚本要回答的问题】
笔记第 7 节有一张"编译收益"表：小模型收益低、大模型和计算密集型收益高、内存密集型收益中等、动态控制流多
的收益低。这些判断从哪里来？graph_lab 有三个后端——参考解释器 interpret、生成直线 NumPy 代码的 codegen、
把逐元素运算链编成 C 内核的 fused——还有一个成本模型，它先量这台机器，再逐个子图决定要不要编成内核。
这个脚本把它们放在同一台机器上量一遍。

演示 1：同一张逐元素图、五种规模、三个后端：融合从多大开始划算。
演示 2：成本模型量了什么、怎么判、理由是什么；为什么单独一个 tanh 不值得融合。
演示 3：每个 pass 对节点数的影响（exact、fast_math、inference 三条流水线）。
演示 4：分区：一个 MLP 块里哪些节点进了内核、哪些留在 codegen，各自的原因。
演示 5：回到笔记第 7 节的表：几种场景的实测收益，和编译多少次调用才能回本。

【运行】python3 07_what_to_compile.py        （约 10 秒：要计时，第一次还要用 gcc 编译内核）
【依赖】numpy；graph_lab；C 编译器（gcc，没有时 fused 退回 codegen，脚本照样跑）；../lecture01 的 console。
"""

import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

import graph_lab  # noqa: E402
from graph_lab import F, compile_graph, run_pipeline, trace  # noqa: E402
from graph_lab.backends import cost  # noqa: E402
from graph_lab.backends.toolchain import find_toolchain  # noqa: E402
from console import print_header, print_observations, print_table  # noqa: E402

SIZES = [2 ** 6, 2 ** 10, 2 ** 14, 2 ** 17, 2 ** 20]
ROUNDS = 3


def chain(x):
    """内存密集型的典型：五个逐元素运算（gelu 和 sigmoid 各自又是好几个 NumPy 调用）。"""
    return F.gelu(x) * F.sigmoid(x) + x * x


def timed(variants, number):
    """轮流计时（A B C A B C ……），每个取 ROUNDS 轮里最快的一轮：共享的机器忙起来时，最快的一轮最接近真实代价。"""
    for fn in variants.values():
        fn()
    times = {name: [] for name in variants}
    for _ in range(ROUNDS):
        for name, fn in variants.items():
            start = time.perf_counter()
            for _ in range(number):
                fn()
            times[name].append((time.perf_counter() - start) / number)
    return {name: min(ts) for name, ts in times.items()}


def fmt(seconds):
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def speedup(base, t):
    return f"{base / t:.2f}x"


def _faster_or_slower(ratio: float) -> str:
    """``比 codegen 快 2.9 倍`` for a time ratio codegen / fused above 1, else ``反而比 codegen 慢`` (the words follow
    the measurement, whatever else the machine is doing)."""
    return f"比 codegen 快 {ratio:.1f} 倍" if ratio > 1 else f"这次反而比 codegen 慢（codegen 用时是它的 {ratio:.2f} 倍）"


def demo1_sizes():
    print_header("演示 1：同一张图、五种规模、三个后端")
    rng = np.random.default_rng(0)
    rows, measured = [], []
    for n in SIZES:
        x = rng.standard_normal(n).astype(np.float32)
        g = trace(chain, {"x": ((n,), "float32")})
        backends = {name: compile_graph(g, name) for name in ("interpret", "codegen", "fused")}
        t = timed({"eager": lambda: chain(x), **{k: (lambda c=c: c(x)) for k, c in backends.items()}},
                  number=max(1, 2 ** 16 // n))
        kernels = len(backends["fused"].kernels)
        rows.append([n, fmt(t["eager"]), speedup(t["eager"], t["interpret"]), speedup(t["eager"], t["codegen"]),
                     speedup(t["eager"], t["fused"]), f"{kernels} 个" if kernels else "没有（等于 codegen）"])
        measured.append((n, t, kernels))
    print_table(["元素数", "eager 用时", "interpret", "codegen", "fused", "fused 的 C 内核"], rows)
    print("\n（后三列是相对 eager 的加速比，>1 表示更快；float32，3 轮轮流计时，取最快的一轮）")
    small_n, small_t, _ = measured[0]
    big_n, big_t, _ = measured[-1]
    first_kernel = next((n for n, _, k in measured if k), None)
    first_pays = next((n for n, t, k in measured if k and t["fused"] * 1.2 < t["codegen"]), None)
    print(f"\n成本模型从 {first_kernel} 个元素起用内核；用了内核的规模里，实测 fused 比 codegen 快 20% 以上是从 "
          f"{first_pays} 个元素起。")
    print_observations([
        f"{small_n} 个元素时三个后端都在和 Python 的调用开销较劲：interpret 是 eager 的 "
        f"{small_t['eager'] / small_t['interpret']:.2f}x（每个节点都要查表分派），codegen 是 "
        f"{small_t['eager'] / small_t['codegen']:.2f}x（直线代码，调用的正是 eager 调用的 NumPy 函数）。",
        f"{big_n} 个元素时 fused 是 eager 的 {big_t['eager'] / big_t['fused']:.1f}x，codegen 是 "
        f"{big_t['eager'] / big_t['codegen']:.2f}x，fused {_faster_or_slower(big_t['codegen'] / big_t['fused'])}："
        "NumPy 每个运算都把整个数组读一遍、写一遍，内核只读 x 一次、写结果一次，"
        "中间值都留在寄存器里——这就是\"算子融合减少内存访问\"。",
        "小数组上成本模型不用内核：一次 ctypes 调用（几微秒）比 NumPy 把整张图算完还贵，所以小图永远不会比 codegen 慢。",
    ])


def demo2_cost_model():
    print_header("演示 2：成本模型：量了什么，怎么判，为什么")
    if find_toolchain() is None:
        print("这台机器上找不到 C 编译器（gcc 或 cc）：fused 后端退回 codegen，成本模型没有内核可量，这个演示跳过。")
        return
    cal = _calibration()
    print("这台机器上量到的数（每项取几次测量里最快的一次）：")
    print_table(["量", "值"], cal.rows())
    rows = []
    cases = [(f"chain, {n} 个元素", chain, n) for n in SIZES]
    cases += [("单独一个 tanh, 4194304 个元素", F.tanh, 2 ** 22), ("单独一个 gelu, 4194304 个元素", F.gelu, 2 ** 22)]
    for label, fn, n in cases:
        g = trace(fn, {"x": ((n,), "float32")})
        group = compile_graph(g, "codegen").graph  # (the same graph the fused backend partitions)
        from graph_lab.backends.partition import partition
        (grp,) = partition(group).groups
        d = cost.decide(grp.cost(group), cal)
        rows.append([label, fmt(d.numpy_seconds), "—" if math.isnan(d.kernel_seconds) else fmt(d.kernel_seconds),
                     d.threads if d.fuse else "—", "融合" if d.fuse else "不融合", d.reason])
    print()
    print_table(["子图", "预测 NumPy", "预测内核", "线程", "决定", "理由"], rows)
    tanh_row, gelu_row = rows[-2], rows[-1]
    print(f"\n决定规则：元素数 >= {cost.MIN_ELEMENTS}，且预测内核用时 <= 预测 NumPy 用时的 {cost.MARGIN:.0%}。")
    print_observations([
        f"成本模型不是一张意见表：它量了 NumPy 每次调用的开销、每字节的代价、每个 libm 函数每个元素的代价，"
        f"也量了内核那一侧，再按子图的元素数、运算数、数组个数算出两边的用时。两个线程是否划算也是量出来的"
        f"（这次量到 {cal.thread_speedup:.2f}x；紧跟在矩阵乘法后面是 {cal.thread_speedup_after_blas:.2f}x，"
        f"因为 OpenBLAS 的线程算完以后还会空转一阵，和内核的第二个线程抢 CPU），不是假设的。",
        f"单独一个 tanh：{tanh_row[4]}。NumPy 的 float32 tanh 每个元素 {cal.numpy_libm['tanh'] * 1e9:.2f} ns"
        f"（NumPy 在支持 AVX-512 的 CPU 上用 SVML），内核里 libmvec 的 AVX2 tanhf 要 "
        f"{cal.kernel_libm['tanh'] * 1e9:.2f} ns；gelu 在 tanh 之外还有八个运算、八次整数组的读写可以省，"
        f"所以单独一个 gelu：{gelu_row[4]}。",
    ])


def _calibration():
    from graph_lab.backends import fused
    from graph_lab.backends.options import FusedOptions
    return fused._engine(FusedOptions()).calibration()


def messy(x, p):
    a = (x @ p["w"]).T.T            # 转置两次等于没转置
    b = np.tanh(a) * 1.0            # 乘以 1
    c = np.tanh(a) + b              # 同一个 tanh 算了两次
    return c / 4.0 + F.zeros_like(c)  # 除以常数；zeros_like 的值只看形状，内存布局却跟着 c


def conv_net(x, p):
    h = F.relu(F.batch_norm(F.conv2d(x, p["c1"], padding=1), p["m1"], p["v1"], p["g1"], p["b1"]))
    h = F.relu(F.batch_norm(F.conv2d(F.max_pool2d(h, 2), p["c2"], padding=1), p["m2"], p["v2"], p["g2"], p["b2"]))
    return F.avg_pool2d(h, 2)


def conv_params():
    rng = np.random.default_rng(3)
    p = {"c1": rng.standard_normal((8, 3, 3, 3)) / 5, "c2": rng.standard_normal((8, 8, 3, 3)) / 8}
    for i in (1, 2):
        p.update({f"m{i}": rng.standard_normal(8) * 0.1, f"v{i}": rng.uniform(0.5, 2, 8),
                  f"g{i}": rng.uniform(0.5, 1.5, 8), f"b{i}": rng.standard_normal(8) * 0.1})
    return p


def demo3_passes():
    print_header("演示 3：每个 pass 对节点数的影响")
    rng = np.random.default_rng(4)
    w = rng.standard_normal((8, 8))
    cases = [("messy", trace(messy, {"x": (4, 8)}, {"w": w}), "exact"),
             ("messy", trace(messy, {"x": (4, 8)}, {"w": w}), "fast_math"),
             ("conv_net", trace(conv_net, {"x": (2, 3, 16, 16)}, conv_params()), "inference")]
    rows, totals, kept_like = [], [], {}
    for name, g, pipeline in cases:
        optimized, reports = run_pipeline(g, pipeline)
        kept_like[(name, pipeline)] = sum(1 for n in optimized.nodes if n.op == "zeros_like")
        for r in reports:
            example = r.changes[0].split(" [")[0] if r.changes else "—"
            rows.append([f"{name} / {pipeline}", r.name, r.ops_before, r.ops_after, len(r.changes), example[:60]])
        totals.append((name, pipeline, g.count(), optimized.count()))
    print_table(["图 / 流水线", "pass", "之前", "之后", "改动", "第一处改动"], rows)
    print()
    for name, pipeline, before, after in totals:
        print(f"{name} 经 {pipeline} 流水线：{before} 个运算 -> {after} 个。")
    messy_exact, messy_fast, conv = totals
    print_observations([
        f"exact 流水线只做逐位不变的改写：两次转置合成一次再消掉、乘 1 去掉、重复的 tanh 合并（CSE），"
        f"messy 从 {messy_exact[2]} 个运算变成 {messy_exact[3]} 个，结果和原图逐位相同。",
        f"zeros_like 没有被折成常数（优化后的 messy 里还有 {kept_like[('messy', 'exact')]} 个）：它的结果沿用输入的"
        f"内存布局，而 [4, 8] 的中间值是行优先还是列优先要到运行时才知道；折成行优先的常数，后面的求和就可能换个"
        f"顺序、差在最后几位（模糊测试找到过这种情况）。只有一种布局可能时（最多一个轴长于 1）它才折叠。",
        f"fast_math 还允许\"实数上成立、浮点上不逐位成立\"的改写（x / 4.0 -> x * 0.25 这类），"
        f"所以要显式打开：messy 变成 {messy_fast[3]} 个运算，误差在文档写明的容差之内。",
        f"inference 流水线先把参数冻结成常数，再把 batch norm 折进它前面的卷积、把新权重算一次存起来："
        f"conv_net 从 {conv[2]} 个运算变成 {conv[3]} 个——两个 batch_norm 都没了。",
    ])


def mlp_block(x, p):
    h = F.gelu(x @ p["w1"] + p["b1"])
    return F.layer_norm(h @ p["w2"] + p["b2"] + x)


def mlp_params(d, hidden, rng):
    return {"w1": (rng.standard_normal((d, hidden)) / math.sqrt(d)).astype(np.float32),
            "b1": np.zeros(hidden, np.float32),
            "w2": (rng.standard_normal((hidden, d)) / math.sqrt(hidden)).astype(np.float32),
            "b2": np.zeros(d, np.float32)}


def demo4_partition():
    print_header("演示 4：分区：哪些节点进了内核，哪些留在 codegen")
    rng = np.random.default_rng(5)
    g = trace(mlp_block, {"x": ((256, 512), "float32")}, mlp_params(512, 2048, rng))
    compiled = compile_graph(g, "fused")
    print(compiled.partition.text())
    kernels = compiled.kernels
    print(f"\n{g.count()} 个运算里，{sum(len(k.nodes) for k in kernels)} 个进了 {len(kernels)} 个内核。")
    (row_group,) = [grp for grp in compiled.partition.groups if grp.row is not None]
    before = "、".join(str(n.op) for n in row_group.nodes[:-1])
    print_observations([
        "matmul 留在 codegen：矩阵乘法已经交给了 BLAS，内核生成器没有它的表达式——每一行都写着原因。",
        "layer_norm 不是逐元素运算：要先有整行的均值和方差才能写出任何一个元素，所以它是一个\"行内核\""
        "（row kernel），结束一个组：每行趁还在缓存里走几遍（求和、平方和、归一化），求和按 NumPy 的成对求和"
        "顺序，结果和 NumPy 逐位相同；NumPy 则每个调用都把整个数组过一遍。"
        + (f"算它输入的 {before} 也在这个组里：内核先把它们的结果写进输出行，再在行内原地归一化。" if before else "")
        + ("这里成本模型认为值得，它进了内核。" if row_group in kernels else "这里它没有进内核，原因写在组的那一行。"),
        "加偏置、gelu 这些逐元素运算被分到同一组：偏置是 [C] 的行向量，内核按\"行 × 行内\"两层循环读它；"
        "这一组值不值得编成内核，由演示 2 的成本模型决定，理由也写在组的那一行。",
    ])


def branchy(x):
    for _ in range(8):
        if float(x.sum()) > 0:       # 依赖数据的分支：每一圈都是一次 graph break
            x = x * 0.5 - 0.1
        else:
            x = x * 0.5 + 0.1
    return x


def demo5_scenarios():
    print_header("演示 5：笔记第 7 节的表，实测")
    rng = np.random.default_rng(6)
    rows = []

    def scenario(label, verdict, fn, args, make):
        start = time.perf_counter()
        compiled = make()
        compile_seconds = time.perf_counter() - start
        t = timed({"eager": lambda: fn(*args), "compiled": compiled}, number=max(1, int(1e-3 / _one_call(fn, args))))
        gain = t["eager"] - t["compiled"]
        calls = f"{math.ceil(compile_seconds / gain)}" if gain > 0 else "永远不回本"
        rows.append([label, verdict, fmt(compile_seconds), fmt(t["eager"]), fmt(t["compiled"]),
                     f"{t['eager'] / t['compiled']:.2f}x", calls])
        return t["eager"] / t["compiled"]

    tiny_p = mlp_params(8, 16, rng)
    tiny_x = rng.standard_normal((4, 8)).astype(np.float32)
    small = scenario("小模型：MLP 块 [4, 8]", "低", mlp_block, (tiny_x, tiny_p),
                     lambda: _bound(compile_graph(trace(mlp_block, {"x": ((4, 8), "float32")}, tiny_p), "fused"),
                                    tiny_x))
    big_p = mlp_params(256, 1024, rng)
    big_x = rng.standard_normal((128, 256)).astype(np.float32)
    dense = scenario("计算密集：MLP 块 [128, 256]", "高", mlp_block, (big_x, big_p),
                     lambda: _bound(compile_graph(trace(mlp_block, {"x": ((128, 256), "float32")}, big_p), "fused"),
                                    big_x))
    wide_x = rng.standard_normal(2 ** 20).astype(np.float32)
    memory = scenario("内存密集：逐元素链 1M", "中", chain, (wide_x,),
                      lambda: _bound(compile_graph(trace(chain, {"x": ((2 ** 20,), "float32")}), "fused"), wide_x))
    branch_x = rng.standard_normal((4, 4))
    dynamic = scenario("动态控制流多：8 次 graph break", "低", branchy, (branch_x,),
                       lambda: _compiled_call(graph_lab.compile(branchy, backend="codegen"), branch_x))
    chose = _default_way(branchy, branch_x)
    print_table(["场景", "笔记的判断", "编译用时", "eager 每次", "编译后每次", "加速", "多少次调用回本"], rows)
    print(f"\n加速比：小模型 {small:.2f}x，计算密集 {dense:.2f}x，内存密集 {memory:.2f}x，动态控制流 {dynamic:.2f}x。")
    print(f"默认的 compile(branchy) 命中缓存时跑的是：{chose}")
    best = max([("小模型", small), ("计算密集", dense), ("内存密集", memory), ("动态控制流", dynamic)],
               key=lambda item: item[1])[0]
    print_observations([
        f"小模型：编译后是 eager 的 {small:.2f}x——省下的只有 Python 解释的开销，编译本身要几毫秒，"
        "要调用很多次才回本（见最后一列），和笔记说的\"编译开销 > 执行收益\"一致。",
        f"计算密集：{dense:.2f}x。时间主要花在矩阵乘法上，NumPy 已经把它交给了优化过的 BLAS；"
        "编译器能省的只是周围的逐元素运算。笔记说\"矩阵乘法可大量优化\"——那要靠自己生成矩阵乘法内核，这里没有做。",
        f"内存密集：{memory:.2f}x。融合省掉了中间数组的读写。这次收益最大的一行是「{best}」；笔记把内存密集型"
        "标成\"中\"，而在 NumPy 这样一次一个运算的框架上，它往往是最值得编译的子图。",
        f"动态控制流：{dynamic:.2f}x。每次 float(x.sum()) 都切断一次图，编译后的函数要在每一段之间检查 guard、"
        f"回到 Python，{'比直接 eager 还慢' if dynamic < 1 else '省下的很少'}——和笔记的\"图捕获困难，收益不确定\"一致"
        "（这一行指定了 backend=\"codegen\"，总是跑图）。默认的 compile() 在前几次命中缓存时实测两种做法——跑图，"
        f"或直接跑原函数——留下更快的那个：这次它留下了「{chose}」。"
        "IO 密集型这里没法量：瓶颈不在计算。",
    ])


def _default_way(fn, x) -> str:
    """What graph_lab.compile(fn)'s cache hits settle on (way_choice.py): the graphs or the original function."""
    compiled = graph_lab.compile(fn)
    for _ in range(40):
        compiled(x)
        if not compiled.ways.measuring:
            break
    return "原函数" if compiled.ways.way == "function" else "图"


def _one_call(fn, args):
    start = time.perf_counter()
    fn(*args)
    return max(time.perf_counter() - start, 1e-6)


def _bound(compiled, x):
    compiled(x)
    return lambda: compiled(x)


def _compiled_call(compiled, x):
    compiled(x)
    return lambda: compiled(x)


if __name__ == "__main__":
    demo1_sizes()
    demo2_cost_model()
    demo3_passes()
    demo4_partition()
    demo5_scenarios()
