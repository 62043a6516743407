"""
=============================================================================
CS349E · 第 12 讲 · 02_script.py —— 保留控制流：解析源码、控制流算子、控制流转数据流
=============================================================================

【这个脚本要回答的问题】
01 脚本里，追踪遇到 if x.sum() > 0 只有三条路：报错、悄悄特化、加 guard；LazyRunner 则在这里把图切成两段。
课程笔记 §1.2、§3.2、§3.4、§5.2 给出了另外几条路：像 TorchScript 那样解析源码，把 if / while 保留成带"块"的节点；
像 jax.lax.cond 那样把控制流写成显式的算子；或者把分支改写成数据流——两支都算，再按条件选。
这个脚本把笔记里的同一个模型依次交给每一种办法，看它们各自得到什么图、对不对、花多少时间。

演示 1：追踪遇到 if x.sum() > 0：mode="error" 报错。
演示 2：mode="specialize" 悄悄只留一支（换个符号就算错）；mode="guard" 留一支加一个 guard。
演示 3：LazyRunner：每次调用在 bool() 处切断，跑两张图。
演示 4：graph_lab.script：读源码、不运行函数，if 变成带 then / else 两个区域的 cond 节点。
演示 5：控制流转数据流：两支都算再用 where 选；代价是多算一支，风险是没走的那支会产生 inf / NaN。
演示 6：依赖数据的 while 循环：script 成 while_loop 节点；specialize 会把循环次数写死。
演示 7：并排比较（笔记 §3.4 那张表），每一格都是这次运行测出来的。

【运行】python3 02_script.py        （< 1 秒）
【依赖】numpy；graph_lab；../lecture01 的 console。
"""

import os
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

from graph_lab import (F, Interpreter, LazyRunner, TraceError, check_guards, run, script,  # noqa: E402
                       trace)
from graph_lab.backends.prepared import prepare  # noqa: E402
from graph_lab.passes.cond_to_select import cond_to_select  # noqa: E402
from console import print_header, print_observations, print_table  # noqa: E402

RNG = np.random.default_rng(0)
P = {"w1": RNG.standard_normal((64, 128)) / 12, "b1": RNG.standard_normal(64),
     "w2": RNG.standard_normal((64, 128)) / 12, "b2": RNG.standard_normal(64)}
SHAPES = {"x": (8, 128)}
POS = np.abs(RNG.standard_normal((8, 128)))
NEG = -np.abs(RNG.standard_normal((8, 128)))


def layer1(x, p):
    return F.linear(x, p["w1"], p["b1"])


def layer2(x, p):
    return F.linear(x, p["w2"], p["b2"])


def model(x, p):
    """笔记 §3.1 / §3.2 的 ModelWithControlFlow：分支取决于输入的值。"""
    if x.sum() > 0:
        return layer1(x, p)
    else:
        return layer2(x, p)


def model_explicit(x, p):
    """同一个模型，控制流写成显式算子（jax.lax.cond 的写法）。"""
    return F.cond(x.sum() > 0, layer1, layer2, x, p)


def right(out, x) -> bool:
    """和 eager 逐位相同。"""
    want = model(x, P)
    return out.dtype == want.dtype and np.array_equal(out, want)


def yes(flag: bool) -> str:
    return "是" if flag else "否"


def demo1_trace_error():
    print_header("演示 1：追踪遇到 if x.sum() > 0：mode=\"error\"")
    try:
        trace(model, SHAPES, P)
        message = "（没有报错）"
    except TraceError as e:
        message = str(e).split(". ")[0]
    print(message)
    print_observations([
        "追踪只记录张量运算：x.sum() > 0 是一个还没有值的张量，Python 的 if 却要一个 True / False。"
        "mode=\"error\" 在这里停下来，报出是哪个值、在哪一行。",
    ])


def demo2_specialize_and_guard():
    print_header("演示 2：specialize 只留一支；guard 留一支加一个 guard")
    spec = trace(model, SHAPES, P, mode="specialize", example={"x": POS})
    guard = trace(model, SHAPES, P, mode="guard", example={"x": POS})
    rows = []
    for name, g in (("specialize", spec), ("guard", guard)):
        params = sorted(n.attrs["name"] for n in g.param_nodes)
        for label, x in (("正", POS), ("负", NEG)):
            ok = check_guards(g, {"x": x})
            out = run(g, {"x": x})[0]
            rows.append([name, ", ".join(params), label, yes(ok), f"{np.abs(out - model(x, P)).max():.3g}"])
    print_table(["mode", "图里的参数", "输入", "check_guards", "和 eager 的最大差"], rows)
    print()
    wrong = rows[1][4]
    print_observations([
        "两种 mode 抓到的图都只有 layer1（参数只有 w1、b1）：另一支在图里根本不存在。",
        f"specialize 不留任何记录：负输入照样通过检查、照样运行，结果和 eager 差 {wrong}——这就是"
        f"笔记 §5.2 说的\"悄悄算错\"。guard 至少会在负输入时让 check_guards 返回否，提醒你重新抓图。",
    ])


def run_lazy(x):
    lr = LazyRunner()
    out = model(lr.tensor(x), {k: lr.tensor(v) for k, v in P.items()})
    return lr.materialize(out), lr.graphs


def demo3_lazy():
    print_header("演示 3：LazyRunner：在 bool() 处切断")
    rows = []
    for label, x in (("正", POS), ("负", NEG)):
        out, graphs = run_lazy(x)
        rows.append([label, len(graphs), str(graphs), yes(right(out, x))])
    print_table(["输入", "跑了几张图", "每张图的运算数", "和 eager 逐位相同"], rows)
    print()
    print_observations([
        f"if 需要 x.sum() > 0 的值：先跑第一张图（sum、gt，{rows[0][2]} 里的第一项）拿到它，Python 选一支，"
        f"再把那一支记成第二张图。每次调用都跑 {rows[0][1]} 张图，正负输入都对。",
        "代价是每次调用都要重新运行 Python、重新记录：图只是一次调用的一段，控制流仍然留在 Python 里。",
    ])


def demo4_script():
    print_header("演示 4：script：读源码，不运行函数")
    g = script(model, SHAPES, P)
    print(g)
    cond = [n for n in g.nodes if n.op == "cond"]
    rows = [[label, yes(right(run(g, {"x": x})[0], x))] for label, x in (("正", POS), ("负", NEG))]
    print()
    print_table(["输入", "和 eager 逐位相同"], rows)
    print()
    regions = cond[0].regions
    print_observations([
        f"script 用 inspect 拿到 model 的源码、用 ast 解析，一行也不运行：if 的条件是张量，于是整个 if 变成 "
        f"{len(cond)} 个 cond 节点，带 {len(regions)} 个区域（then / else，相当于 TorchScript 的 block0 / block1）。",
        "layer1、layer2 是普通 Python 函数：script 读它们的源码，内联进各自的区域。区域是封闭的："
        "它要用的 x 和参数都作为 cond 的操作数传进去（区域里的 input 节点）。",
        "一张图，正负输入都和 eager 逐位相同：跑哪一支是图在运行时决定的。",
    ])
    return g


def count_ops(g, x) -> tuple[int, int]:
    """一次调用实际执行的运算数（区域里的也算）和其中 linear 的个数。"""
    seen = []
    interp = Interpreter(g)
    interp.register_hook(lambda node, value: seen.append(node.op))
    interp.run({"x": x})
    ops = [op for op in seen if op not in ("input", "param", "const")]
    return len(ops), ops.count("linear")


def per_call_us(fn, repeat: int = 50, rounds: int = 5) -> float:
    """每次调用的时间：跑 rounds 轮、每轮 repeat 次，取最快的一轮（别的程序的干扰只会让时间变长）。"""
    fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e6


def safe_log(x):
    if x.min() > 0:
        y = np.log(x)
    else:
        y = x
    return y


def demo5_dataflow(scripted):
    print_header("演示 5：控制流转数据流：两支都算，用 where 选")
    dataflow = script(model, SHAPES, P)
    report = cond_to_select(dataflow)
    print("\n".join(report))
    print(dataflow)
    rows = []
    for name, g in (("cond（script）", scripted), ("where（数据流）", dataflow)):
        ops, linears = count_ops(g, POS)
        runner = prepare(g)
        rows.append([name, ops, linears, yes(right(runner({"x": POS})[0], POS) and right(runner({"x": NEG})[0], NEG)),
                     round(per_call_us(lambda: runner({"x": POS})), 1)])
    print()
    print_table(["版本", "每次调用执行的运算数", "其中 linear", "正负输入都对", "每次调用 μs"], rows)
    print()

    x = np.array([-1.0, 0.0, 2.0])
    hazard = []
    mask = float(x.min() > 0)
    with np.errstate(all="ignore"):
        arithmetic = mask * np.log(x) + (1 - mask) * x
    hazard.append(["笔记的 mask * a + (1 - mask) * b", str(arithmetic), yes(np.array_equal(arithmetic, safe_log(x))),
                   "—"])
    for name, guard in (("where，不加保护", False), ("where，加保护（默认）", True)):
        g = script(safe_log, {"x": (3,)})
        cond_to_select(g, guard=guard)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = run(g, {"x": x})[0]
        hazard.append([name, str(out), yes(np.array_equal(out, safe_log(x))), len(caught)])
    print_table(["safe_log(x)，x = [-1, 0, 2]", "结果", "和 eager 相同", "NumPy 警告数"], hazard)
    print()
    print_observations([
        f"数据流版本没有控制流了：两个 linear 都在图里，每次调用执行 {rows[1][1]} 个运算（cond 版本 {rows[0][1]} 个），"
        f"linear 从 {rows[0][2]} 次变成 {rows[1][2]} 次——这就是笔记 §1.2 说的代价：两个分支都会被执行。",
        f"风险在没走的那一支：它收到的是原程序绝不会给它的输入。笔记的 mask 写法里 0 * (-inf) = nan，结果被污染；"
        f"where 只复制选中的值，结果正确，但不加保护时 log(-1)、log(0) 仍然算了，NumPy 报了 {hazard[1][3]} 个警告"
        f"（在 np.errstate(all='raise') 下就是异常）。",
        f"cond_to_select 默认给 log、sqrt、除法这类运算的输入套一层 where(pred, x, 1)：没走的那支算的是 log(1)，"
        f"警告数 {hazard[2][3]}；走的那支拿到的还是 x 本身，结果逐位不变。会抛异常的分支（越界的下标、循环）它不转换。",
    ])


def halve(x):
    n = 0
    while np.abs(x).max() > 1.0:
        x = x * 0.5
        n = n + 1
    return x, n


def demo6_while():
    print_header("演示 6：依赖数据的 while 循环")
    g = script(halve, {"x": (4,)})
    print(g)
    two = np.array([3.0, -1.0, 0.5, 2.0])
    spec = trace(halve, {"x": (4,)}, mode="specialize", example={"x": two})
    rows = []
    for scale in (0.5, 3.0, 20.0):
        x = np.array([scale, -0.5, 0.25, 0.1])
        x_eager, n_eager = halve(x)
        x_script, n_script = run(g, {"x": x})
        x_spec, n_spec = run(spec, {"x": x})
        rows.append([scale, n_eager, int(n_script), yes(np.array_equal(x_script, x_eager)), int(n_spec),
                     yes(np.array_equal(x_spec, x_eager))])
    print()
    print_table(["x 的最大值", "eager 循环次数", "script 图里的次数", "script 对吗", "specialize 图里的次数",
                 "specialize 对吗"], rows)
    print()
    muls = sum(1 for n in spec.nodes if n.op == "mul")
    print_observations([
        f"script 把 while 变成一个 while_loop 节点：cond 区域算循环条件，body 区域算一次循环体；n 和 x 一起作为"
        f"\"携带值\"（carry）在迭代之间传递。循环几次由运行时的数据决定：这里是 {rows[0][1]}、{rows[1][1]}、"
        f"{rows[2][1]} 次（包括一次都不循环），都和 eager 相同。",
        f"specialize 用的示例输入循环了 2 次，于是图里写死了 {muls} 个 mul、n 是常数 "
        f"{rows[0][4]}：别的输入全都算错。",
        "n 从 Python 的 0 开始，在图里是 i64[] 标量：script 检查过，这个换法不会让循环里任何一个运算的 dtype 变掉。",
    ])


def captured(capture) -> tuple[object, int, float]:
    """运行一次抓图函数：返回结果、这期间 model（或 model_explicit）的函数体被执行了几次、耗时 ms。"""
    calls = [0]
    codes = {model.__code__, model_explicit.__code__}

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            calls[0] += 1
    sys.setprofile(profile)
    start = time.perf_counter()
    try:
        result = capture()
    except TraceError:
        result = None
    finally:
        elapsed = (time.perf_counter() - start) * 1e3
        sys.setprofile(None)
    return result, calls[0], elapsed


def script_then_dataflow():
    g = script(model, SHAPES, P)
    cond_to_select(g)
    return g


def demo7_side_by_side():
    print_header("演示 7：并排比较（笔记 §3.4），每一格都是测出来的")
    strategies = [
        ("追踪 mode=error", lambda: trace(model, SHAPES, P)),
        ("追踪 mode=specialize", lambda: trace(model, SHAPES, P, mode="specialize", example={"x": POS})),
        ("追踪 mode=guard", lambda: trace(model, SHAPES, P, mode="guard", example={"x": POS})),
        ("LazyRunner", lambda: "lazy"),
        ("显式算子 F.cond", lambda: trace(model_explicit, SHAPES, P)),
        ("解析源码 script", lambda: script(model, SHAPES, P)),
        ("script + 转数据流", script_then_dataflow),
    ]
    rows = []
    for name, capture in strategies:
        g, calls, ms = captured(capture)
        if g is None:
            rows.append([name, "抓图失败", "—", "—", calls, round(ms, 2), "—"])
            continue
        if g == "lazy":
            _, calls, _ = captured(lambda: run_lazy(POS))
            ok = right(run_lazy(POS)[0], POS) and right(run_lazy(NEG)[0], NEG)
            rows.append([name, 1, yes(ok), len(run_lazy(POS)[1]), calls, "—",
                         round(per_call_us(lambda: run_lazy(POS), 10), 1)])
            continue
        runner = prepare(g)
        params = {n.attrs["name"] for n in _all_nodes(g) if n.op in ("param", "input")}
        branches = int("p['w1']" in params) + int("p['w2']" in params)
        ok = right(runner({"x": POS})[0], POS) and right(runner({"x": NEG})[0], NEG) and \
            (not g.guards or check_guards(g, {"x": NEG}))
        rows.append([name, branches, yes(ok), 1, calls, round(ms, 2),
                     round(per_call_us(lambda: runner({"x": POS})), 1)])
    print_table(["策略", "图里有几支", "正负输入都对", "每次调用几张图", "抓图时函数体执行次数", "抓图 ms",
                 "每次调用 μs"], rows)
    print()
    kept = [r[0] for r in rows if r[1] == 2]
    print_observations([
        f"两支都在图里的只有：{'、'.join(kept)}。追踪只看见示例走的那一支（笔记表里\"控制流 ❌ 无法保留\"）；"
        "LazyRunner 每次调用只记录那次走的一支。",
        f"\"抓图时函数体执行次数\"一列就是笔记表里的\"副作用\"一行：追踪和 F.cond 都真的调用了一次函数"
        f"（函数里的副作用会发生），script 是 {rows[5][4]} 次——它只读源码。",
        "guard 那一行\"正负输入都对\"是否：负输入时 guard 不通过，图不能用，要重新抓图；LazyRunner 对，"
        "但每次调用都要跑 Python、跑两张图。",
    ])


def _all_nodes(g):
    for node in g.nodes:
        yield node
        for region in node.regions:
            yield from _all_nodes(region)


if __name__ == "__main__":
    demo1_trace_error()
    demo2_specialize_and_guard()
    demo3_lazy()
    scripted = demo4_script()
    demo5_dataflow(scripted)
    demo6_while()
    demo7_side_by_side()
