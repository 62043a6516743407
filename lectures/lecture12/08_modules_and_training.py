"""
=============================================================================
CS349E · 第 12 讲 · 08_modules_and_training.py —— 模块、FX 式抓图、Conv+BN 融合与训练图
=============================================================================

【这个脚本要回答的问题】
真实的模型写成 nn.Module：参数、缓冲区、子模块，一层套一层。课程笔记 §4 用 torch.fx 在模块上抓图：
叶子模块变成 call_module 节点，钩子在符号追踪时不触发，Conv + BatchNorm 可以在图上融合；§2.2 说静态图
的真正用处是训练：前向、损失、梯度、参数更新抓成一张图，然后跑上千次。

演示 1：symbolic_trace：call_module 行、FX 生成的 forward、图执行 = 立即执行。
演示 2：钩子：立即执行、符号追踪、GraphModule 调用、compile(model) 调用，各触发几次；self.counter 何时加一。
演示 3：Conv + BatchNorm 融合：eval 模式下融合、数值差多少；训练模式下拒绝并说明原因。
演示 4：训练图：前向 + 反向 + Adam 更新抓成一张图，节点数、损失曲线、每步耗时（立即执行 vs 抓图）。
演示 5：compile(model)：训练/推理模式和 ModuleDict 的 key 是守卫，参数每次调用重新读取。

【运行】python3 08_modules_and_training.py        （约 1–2 秒）
【依赖】numpy；graph_lab；../lecture01 的 console。
"""

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lecture01"))

from graph_lab import F, compile, explain, grad_graph, nn, optim, trace  # noqa: E402
from graph_lab.nn.graph_module import fx_rows  # noqa: E402
from console import print_header, print_observations, print_table  # noqa: E402


class ConvNet(nn.Module):
    """笔记 §4 的小卷积网络：features（Conv → BN → ReLU → MaxPool）+ classifier（Flatten → Linear）。"""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(8 * 4 * 4, 10))
        self.counter = 0

    def forward(self, x):
        self.counter += 1  # Python 副作用：只在追踪时发生
        return self.classifier(self.features(x))


def trained_model():
    nn.manual_seed(0)
    model = ConvNet()
    model(np.random.default_rng(1).standard_normal((16, 3, 8, 8)))  # 训练模式跑一次：running 统计量不再是初值
    model.counter = 0
    return model.eval()


def demo1_symbolic_trace():
    print_header("演示 1：symbolic_trace：叶子模块变成 call_module 节点")
    model = trained_model()
    gm = nn.symbolic_trace(model, {"x": (2, 3, 8, 8)})
    gm.graph.print_tabular()
    print()
    print(gm.code)
    x = np.random.default_rng(2).standard_normal((2, 3, 8, 8))
    same = np.array_equal(gm(x), model(x))
    kinds = [r[0] for r in fx_rows(gm.graph)]
    print(f"GraphModule vs 立即执行：逐位相同 = {same}；call_module 行 {kinds.count('call_module')} 个，"
          f"call_function 行 {kinds.count('call_function')} 个。")
    print_observations([
        f"Sequential 不是叶子，被追踪“穿过去”；{kinds.count('call_module')} 个内置层是叶子，每个一行 call_module，"
        f"target 是限定名（features.0、classifier.1）——FX 的 Conv+BN 融合就是靠 get_submodule(target) 找到模块的。",
        "gm.code 是 FX 会生成的 forward：getattr(self.features, '0')(x)。它只是给人读的；GraphModule 运行时由解释器逐个"
        "节点执行，call_module 节点调用对应的模块，参数每次调用时从模块里读。",
        f"图执行和立即执行逐位相同（{same}）：叶子模块的 forward 和立即执行调用的是同一批 numpy 运算。",
    ])


def demo2_hooks():
    print_header("演示 2：钩子在四种情况下各触发几次")
    model = trained_model()
    fired = {"n": 0}
    model.features[0].register_forward_hook(lambda m, args, out: fired.__setitem__("n", fired["n"] + 1))
    x = np.random.default_rng(3).standard_normal((2, 3, 8, 8))
    model(x)
    eager, counter_after_eager = fired["n"], model.counter
    gm = nn.symbolic_trace(model, {"x": (2, 3, 8, 8)})
    traced = fired["n"] - eager
    counter_after_trace = model.counter
    for _ in range(3):
        gm(x)
    calls = fired["n"] - eager - traced
    counter_after_gm = model.counter
    compiled = compile(model)
    for _ in range(3):
        compiled(x)
    in_compile = fired["n"] - eager - traced - calls
    print_table(["情况", "钩子触发次数", "model.counter"], [
        ["立即执行 model(x) 一次", str(eager), str(counter_after_eager)],
        ["symbolic_trace 一次", str(traced), str(counter_after_trace)],
        ["GraphModule 调用三次", str(calls), str(counter_after_gm)],
        ["compile(model) 调用三次", str(in_compile), str(model.counter)],
    ])
    print_observations([
        f"符号追踪时钩子触发 {traced} 次：追踪器拦下了每一次模块调用，叶子模块只记成一个节点，不执行 __call__ 的钩子"
        f"——这正是笔记 §4 说的“forward hook 在 symbolic_trace 时不触发”。",
        f"GraphModule 调用三次，钩子触发 {calls} 次：call_module 节点真的调用了那个模块，钩子照常工作。",
        f"self.counter += 1 是 Python 副作用：追踪时执行了一次（变成 {counter_after_trace}），之后三次 GraphModule 调用"
        f"都不会再加（仍是 {counter_after_gm}）——图里只有张量运算。",
        f"compile(model) 调用三次，钩子触发 {in_compile} 次、counter 加到 {model.counter}：和 torch.compile 一样，"
        f"字节码抓图把钩子和 self.counter += 1 当作副作用，每次调用都按立即执行的顺序在图之间真正执行。",
    ])


class TwoHeads(nn.Module):
    """笔记 §5 的 ModuleDict：用 Python 字符串 key 选一个头；中间有 Dropout（训练 / 推理行为不同）。"""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 6)
        self.drop = nn.Dropout(0.5)
        self.heads = nn.ModuleDict({"cls": nn.Linear(6, 3), "reg": nn.Linear(6, 1)})

    def forward(self, x, task):
        return self.heads[task](self.drop(F.relu(self.body(x))))


def demo5_compile_guards():
    print_header("演示 5：compile(model) 的守卫：训练/推理模式、ModuleDict 的 key、参数每次重读")
    nn.manual_seed(0)
    model = TwoHeads().eval()
    compiled = compile(model)
    x = np.random.default_rng(4).standard_normal((4, 6))
    rows, seen = [], 0
    for what, task in [("eval, task='cls'", "cls"), ("eval, task='cls'（再来一次）", "cls"),
                       ("eval, task='reg'", "reg"), ("model.train(), task='cls'", "cls"),
                       ("model.eval(), task='cls'", "cls")]:
        if what.startswith("model.train"):
            model.train()
        elif what.startswith("model.eval"):
            model.eval()
        model.drop.generator = np.random.default_rng(7)
        got = compiled(x, task)
        model.drop.generator = np.random.default_rng(7)
        same = np.array_equal(got, model(x, task))
        new = compiled.__func__.captures - seen
        seen = compiled.__func__.captures
        rows.append([what, str(same), "是" if new else "否（命中缓存）"])
    print_table(["调用", "与立即执行逐位相同", "本次新抓了图"], rows)
    model.eval()
    report = explain(model)(x, "cls")
    facts = [line.strip().split("  (from")[0] for g in report.guards for line in g.splitlines()]  # (结构守卫含多行)
    shown = [f for f in facts if f.endswith(("training == False", "== 'cls'"))]
    print("explain() 里和模式、key 有关的守卫：")
    for g in shown:
        print("    " + g)
    params = sum("_parameters']" in n.attrs["name"] for g in report.graphs for n in g.input_nodes)
    model.body.weight[...] *= 2.0
    fresh = np.array_equal(compiled(x, "cls"), model(x, "cls"))
    print(f"图 {report.graph_count} 张，输入里有 {params} 个参数；把 body.weight 原地乘 2 之后再调用：与立即执行逐位相同 = "
          f"{fresh}，新抓图 {compiled.__func__.captures - seen} 次。")
    print_observations([
        f"守卫里有 training == False 和 task == 'cls'：换 key、切 train()/eval() 都让守卫失败，重新抓一张图"
        f"（上表“是”的行），切回来就命中缓存；Dropout 在训练模式下真的随机、在推理模式下是恒等，和立即执行一样。",
        f"参数不是常量：{params} 个参数都是图的输入，每次调用从模块里重新读取，所以原地改权重之后结果立刻跟着变"
        f"（{fresh}），也不需要重新抓图。",
    ])


def demo3_fusion():
    print_header("演示 3：Conv + BatchNorm 融合（eval 模式）与训练模式下的拒绝")
    model = trained_model()
    gm = nn.symbolic_trace(model, {"x": (2, 3, 8, 8)})
    x = np.random.default_rng(4).standard_normal((2, 3, 8, 8))
    before = gm(x)
    rows_before = sum(1 for r in fx_rows(gm.graph) if r[0] == "call_module")
    report = nn.fuse_conv_bn(gm)
    rows_after = sum(1 for r in fx_rows(gm.graph) if r[0] == "call_module")
    diff = float(np.abs(gm(x) - before).max())
    train_report = nn.fuse_conv_bn(nn.symbolic_trace(ConvNet(), {"x": (2, 3, 8, 8)}))
    print_table(["", "结果"], [
        ["eval 模式", report[0]],
        ["call_module 行数", f"{rows_before} → {rows_after}"],
        ["融合前后最大差", f"{diff:.1e}"],
        ["训练模式", train_report[0][:60] + "…"],
    ])
    print_observations([
        f"eval 模式下 BN 的均值、方差是常数，可以折进卷积的权重和偏置：w' = w·γ/√(σ²+ε)，b' = (b−μ)·γ/√(σ²+ε)+β。"
        f"融合后少了一个 call_module（{rows_before} → {rows_after}），输出最大差 {diff:.1e}：只是浮点运算换了顺序。",
        "训练模式下 BN 用的是每个 batch 自己的统计量，还要更新 running 统计量——没有任何固定的权重能代替它，"
        "所以 fuse_conv_bn 拒绝融合并说明原因，而不是悄悄算错。",
        "融合只改 GraphModule 自己的模块树：用户的 model 里 BatchNorm2d 还在。",
    ])


def demo4_training_graph():
    print_header("演示 4：训练图：前向 + 反向 + Adam 更新抓成一张图")
    nn.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.GELU(), nn.Linear(16, 1))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 4))
    y = np.tanh(x @ rng.standard_normal((4, 1)))

    def loss_fn(params, x, y):
        out, _ = nn.functional_call(model, params, x)
        return F.mean((out - y) ** 2)

    opt = optim.Adam(model, lr=0.05)
    step = optim.training_step(loss_fn, opt)
    params = {k: np.asarray(v).copy() for k, v in model.named_parameters()}
    captured = optim.CapturedStep(step, (params, opt.init(params)), x, y)
    losses = [captured(x, y) for _ in range(200)]
    loss_graph = trace(lambda x, y, p: loss_fn(p, x, y), {"x": x.shape, "y": y.shape}, params)
    forward = loss_graph.count()
    with_backward = grad_graph(loss_graph, [n.attrs["name"] for n in loss_graph.param_nodes]).count()
    total = captured.graph.count()
    state = (params, opt.init(params))
    start = time.perf_counter()
    for _ in range(10):
        _, state = step(state, x, y)
    eager_ms = (time.perf_counter() - start) / 10 * 1e3
    start = time.perf_counter()
    for _ in range(10):
        captured(x, y)
    captured_ms = (time.perf_counter() - start) / 10 * 1e3
    print_table(["步数", "损失"], [[str(i), f"{losses[i]:.5f}"] for i in (0, 10, 50, 100, 199)])
    print()
    print_table(["", "数值"], [
        ["前向 + 损失的运算节点", str(forward)],
        ["加上反向（grad_graph）", str(with_backward)],
        ["再加上 Adam 更新：整个训练步", str(total)],
        ["每步耗时：立即执行", f"{eager_ms:.2f} ms"],
        ["每步耗时：抓成图", f"{captured_ms:.2f} ms"],
    ])
    print_observations([
        f"损失从 {losses[0]:.3f} 降到 {losses[-1]:.5f}（200 步）：整个训练步——前向、损失、反向、Adam 更新——"
        f"是一张 {total} 个运算节点的图，每一步只是用新的参数值把它再跑一遍。",
        f"前向只有 {forward} 个节点，反向让它变成 {with_backward} 个（反向比前向大），Adam 又加了 "
        f"{total - with_backward} 个：优化器的更新也只是普通的逐元素运算。",
        "反向传播是在 IR 上做的：每个算子的 VJP 规则用同一张算子表里的算子写成，所以梯度也是普通节点，"
        "pass 和后端照样能处理。",
        f"立即执行的一步要重新追踪、重新建反向图（{eager_ms:.2f} ms），抓好的图直接运行（{captured_ms:.2f} ms）："
        f"这就是笔记 §2.2 说的“抓一次，跑一千次”。",
    ])


if __name__ == "__main__":
    demo1_symbolic_trace()
    demo2_hooks()
    demo3_fusion()
    demo4_training_graph()
    demo5_compile_guards()
