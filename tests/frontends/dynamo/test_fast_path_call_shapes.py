"""The cache-hit fast path for functions taking ``*args`` / ``**kwargs`` (``Module.__call__``'s shape): every
call shape gives what the plain Python function gives, on the fast path when Python binds it as the capture did,
and on the general path (with Python's own error) otherwise."""

import numpy as np
import pytest

import graph_lab


def _x(seed=0):
    return np.random.default_rng(seed).standard_normal((3, 4))


def _compiled(fn):
    cf = graph_lab.compile(fn)
    return cf, (lambda *a, **k: cf(*a, **k))


def packed(scale, *args, **kwargs):
    out = args[0] * scale
    for a in args[1:]:
        out = out + a
    for k in sorted(kwargs):
        out = out - kwargs[k]
    return out


def test_packed_arguments_take_the_fast_path_and_match_python():
    cf, call = _compiled(packed)
    x, y = _x(), _x(1)
    for args, kwargs in [((2.0, x), {}), ((2.0, x), {}), ((2.0, x, y), {}), ((2.0, x, y), {}),
                         ((2.0, x), {"b": y}), ((2.0, x), {"b": y}), ((3.0, y, x), {"a": x, "b": y})]:
        np.testing.assert_array_equal(call(*args, **kwargs), packed(*args, **kwargs))
    np.testing.assert_array_equal(call(2.0, x, b=y), packed(2.0, x, b=y))
    assert cf._fast is not None, cf._fast_path_source
    assert cf._fast_hit is not None  # (the last call was a hit of the generated function)


def test_a_keyword_naming_a_parameter_binds_it_as_python_does():
    cf, call = _compiled(packed)
    x = _x()
    call(2.0, x), call(2.0, x)
    with pytest.raises(TypeError, match="multiple values"):
        packed(2.0, x, scale=1.0)
    with pytest.raises(TypeError, match="multiple values"):
        call(2.0, x, scale=1.0)
    with pytest.raises(IndexError):
        packed(scale=2.0)
    with pytest.raises(IndexError):
        call(scale=2.0)  # (args is empty: the function's own error, as eager)


def positional_only(a, /, **kwargs):
    return a * 2.0 + sum(kwargs.values())


def test_a_keyword_with_the_name_of_a_positional_only_parameter_goes_to_kwargs():
    cf, call = _compiled(positional_only)
    x = _x()
    call(x), call(x)
    np.testing.assert_array_equal(call(x, a=x), positional_only(x, a=x))
    np.testing.assert_array_equal(call(x, a=x), positional_only(x, a=x))
    assert cf._fast is not None and cf._fast_hit is not None


def with_default(x, k=3.0, *rest):
    return x * k + len(rest)


def test_defaults_and_extra_positionals():
    cf, call = _compiled(with_default)
    x = _x()
    for args in [(x,), (x,), (x, 2.0), (x, 2.0, None), (x, 2.0, None, None), (x,)]:
        np.testing.assert_array_equal(call(*args), with_default(*args))
    with pytest.raises(TypeError):
        call()


def keyword_only(x, *, k=2.0):
    return x * k


def test_keyword_only_parameters_stay_on_the_general_path():
    cf, call = _compiled(keyword_only)
    x = _x()
    call(x), call(x)
    assert cf._fast is None and "keyword-only" in cf._fast_path_source
    np.testing.assert_array_equal(call(x, k=5.0), keyword_only(x, k=5.0))
