"""Two small language models in plain NumPy, decoding greedily: a GPT-2-style model that reruns the whole growing
sequence at every step (learned positions, a causal mask from ``np.tri``), and a Llama-style model that feeds one
token per step and keeps keys and values in caches on its layers (RMS norm, rotary positions, SwiGLU).

The next token is ``int(np.argmax(...))`` of the logits: the loop's control flow depends on the data.
"""

from __future__ import annotations

import numpy as np


def _gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def _softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def _layer_norm(x, gain, bias, eps=1e-5):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    return gain * (x - mu) / np.sqrt(var + eps) + bias


def _gpt2_block(x, p, heads):
    seq, dim = x.shape
    hd = dim // heads
    qkv = _layer_norm(x, p["ln1_g"], p["ln1_b"]) @ p["w_qkv"] + p["b_qkv"]
    q, k, v = (qkv[:, i * dim:(i + 1) * dim].reshape(seq, heads, hd).transpose(1, 0, 2) for i in range(3))
    causal = (1.0 - np.tri(seq)) * -1e10
    att = _softmax(q @ k.transpose(0, 2, 1) / np.sqrt(hd) + causal) @ v
    x = x + att.transpose(1, 0, 2).reshape(seq, dim) @ p["w_out"] + p["b_out"]
    h = _gelu(_layer_norm(x, p["ln2_g"], p["ln2_b"]) @ p["w_fc"] + p["b_fc"])
    return x + h @ p["w_proj"] + p["b_proj"]


def _gpt2_logits(model, ids):
    x = model["tokens"][ids] + model["positions"][:len(ids)]
    for block in model["blocks"]:
        x = _gpt2_block(x, block, model["heads"])
    return _layer_norm(x, model["lnf_g"], model["lnf_b"]) @ model["tokens"].T


def gpt2_greedy(model, prompt, steps):
    ids = list(prompt)
    for _ in range(steps):
        logits = _gpt2_logits(model, ids)
        ids.append(int(np.argmax(logits[-1])))
    return ids[len(prompt):]


def gpt2_greedy_inputs(n, rng, vocab=256, layers=2, heads=4):
    def w(*shape):
        return rng.standard_normal(shape) * 0.1

    blocks = [{"ln1_g": np.ones(n), "ln1_b": np.zeros(n), "w_qkv": w(n, 3 * n), "b_qkv": w(3 * n),
               "w_out": w(n, n), "b_out": w(n), "ln2_g": np.ones(n), "ln2_b": np.zeros(n),
               "w_fc": w(n, 4 * n), "b_fc": w(4 * n), "w_proj": w(4 * n, n), "b_proj": w(n)}
              for _ in range(layers)]
    model = {"tokens": w(vocab, n), "positions": w(64, n), "blocks": blocks, "lnf_g": np.ones(n),
             "lnf_b": np.zeros(n), "heads": heads}
    return model, [int(t) for t in rng.integers(0, vocab, 6)], 8


def _rms_norm(x, weight, eps=1e-6):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def _rotate(x, cos, sin):
    """Rotary positions on (seq, heads, head_dim): each even/odd pair is turned by its position's angle."""
    even, odd = x[..., 0::2], x[..., 1::2]
    c, s = cos[:, None, :], sin[:, None, :]
    return np.stack([even * c - odd * s, even * s + odd * c], axis=-1).reshape(x.shape)


class LlamaLayer:
    def __init__(self, dim, heads, hidden, max_len, rng):
        def w(*shape):
            return rng.standard_normal(shape) / np.sqrt(shape[0])

        self.heads, self.head_dim = heads, dim // heads
        self.wq, self.wk, self.wv, self.wo = w(dim, dim), w(dim, dim), w(dim, dim), w(dim, dim)
        self.w_gate, self.w_up, self.w_down = w(dim, hidden), w(dim, hidden), w(hidden, dim)
        self.attn_norm, self.ffn_norm = np.ones(dim), np.ones(dim)
        self.cache_k = np.zeros((max_len, heads, dim // heads))
        self.cache_v = np.zeros((max_len, heads, dim // heads))

    def forward(self, x, start_pos, cos, sin, mask):
        L = x.shape[0]
        h = _rms_norm(x, self.attn_norm)
        q = (h @ self.wq).reshape(L, self.heads, self.head_dim)
        k = (h @ self.wk).reshape(L, self.heads, self.head_dim)
        v = (h @ self.wv).reshape(L, self.heads, self.head_dim)
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        self.cache_k[start_pos:start_pos + L] = k
        self.cache_v[start_pos:start_pos + L] = v
        keys = self.cache_k[:start_pos + L].transpose(1, 2, 0)
        values = self.cache_v[:start_pos + L].transpose(1, 0, 2)
        scores = q.transpose(1, 0, 2) @ keys / np.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask
        att = (_softmax(scores) @ values).transpose(1, 0, 2).reshape(L, -1)
        x = x + att @ self.wo
        h = _rms_norm(x, self.ffn_norm)
        gate = h @ self.w_gate
        return x + (gate / (1.0 + np.exp(-gate)) * (h @ self.w_up)) @ self.w_down


class TinyLlama:
    def __init__(self, vocab, dim, heads, layers, max_len, rng):
        self.embedding = rng.standard_normal((vocab, dim)) * 0.5
        self.layers = [LlamaLayer(dim, heads, 2 * dim, max_len, rng) for _ in range(layers)]
        self.norm = np.ones(dim)
        self.output = rng.standard_normal((dim, vocab)) / np.sqrt(dim)
        angles = np.outer(np.arange(max_len), 1.0 / 10000.0 ** (np.arange(0, dim // heads, 2) / (dim // heads)))
        self.cos, self.sin = np.cos(angles), np.sin(angles)

    def forward(self, tokens, start_pos):
        L = len(tokens)
        x = self.embedding[tokens]
        cos, sin = self.cos[start_pos:start_pos + L], self.sin[start_pos:start_pos + L]
        mask = None
        if L > 1:
            mask = np.hstack([np.zeros((L, start_pos)), np.triu(np.full((L, L), -np.inf), 1)])
        for layer in self.layers:
            x = layer.forward(x, start_pos, cos, sin, mask)
        return _rms_norm(x, self.norm) @ self.output


def llama_decode(model, prompt, steps):
    logits = model.forward(prompt, 0)
    pos = len(prompt)
    out = []
    for _ in range(steps):
        token = int(np.argmax(logits[-1]))
        out.append(token)
        logits = model.forward([token], pos)
        pos += 1
    return out


def llama_decode_inputs(n, rng, vocab=256):
    model = TinyLlama(vocab, n, 4, 2, 64, rng)
    return model, [int(t) for t in rng.integers(0, vocab, 6)], 10
