"""graph_lab.nn layers against hand-written NumPy references; state_dict, modes, hooks, dropout."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from graph_lab import nn, run, trace
from graph_lab.errors import TraceError

RNG = np.random.default_rng(21)


def normal(*shape):
    return RNG.standard_normal(shape)


def conv_reference(x, w, b, stride, pad):
    """Direct loops over output positions: the definition of cross-correlation."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return y + b[None, :, None, None]


def test_linear_matches_x_at_w_transposed_plus_bias_and_init_bound():
    m = nn.Linear(6, 3)
    x = normal(4, 6)
    assert m.weight.shape == (3, 6) and m.bias.shape == (3,)
    assert np.abs(m.weight).max() <= 1 / np.sqrt(6)
    np.testing.assert_allclose(m(x), x @ np.asarray(m.weight).T + np.asarray(m.bias), rtol=1e-12)
    assert type(m(x)) is np.ndarray  # a result is a plain array, not a Parameter


def test_conv2d_matches_direct_loops():
    m = nn.Conv2d(3, 5, 3, stride=2, padding=1)
    x = normal(2, 3, 7, 7)
    assert m.weight.shape == (5, 3, 3, 3)
    np.testing.assert_allclose(m(x), conv_reference(x, np.asarray(m.weight), np.asarray(m.bias), 2, 1),
                               rtol=1e-10, atol=1e-12)


def test_batchnorm_training_uses_batch_statistics_and_updates_running_ones():
    m = nn.BatchNorm2d(3, momentum=0.2)
    m.weight[...] = [1.0, 2.0, 0.5]
    m.bias[...] = [0.0, 1.0, -1.0]
    x = normal(4, 3, 5, 5) * 2 + 1
    y = m(x)
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    want = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
    want = want * np.array([1.0, 2.0, 0.5])[None, :, None, None] + np.array([0.0, 1.0, -1.0])[None, :, None, None]
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)
    n = 4 * 5 * 5
    np.testing.assert_allclose(m.running_mean, 0.2 * mean, rtol=1e-12)
    np.testing.assert_allclose(m.running_var, 0.8 + 0.2 * var * n / (n - 1), rtol=1e-12)
    assert int(m.num_batches_tracked) == 1
    m.eval()
    before = m.running_mean.copy()
    y_eval = m(x)
    np.testing.assert_array_equal(m.running_mean, before)  # eval mode leaves the statistics alone
    want_eval = (x - before[None, :, None, None]) / np.sqrt(m.running_var[None, :, None, None] + 1e-5)
    want_eval = want_eval * np.array([1.0, 2.0, 0.5])[None, :, None, None] + \
        np.array([0.0, 1.0, -1.0])[None, :, None, None]
    np.testing.assert_allclose(y_eval, want_eval, rtol=1e-12, atol=1e-12)


def test_pooling_activation_flatten_layernorm_embedding():
    x = normal(2, 3, 6, 6)
    want_max = x.reshape(2, 3, 3, 2, 3, 2).max(axis=(3, 5))
    np.testing.assert_array_equal(nn.MaxPool2d(2)(x), want_max)
    np.testing.assert_allclose(nn.AvgPool2d(2)(x), x.reshape(2, 3, 3, 2, 3, 2).mean(axis=(3, 5)), rtol=1e-12)
    np.testing.assert_array_equal(nn.ReLU()(x), np.where(x > 0, x, 0.0))
    gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(nn.GELU()(x), gelu, rtol=1e-12)
    assert nn.Flatten()(x).shape == (2, 108)
    ln = nn.LayerNorm((6, 6))
    ln.weight[...] = normal(6, 6)
    flat = x.reshape(2, 3, 36)
    want_ln = (flat - flat.mean(-1, keepdims=True)) / np.sqrt(flat.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln(x), want_ln.reshape(x.shape) * np.asarray(ln.weight), rtol=1e-10, atol=1e-12)
    emb = nn.Embedding(10, 4)
    idx = np.array([[1, 3], [9, 1]])
    np.testing.assert_array_equal(emb(idx), np.asarray(emb.weight)[idx])
    with pytest.raises(ValueError, match="only 'tanh'"):
        nn.GELU(approximate="none")


def test_dropout_is_seeded_scaled_and_off_in_eval():
    x = np.ones((1000,))
    a, b = nn.Dropout(0.25, seed=7), nn.Dropout(0.25, seed=7)
    ya, yb = a(x), b(x)
    np.testing.assert_array_equal(ya, yb)
    assert set(np.unique(ya)) <= {0.0, 1 / 0.75}
    assert 0.15 < np.mean(ya == 0) < 0.35
    a.eval()
    assert a(x) is x
    with pytest.raises(TraceError, match="Dropout in training mode"):
        trace(lambda v: b(v), {"v": (4,)})


def test_layers_run_eagerly_and_traced_bit_for_bit():
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.AvgPool2d(2),
                          nn.Flatten(), nn.Linear(16, 3), nn.GELU(), nn.LayerNorm(3))
    model.eval()
    x = normal(2, 2, 4, 4)
    g = trace(lambda v: model(v), {"v": (2, 2, 4, 4)})
    np.testing.assert_array_equal(run(g, {"v": x})[0], model(x))


def test_named_members_state_dict_round_trip_and_errors():
    def build():
        return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm2d(4), nn.ModuleDict({"head": nn.Linear(4, 2)}))
    a, b = build(), build()
    assert [n for n, _ in a.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias", "2.head.weight",
                                                     "2.head.bias"]
    assert [n for n, _ in a.named_buffers()] == ["1.running_mean", "1.running_var", "1.num_batches_tracked"]
    assert [n for n, _ in a.named_modules()] == ["", "0", "1", "2", "2.head"]
    assert a.get_submodule("2.head") is a[2]["head"]
    with pytest.raises(AttributeError, match="no submodule 'tail'"):
        a.get_submodule("2.tail")
    state = a.state_dict()
    weight = b[0].weight
    b.load_state_dict(state)
    assert b[0].weight is weight  # loaded in place
    for key, value in b.state_dict().items():
        np.testing.assert_array_equal(value, state[key])
    state["0.weight"][...] = 0  # a state_dict is a copy
    assert np.abs(a[0].weight).sum() > 0
    with pytest.raises(nn.StateDictError, match=r"missing key\(s\): 0\.bias.*unexpected key\(s\): extra"):
        b.load_state_dict({**{k: v for k, v in state.items() if k != "0.bias"}, "extra": np.zeros(1)})
    with pytest.raises(nn.StateDictError, match=r"size mismatch for 2\.head\.weight"):
        b.load_state_dict({**state, "2.head.weight": np.zeros((3, 3))})
    missing, unexpected = b.load_state_dict({"0.bias": np.ones(4)}, strict=False)
    assert "0.weight" in missing and unexpected == [] and np.all(b[0].bias == 1)


def test_train_eval_reach_every_submodule():
    m = nn.Sequential(nn.Linear(2, 2), nn.ModuleList([nn.Dropout(), nn.BatchNorm2d(2)]))
    assert all(s.training for s in m.modules())
    m.eval()
    assert not any(s.training for s in m.modules())
    m.train()
    assert all(s.training for s in m.modules())


def test_hooks_fire_in_order_can_replace_values_and_are_removable():
    m = nn.Linear(2, 2)
    seen = []
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0.0,))
    post = m.register_forward_hook(lambda mod, args, out: seen.append(out.copy()) or out + 1.0)
    y = m(np.ones((1, 2)))
    np.testing.assert_array_equal(seen[0], np.broadcast_to(np.asarray(m.bias), (1, 2)))  # input zeroed first
    np.testing.assert_array_equal(y, seen[0] + 1.0)
    pre.remove()
    post.remove()
    post.remove()  # twice is harmless
    m(np.ones((1, 2)))
    assert len(seen) == 1


def test_functional_call_uses_given_state_and_returns_buffer_writes():
    bn = nn.BatchNorm2d(2)
    x = normal(3, 2, 2, 2)
    state = {"running_mean": np.ones(2), "running_var": np.ones(2), "weight": np.ones(2), "bias": np.zeros(2),
             "num_batches_tracked": np.array(0)}
    out, writes = nn.functional_call(bn, state, x)
    assert sorted(writes) == ["num_batches_tracked", "running_mean", "running_var"]
    np.testing.assert_allclose(writes["running_mean"], 0.9 + 0.1 * x.mean(axis=(0, 2, 3)))
    np.testing.assert_array_equal(bn.running_mean, np.zeros(2))  # the module's own buffers untouched


@pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                    reason="torch is not installed: the comparison with torch.nn needs it")
def test_layers_against_torch_with_the_same_weights():
    import torch
    m = nn.Conv2d(3, 4, 3, stride=2, padding=1)
    t = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1).double()
    with torch.no_grad():
        t.weight.copy_(torch.from_numpy(np.asarray(m.weight)))
        t.bias.copy_(torch.from_numpy(np.asarray(m.bias)))
    x = normal(2, 3, 7, 7)
    np.testing.assert_allclose(m(x), t(torch.from_numpy(x)).detach().numpy(), rtol=1e-10, atol=1e-12)
