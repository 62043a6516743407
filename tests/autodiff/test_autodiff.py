"""Every derivative rule against central finite differences of the NumPy reference, in float64, on the OpInfo
samples (tests/support/opinfo.py); grad / value_and_grad / grad_graph on functions, graphs and modules; refusals."""

from __future__ import annotations

import inspect
import zlib

import numpy as np
import pytest

import graph_lab as gl
from graph_lab import F, nn, run, trace
from graph_lab.autodiff import NoDerivativeError
from graph_lab.frontends import pytree
from graph_lab.ops import opdef
from tests.support.opinfo import SAMPLES, Sample

f64 = np.dtype(np.float64)
c128 = np.dtype(np.complex128)
DOUBLE = (f64, c128)  # the dtypes differentiated; a complex z's gradient is dL/dRe z + i dL/dIm z (PyTorch's)
REFUSED_OPS = {"while_loop"}  # its number of steps is only known by running it
# No gradient flows through these, so they have no rule:
NO_GRADIENT = {
    # bool results (comparisons, logic, NaN tests)
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not", "any", "all",
    "isnan", "isinf", "isfinite",
    # integer results: positions, and the bitwise ops, which take integers only
    "argmax", "argmin", "argsort", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift",
    "right_shift",
    # constructors from numbers alone (no operand a gradient could reach)
    "arange", "linspace", "eye", "tri",
}
EPS = 1e-6

# Samples placed on purpose where the function is not differentiable, so finite differences there measure a
# jump or a kink, not a derivative:
AT_A_KINK = {
    "mod-mixed-f32-f64": "x mod y with a tiny y jumps every |y|, so differences straddle jumps",
    "std-F-0d": "the std of one element is 0 for every value; its derivative (x - mean) / std is 0/0 (NaN, as in "
                "PyTorch)",
    "std-F-0d-keepdims": "the std of one element (see std-F-0d)",
    "std-F-size1": "the std of one element (see std-F-0d)",
}
REFUSED = {  # samples whose op is refused with NoDerivativeError, and why
    "einsum-(ellipsis)ij,(ellipsis)jk=(ellipsis)ik": "'...' in einsum has no rule",
    "einsum-(ellipsis)i=(ellipsis)": "'...' in einsum has no rule",
    "einsum-ii=i": "a diagonal (repeated index in one operand) has no rule",
    "index_update-scatter-tensor-ids": "computed index arrays: which repeated write wins is not defined",
    "index_update-scatter-add-duplicate-ids": "repeated positions: which write wins is not defined",
    # library functions without a rule, refused naming the function:
    **{f"library_call-linalg.{name}": f"numpy.linalg.{name.split('-')[0]} has no rule"
       for name in ("qr", "qr-attribute-R", "qr-complete", "svd", "svd-reduced", "svd-values", "pinv")},
}


def _names(sample: Sample) -> list[str]:
    names = [p.name for p in inspect.signature(sample.fn).parameters.values()
             if p.kind == p.POSITIONAL_OR_KEYWORD][:len(sample.inputs)]
    return names if len(names) == len(sample.inputs) else [f"x{i}" for i in range(len(sample.inputs))]


def _leaves(result) -> list:
    return [leaf for _, leaf in pytree.flatten(result)[0]]


def _differentiable(sample: Sample) -> bool:
    if not any(x.dtype in DOUBLE for x in sample.inputs):
        return False
    with np.errstate(all="ignore"):
        outs = [np.asarray(o) for o in _leaves(sample.ref(*[x.copy() for x in sample.inputs]))]
    return any(o.dtype in DOUBLE and o.size and np.all(np.isfinite(o)) for o in outs) and \
        all(np.all(np.isfinite(x)) for x in sample.inputs if x.dtype.kind in "fc")


CASES = [s for s in SAMPLES if _differentiable(s)]


def _weights(sample: Sample) -> list:
    """A fixed random weight for each float64 or complex128 output: the loss is sum(out * weight) (for a complex
    output, sum(out.real * weight.real + out.imag * weight.imag)), so every output element gets its own
    cotangent."""
    rng = np.random.default_rng(zlib.crc32(sample.id.encode()))  # (not hash(): it changes per process)
    outs = [np.asarray(o) for o in _leaves(sample.ref(*[x.copy() for x in sample.inputs]))]
    return [rng.standard_normal(o.shape) + (1j * rng.standard_normal(o.shape) if o.dtype == c128 else 0)
            if o.dtype in DOUBLE else None for o in outs]


def _weighted(out, w, real, imag, total):
    if w is None:
        return total
    if np.iscomplexobj(w):
        return total + _total(real(out) * w.real) + _total(imag(out) * w.imag)
    return total + _total(out * w)


def _total(x):
    return F.sum(x) if not isinstance(x, np.ndarray) else float(np.sum(x))


def _numeric_gradient(ref_loss, inputs: list, i: int) -> np.ndarray:
    """Central differences of ``ref_loss`` by each element of ``inputs[i]`` (by its real and imaginary parts for
    a complex input)."""
    x = inputs[i]
    numeric = np.zeros_like(x)
    for direction in ((1.0, 1j) if x.dtype == c128 else (1.0,)):
        for index in np.ndindex(x.shape):
            arrays = [a.copy() for a in inputs]
            arrays[i][index] += EPS * direction
            up = ref_loss(arrays)
            arrays[i][index] -= 2 * EPS * direction
            numeric[index] += direction * (up - ref_loss(arrays)) / (2 * EPS)
    return numeric


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("sample", CASES, ids=[s.id for s in CASES])
def test_rule_matches_central_differences(sample: Sample):
    if sample.id in AT_A_KINK:
        pytest.skip(AT_A_KINK[sample.id])
    names = _names(sample)
    weights = _weights(sample)

    def loss(*args):
        total = 0.0
        for out, w in zip(_leaves(sample.fn(*args)), weights):
            total = _weighted(out, w, F.real, F.imag, total)
        return total

    def ref_loss(arrays):
        total = 0.0
        for out, w in zip(_leaves(sample.ref(*[a.copy() for a in arrays])), weights):
            total = _weighted(np.asarray(out), w, np.real, np.imag, total)
        return total

    shapes = {n: (x.shape, x.dtype) for n, x in zip(names, sample.inputs)}
    wrt = [n for n, x in zip(names, sample.inputs) if x.dtype in DOUBLE]
    graph = trace(loss, shapes)
    try:
        joint = gl.grad_graph(graph, wrt)
    except NoDerivativeError as e:
        assert sample.op in REFUSED_OPS or sample.id in REFUSED, f"{sample.op} refused: {e}"
        assert str(sample.op) in str(e)
        if sample.op == "library_call":
            assert REFUSED[sample.id].split()[0] in str(e)  # the function is named
        return
    assert sample.id not in REFUSED, f"{sample.id} is listed as refused but has a gradient now"
    assert opdef(sample.op).vjp is not None or sample.op in NO_GRADIENT or sample.op == "call_module"
    _, grads = pytree.unflatten(joint.out_tree, run(joint, dict(zip(names, sample.inputs))))
    for i, (name, x) in enumerate(zip(names, sample.inputs)):
        if x.dtype in DOUBLE:
            np.testing.assert_allclose(grads[name], _numeric_gradient(ref_loss, sample.inputs, i), rtol=1e-4,
                                       atol=1e-5, err_msg=f"d loss / d {name} of {sample.id}")


def test_every_differentiable_op_has_a_rule():
    from graph_lab.ops import REGISTRY, SOURCE_OPS
    no_rule = sorted(str(op) for op, d in REGISTRY.items() if d.vjp is None and op not in SOURCE_OPS)
    assert set(no_rule) == NO_GRADIENT | {"call_module"}


def test_grad_and_value_and_grad_on_nested_arguments():
    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((3, 2)), "b": rng.standard_normal(2)}
    x = rng.standard_normal((5, 3))

    def loss(p, x):
        return F.mean(F.tanh(x @ p["w"] + p["b"]) ** 2)

    value, grads = gl.value_and_grad(loss)(params, x)
    assert value == loss(params, x)  # the same NumPy calls in the same order
    h = np.tanh(x @ params["w"] + params["b"])
    dh = 2 * h / h.size * (1 - h * h)
    np.testing.assert_allclose(grads["w"], x.T @ dh, rtol=1e-12)
    np.testing.assert_allclose(grads["b"], dh.sum(axis=0), rtol=1e-12)
    dx = gl.grad(loss, argnums=1)(params, x)
    np.testing.assert_allclose(dx, dh @ params["w"].T, rtol=1e-12)


def test_python_control_flow_on_values_follows_each_call():
    def f(x):
        return (x * x).sum() if float(x.sum()) > 0 else (x * 3.0).sum()
    np.testing.assert_array_equal(gl.grad(f)(np.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(gl.grad(f)(-np.ones(2)), [3.0, 3.0])


def test_grad_graph_is_a_graph_passes_and_backends_take():
    from graph_lab import compile_graph, parse, run_pipeline

    def loss(w, x):
        return F.sum(F.relu(x @ w) * 2.0)

    g = gl.grad_graph(trace(loss, {"w": (3, 2), "x": (4, 3)}), ["w"])
    text = str(g)
    assert str(parse(text)) == text
    w, x = np.random.default_rng(1).standard_normal((3, 2)), np.random.default_rng(2).standard_normal((4, 3))
    want = run(g, {"w": w, "x": x})
    optimized, _ = run_pipeline(g, "exact")
    for got in (run(optimized, {"w": w, "x": x}), compile_graph(g)(w=w, x=x)):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(want[1], x.T @ ((x @ w > 0) * 2.0))


def test_grad_inside_trace_records_the_backward_into_the_capture():
    def step(w, x):
        return w - 0.1 * gl.grad(lambda w_, x_: F.sum((x_ @ w_) ** 2))(w, x)

    g = trace(step, {"w": (3, 2), "x": (4, 3)})
    w, x = np.random.default_rng(1).standard_normal((3, 2)), np.random.default_rng(2).standard_normal((4, 3))
    np.testing.assert_array_equal(run(g, {"w": w, "x": x})[0], step(w, x))
    np.testing.assert_allclose(run(g, {"w": w, "x": x})[0], w - 0.1 * 2 * x.T @ (x @ w), rtol=1e-12)


def test_module_parameters_through_functional_call():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    x = np.random.default_rng(3).standard_normal((6, 3))
    params = {k: np.asarray(v) for k, v in model.named_parameters()}

    def loss(p, x):
        out, _ = nn.functional_call(model, p, x)
        return F.mean(out * out)

    grads = gl.grad(loss)(params, x)
    assert sorted(grads) == sorted(params)
    h = np.maximum(x @ params["0.weight"].T + params["0.bias"], 0)
    out = h @ params["2.weight"].T + params["2.bias"]
    d_out = 2 * out / out.size
    np.testing.assert_allclose(grads["2.weight"], d_out.T @ h, rtol=1e-12)
    np.testing.assert_allclose(grads["2.bias"], d_out.sum(axis=0), rtol=1e-12)


def test_batch_norm_in_training_mode_against_differences():
    bn = nn.BatchNorm2d(2)
    x = np.random.default_rng(5).standard_normal((3, 2, 2, 2))
    weight = np.random.default_rng(6).standard_normal(x.shape)

    def loss(x):
        out, writes = nn.functional_call(bn, {}, x)
        assert sorted(writes) == ["num_batches_tracked", "running_mean", "running_var"]
        return F.sum(out * weight)

    def ref(x):
        m, v = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
        return float(np.sum((x - m) / np.sqrt(v + 1e-5) * weight))

    g = gl.grad(loss)(x)
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = EPS
        numeric[i] = (ref(x + d) - ref(x - d)) / (2 * EPS)
    np.testing.assert_allclose(g, numeric, rtol=1e-4, atol=1e-6)


def test_conv_pool_rules_with_stride_padding_dilation_against_differences():
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((1, 2, 7, 6)), rng.standard_normal((3, 2, 3, 2))
    weight = None

    def fn(x, w):
        y = F.conv2d(x, w, stride=(2, 1), padding=(1, 2), dilation=(1, 2))
        return F.max_pool2d(y, 2, stride=1, padding=1), F.avg_pool2d(y, 3, stride=2, padding=1)

    outs = fn(x, w)
    weight = [rng.standard_normal(o.shape) for o in outs]

    def loss(x, w):
        a, b = fn(x, w)
        return F.sum(a * weight[0]) + F.sum(b * weight[1])

    gx, gw = gl.grad(loss, argnums=(0, 1))(x, w)
    for arg, g in ((0, gx), (1, gw)):
        base = [x, w]
        numeric = np.zeros_like(base[arg])
        for i in np.ndindex(numeric.shape):
            up, down = [b.copy() for b in base], [b.copy() for b in base]
            up[arg][i] += EPS
            down[arg][i] -= EPS
            numeric[i] = (loss(*up) - loss(*down)) / (2 * EPS)
        np.testing.assert_allclose(g, numeric, rtol=1e-4, atol=1e-6)


def test_loss_must_be_a_scalar():
    with pytest.raises(NoDerivativeError, match="must return one float scalar"):
        gl.grad_graph(trace(lambda x: x * 2.0, {"x": (3,)}))
