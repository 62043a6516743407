"""The built-in layers, with PyTorch's conventions: NCHW images, weight layouts ([out, in] for Linear,
[out, in/groups, kH, kW] for Conv2d), initialisation (uniform in +-1/sqrt(fan_in), which is what PyTorch's
``kaiming_uniform_(a=sqrt(5))`` gives), and argument names.

Every ``forward`` calls ``graph_lab.F`` (the op table), so a layer runs eagerly on arrays and is recorded by every
frontend. Random initial values come from one generator (``manual_seed`` resets it), or from the ``generator``
a layer is given, so a model built twice after the same seed has the same weights.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import TraceError
from ..frontends import functional as F
from ..ops.base import is_tensorlike
from .module import Module, Parameter

_generator = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Reset the generator that initialises layers (as ``torch.manual_seed``)."""
    global _generator
    _generator = np.random.default_rng(seed)


def _rng(generator):
    return _generator if generator is None else generator


def _uniform(generator, bound: float, shape) -> Parameter:
    return Parameter(_rng(generator).uniform(-bound, bound, size=shape))


def _pair(v) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)


class Linear(Module):
    """``y = x @ weight.T + bias``; weight [out_features, in_features]."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, generator=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.weight = _uniform(generator, bound, (out_features, in_features))
        self.bias = _uniform(generator, bound, (out_features,)) if bias else None
        if not bias:
            self.register_parameter("bias", None)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias) if self.bias is not None else F.linear(x, self.weight)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(Module):
    """2-D convolution (cross-correlation) of [N, C, H, W]; weight [out_channels, in_channels/groups, kH, kW]."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, generator=None):
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv2d: in_channels ({in_channels}) and out_channels ({out_channels}) must both be "
                             f"divisible by groups ({groups})")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation, self.groups = _pair(padding), _pair(dilation), groups
        fan_in = in_channels // groups * self.kernel_size[0] * self.kernel_size[1]
        bound = 1.0 / math.sqrt(fan_in) if fan_in else 0.0
        self.weight = _uniform(generator, bound, (out_channels, in_channels // groups) + self.kernel_size)
        self.bias = _uniform(generator, bound, (out_channels,)) if bias else None
        if not bias:
            self.register_parameter("bias", None)

    def forward(self, x):
        kw = dict(stride=self.stride, padding=self.padding, dilation=self.dilation, groups=self.groups)
        if self.bias is None:
            return F.conv2d(x, self.weight, **kw)
        return F.conv2d(x, self.weight, self.bias, **kw)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}")
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        if self.dilation != (1, 1):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        return text + ("" if self.bias is not None else ", bias=False")


class BatchNorm2d(Module):
    """Per-channel normalization of [N, C, H, W]. In training mode it normalizes with the batch's mean and biased
    variance and updates the running statistics (``running = (1 - momentum) * running + momentum * batch``, the
    variance unbiased, as PyTorch does); in eval mode it normalizes with the running statistics."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = True,
                 track_running_stats: bool = True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(np.ones(num_features))
            self.bias = Parameter(np.zeros(num_features))
        if track_running_stats:
            self.register_buffer("running_mean", np.zeros(num_features))
            self.register_buffer("running_var", np.ones(num_features))
            self.register_buffer("num_batches_tracked", np.array(0, dtype=np.int64))

    def forward(self, x):
        affine = (self.weight, self.bias) if self.affine else ()
        if not self.training and self.track_running_stats:
            return F.batch_norm(x, self.running_mean, self.running_var, *affine, eps=self.eps)
        mean = x.mean(axis=(0, 2, 3))
        var = x.var(axis=(0, 2, 3))
        if self.training and self.track_running_stats:
            n = x.shape[0] * x.shape[2] * x.shape[3]
            m = self.momentum
            self.running_mean = (1.0 - m) * self.running_mean + m * mean
            self.running_var = (1.0 - m) * self.running_var + m * (var * (n / max(n - 1, 1)))
            self.num_batches_tracked = self.num_batches_tracked + 1
        return F.batch_norm(x, mean, var, *affine, eps=self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"


class _Pool(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _pair(kernel_size)
        self.stride = self.kernel_size if stride is None else _pair(stride)
        self.padding = _pair(padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(_Pool):
    """Maximum over each window of the last two axes (stride defaults to the kernel size)."""

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding)


class AvgPool2d(_Pool):
    """Mean over each window of the last two axes; zero padding counts in the mean (count_include_pad=True)."""

    def forward(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding)


class ReLU(Module):
    def forward(self, x):
        return F.relu(x)


class GELU(Module):
    """GELU with the tanh approximation (``approximate='tanh'`` in PyTorch): the table has no ``erf`` op for the
    exact form, so ``approximate='none'`` is refused rather than silently approximated."""

    def __init__(self, approximate: str = "tanh"):
        super().__init__()
        if approximate != "tanh":
            raise ValueError(f"GELU(approximate={approximate!r}): only 'tanh' is available (the op table has no "
                             f"erf for the exact GELU); the two differ by at most about 1e-3")
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class LayerNorm(Module):
    """Normalizes over the last ``len(normalized_shape)`` axes, then scales by weight and adds bias."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape))
            self.bias = Parameter(np.zeros(self.normalized_shape))

    def forward(self, x):
        k = len(self.normalized_shape)
        if tuple(x.shape[x.ndim - k:]) != self.normalized_shape:
            raise ValueError(f"LayerNorm({self.normalized_shape}): the input's last axes are {tuple(x.shape)}")
        affine = (self.weight, self.bias) if self.elementwise_affine else ()
        if k == 1:
            return F.layer_norm(x, *affine, eps=self.eps)
        lead = tuple(x.shape[:x.ndim - k])
        flat = x.reshape(lead + (-1,))
        affine = tuple(a.reshape(-1) for a in affine)
        return F.layer_norm(flat, *affine, eps=self.eps).reshape(tuple(x.shape))

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class Embedding(Module):
    """A table of ``num_embeddings`` vectors; ``forward(indices)`` looks rows up (initialised from N(0, 1))."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None, generator=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        weight = _rng(generator).standard_normal((num_embeddings, embedding_dim))
        if padding_idx is not None:
            weight[padding_idx] = 0.0
        self.weight = Parameter(weight)

    def forward(self, indices):
        return self.weight[indices]

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Dropout(Module):
    """Zeroes each element with probability ``p`` in training mode and scales the rest by 1 / (1 - p); the
    identity in eval mode. The mask is drawn from the module's own generator (``seed``), so runs repeat."""

    def __init__(self, p: float = 0.5, seed: int | None = 0, generator=None):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be between 0 and 1, got {p}")
        self.p = p
        self.generator = generator if generator is not None else np.random.default_rng(seed)

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        if is_tensorlike(x):
            raise TraceError("Dropout in training mode draws a new random mask on every call, and a graph would "
                             "keep the one drawn while capturing (no op of the table draws random numbers); "
                             "capture the model in eval mode (model.eval()), or without Dropout")
        if self.p == 1.0:
            return x * 0.0
        keep = self.generator.random(np.shape(x)) >= self.p
        return x * keep / (1.0 - self.p)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Flatten(Module):
    """Merges the axes ``start_dim..end_dim`` into one (by default every axis but the batch axis)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        shape = tuple(x.shape)
        start, end = self.start_dim % len(shape), self.end_dim % len(shape)
        return x.reshape(shape[:start] + (-1,) + shape[end + 1:])

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Identity(Module):
    def forward(self, x):
        return x
