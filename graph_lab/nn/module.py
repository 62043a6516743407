"""``Module`` and ``Parameter``: PyTorch's way of holding a model's state, in NumPy.

A module owns parameters (arrays to learn), buffers (arrays it updates itself, such as batch norm's running
statistics) and submodules, each registered by assigning an attribute (``self.fc = Linear(4, 2)``). Its
``forward`` is written with ``graph_lab.F`` (or NumPy operators), so calling the module runs eagerly on arrays and
is recorded on the stand-in tensors of every frontend.

Two mechanisms let a capture see a module differently without the module's code knowing:

- a *state binding* (``bound_state``) answers ``self.weight`` with another value (a stand-in of a graph input, or
  an array of a parameter dict) and collects what ``forward`` writes into buffers: ``functional_call`` and
  ``symbolic_trace`` use it, so a captured graph reads parameters as inputs and returns buffer updates;
- a *call interceptor* (``symbolic_trace``'s tracer) receives every ``module(...)`` call instead of ``__call__``,
  so a leaf module becomes one ``call_module`` node and its hooks do not fire while tracing.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from ..errors import GraphLabError, TraceError
from ..ops.base import is_tensorlike
from .structure import STRUCTURE_CLOCK, STRUCTURE_DICTS, structure_changed


class StateDictError(GraphLabError, KeyError):
    """``load_state_dict`` got keys that are missing, unexpected, or of the wrong shape; the message lists them."""

    def __str__(self) -> str:  # (KeyError would print the message quoted)
        return str(self.args[0]) if self.args else ""


class Parameter(np.ndarray):
    """An array a module learns: registered as a parameter when assigned to a module attribute.

    A NumPy array of its own (a float copy of ``data``), so eager code uses it as any array. The result of an
    operation on it is a plain ``ndarray`` (``__array_wrap__``), and so is indexing it: only the registered array
    itself is a Parameter. Optimizers update it in place, so the module keeps the same object."""

    def __new__(cls, data, dtype=None) -> "Parameter":
        array = np.array(data, dtype=dtype if dtype is not None else None, copy=True)
        if dtype is None and array.dtype.kind in "biu":
            array = array.astype(np.float64)
        return array.view(cls)

    def __array_wrap__(self, out, context=None, return_scalar=False):
        if out is self:  # an in-place update (p -= lr * g) keeps the Parameter
            return self
        out = out.view(np.ndarray)
        return out[()] if return_scalar else out

    def __getitem__(self, key):
        return self.view(np.ndarray)[key]

    def __repr__(self) -> str:
        return "Parameter(" + repr(self.view(np.ndarray))[6:]

    def _plain_array(self) -> np.ndarray:
        """This array as a plain ``ndarray`` sharing its memory, the same object on every call: what compile()
        reads a Parameter as (a graph input fetched from the module on each call, never a constant)."""
        view = self.__dict__.get("_plain_view")
        if view is None:
            view = self.__dict__["_plain_view"] = self.view(np.ndarray)
        return view

    def __reduce__(self):
        raise TypeError("graph_lab never pickles arrays; save a state_dict with np.savez instead")


class RemovableHandle:
    """What ``register_forward_hook`` returns: ``handle.remove()`` unregisters the hook (twice is harmless)."""

    def __init__(self, hooks: dict, key: int):
        self._hooks, self.id = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self.id, None)
        structure_changed()

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


_hook_ids = iter(range(1, 2**62))

# --- what captures install (see the module docstring)

_BINDINGS: list["StateBinding"] = []
_INTERCEPTORS: list[Any] = []


class StateBinding:
    """Values that replace modules' parameters and buffers for a while, by (module, attribute name), and the
    buffer writes ``forward`` made meanwhile (by the same key), which a capture returns instead of performing."""

    def __init__(self, values: dict[tuple[int, str], Any], names: dict[tuple[int, str], str]):
        self.values = values
        self.names = names
        """Qualified name of each bound attribute (``features.bn.running_mean``)."""
        self.writes: dict[str, Any] = {}
        """Buffer updates made by ``forward`` while bound, by qualified name."""


def bind_state(module: "Module", state: dict[str, Any]) -> StateBinding:
    """A binding of ``module``'s parameters and buffers named in ``state`` (qualified names) to its values."""
    values, names = {}, {}
    for qualified, owner, attr in module._state_slots():
        if qualified in state:
            values[(id(owner), attr)] = state[qualified]
            names[(id(owner), attr)] = qualified
    unknown = sorted(set(state) - set(names.values()))
    if unknown:
        raise StateDictError(f"{type(module).__name__} has no parameter or buffer named {', '.join(unknown)}; "
                             f"it has {', '.join(n for n, _, _ in module._state_slots())}")
    return StateBinding(values, names)


@contextmanager
def bound_state(binding: StateBinding):
    _BINDINGS.append(binding)
    structure_changed()
    try:
        yield binding
    finally:
        _BINDINGS.remove(binding)
        structure_changed()


@contextmanager
def intercepting(interceptor):
    """While the body runs, ``interceptor.call_module(module, args, kwargs)`` receives every module call."""
    _INTERCEPTORS.append(interceptor)
    structure_changed()
    try:
        yield interceptor
    finally:
        _INTERCEPTORS.remove(interceptor)
        structure_changed()


class Module:
    """Base class of every layer and model: subclasses set attributes in ``__init__`` and write ``forward``."""

    # What compile() reads to check a model's structure once per change instead of on every call (structure.py)
    _structure_clock = STRUCTURE_CLOCK
    _structure_dicts = STRUCTURE_DICTS
    _structure_globals = ("_BINDINGS", "_INTERCEPTORS")
    """This module's globals that are structure too: the bindings and interceptors above."""

    def __init__(self):
        structure_changed()
        # Plain dicts (ordered, as every dict is): compile() reads a module's state and hooks through them, guarded
        # by their keys, as it reads any dict of the program.
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_forward_pre_hooks", {})
        object.__setattr__(self, "_forward_hooks", {})
        object.__setattr__(self, "training", True)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward(); define one to make the module callable")

    # --- attributes: parameters, buffers and submodules live in their own dicts

    def __setattr__(self, name: str, value) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {name!r} before Module.__init__() call "
                                 f"(call super().__init__() first in {type(self).__name__}.__init__)")
        if name in self._buffers and not isinstance(value, (Parameter, Module)):
            self._set_buffer(name, value)  # (a write into the buffer's array changes no structure)
            return
        structure_changed()
        if isinstance(value, Parameter):
            self._forget(name, "_parameters")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            self._forget(name, "_modules")
            self.add_module(name, value)
        elif name in self._parameters:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} as parameter {name!r} of "
                                f"{type(self).__name__} (a Parameter or None is expected)")
            self._parameters[name] = None
        elif name in self._modules and value is None:
            self._modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Drop ``name`` from every place but ``keep``, where assigning it again keeps its place (a Sequential
        whose second module is replaced still calls it second)."""
        self.__dict__.pop(name, None)
        for kind in ("_parameters", "_buffers", "_modules"):
            if kind != keep:
                self.__dict__[kind].pop(name, None)

    def __getattr__(self, name: str):
        # (called only when normal lookup fails: parameters, buffers and submodules are not in __dict__)
        d = self.__dict__
        if "_parameters" in d:
            if _BINDINGS:
                binding = _BINDINGS[-1]
                hit = binding.values.get((id(self), name), _MISSING)
                if hit is not _MISSING:
                    return hit
            for kind in ("_parameters", "_buffers", "_modules"):
                if name in d[kind]:
                    return d[kind][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        structure_changed()
        for d in (self._parameters, self._buffers, self._modules):
            if name in d:
                del d[name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        _check_name(self, name)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"parameter {name!r} of {type(self).__name__} must be a Parameter (or None), got "
                            f"{type(param).__name__}; wrap the array: Parameter(array)")
        self._parameters[name] = param
        structure_changed()

    def register_buffer(self, name: str, value, persistent: bool = True) -> None:
        """An array the module keeps and updates itself (not learned); in ``state_dict`` unless not persistent."""
        _check_name(self, name)
        self._buffers[name] = None if value is None else np.asarray(value)
        if not persistent:
            self._non_persistent.add(name)
        structure_changed()

    def _set_buffer(self, name: str, value) -> None:
        """Write a buffer: in place eagerly (so arrays the caller holds see it), into the binding while bound."""
        if _BINDINGS:
            binding = _BINDINGS[-1]
            key = (id(self), name)
            if key in binding.values:
                binding.values[key] = value
                binding.writes[binding.names[key]] = value
                return
        if is_tensorlike(value):
            raise TraceError(f"{type(self).__name__}.forward writes its buffer {name!r} while being captured, and "
                             f"a graph cannot write into the module's array. Capture in eval mode (model.eval()), "
                             f"or with nn.symbolic_trace / nn.functional_call, which return buffer updates")
        current = self._buffers[name]
        if current is None or not isinstance(value, np.ndarray) or np.shape(value) != current.shape:
            self._buffers[name] = np.asarray(value)
            structure_changed()
        else:
            current[...] = value

    def add_module(self, name: str, module: "Module | None") -> None:
        _check_name(self, name)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass (submodule {name!r})")
        self._modules[name] = module
        structure_changed()

    register_module = add_module

    # --- walking the tree

    def named_modules(self, prefix: str = "", memo: set | None = None) -> Iterator[tuple[str, "Module"]]:
        """This module and every submodule, depth first, each once, by qualified name (``''`` for itself)."""
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(f"{prefix}.{name}" if prefix else name, memo)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        for name, child in self._modules.items():
            if child is not None:
                yield name, child

    def children(self) -> Iterator["Module"]:
        for _, child in self.named_children():
            yield child

    def _named_members(self, kind: str, prefix: str, recurse: bool):
        seen = set()
        walk = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_prefix, module in walk:
            for name, value in module.__dict__[kind].items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Every parameter by qualified name (``features.0.weight``), each array once."""
        return self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, np.ndarray]]:
        return self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse: bool = True) -> Iterator[np.ndarray]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def _state_slots(self) -> list[tuple[str, "Module", str]]:
        """(qualified name, owning module, attribute) of every parameter and buffer, parameters first."""
        slots = []
        for kind in ("_parameters", "_buffers"):
            seen = set()
            for module_prefix, module in self.named_modules():
                for name, value in module.__dict__[kind].items():
                    if value is not None and id(value) not in seen:
                        seen.add(id(value))
                        slots.append((f"{module_prefix}.{name}" if module_prefix else name, module, name))
        return slots

    def get_submodule(self, target: str) -> "Module":
        """The submodule at the dotted path ``target`` (``''`` is this module); an ``AttributeError`` saying which
        part of the path does not exist."""
        if target == "":
            return self
        module, walked = self, []
        for part in target.split("."):
            child = module._modules.get(part)
            if child is None:
                where = ".".join(walked) or "the root module"
                have = ", ".join(module._modules) or "none"
                raise AttributeError(f"{type(module).__name__} ({where}) has no submodule {part!r} (path "
                                     f"{target!r}); its submodules are: {have}")
            module = child
            walked.append(part)
        return module

    def get_parameter(self, target: str) -> Parameter:
        owner, _, name = target.rpartition(".")
        module = self.get_submodule(owner)
        if name not in module._parameters:
            raise AttributeError(f"{type(module).__name__} has no parameter {name!r} (path {target!r})")
        return module._parameters[name]

    # --- state

    def state_dict(self) -> "OrderedDict[str, np.ndarray]":
        """A copy of every parameter and persistent buffer, by qualified name (plain arrays, not the live ones)."""
        out = OrderedDict()
        for module_prefix, module in self.named_modules():
            for kind in ("_parameters", "_buffers"):
                for name, value in module.__dict__[kind].items():
                    if value is not None and name not in (module._non_persistent if kind == "_buffers" else ()):
                        key = f"{module_prefix}.{name}" if module_prefix else name
                        out[key] = np.array(value, copy=True)
        return out

    def load_state_dict(self, state: dict, strict: bool = True) -> tuple[list[str], list[str]]:
        """Copy ``state``'s arrays into the parameters and buffers, in place (the arrays keep their identity).

        Keys missing from ``state``, keys the module does not have (with ``strict``), and arrays whose shape
        differs raise ``StateDictError`` listing all of them; nothing is written then. Returns (missing,
        unexpected) keys, as PyTorch does."""
        targets = {}
        for module_prefix, module in self.named_modules():
            for kind in ("_parameters", "_buffers"):
                for name, value in module.__dict__[kind].items():
                    if value is not None and name not in (module._non_persistent if kind == "_buffers" else ()):
                        targets[f"{module_prefix}.{name}" if module_prefix else name] = value
        missing = [k for k in targets if k not in state]
        unexpected = [k for k in state if k not in targets]
        problems = []
        if strict and missing:
            problems.append(f"missing key(s): {', '.join(missing)}")
        if strict and unexpected:
            problems.append(f"unexpected key(s): {', '.join(unexpected)}")
        for k, target in targets.items():
            if k in state and np.shape(state[k]) != target.shape:
                problems.append(f"size mismatch for {k}: the checkpoint has shape {tuple(np.shape(state[k]))}, "
                                f"the module {target.shape}")
        if problems:
            raise StateDictError(f"error(s) loading the state_dict of {type(self).__name__}: " + "; ".join(problems))
        for k, target in targets.items():
            if k in state:
                np.copyto(target, np.asarray(state[k]), casting="same_kind")
        return missing, unexpected

    # --- modes

    def train(self, mode: bool = True) -> "Module":
        """Training mode (batch statistics, dropout on) for this module and every submodule; returns self."""
        if not isinstance(mode, bool):
            raise TypeError(f"train(mode) takes a bool, got {type(mode).__name__}")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        structure_changed()
        return self

    def eval(self) -> "Module":
        """Inference mode (running statistics, dropout off): ``train(False)``."""
        return self.train(False)

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        for m in list(self.modules())[::-1]:
            fn(m)
        return self

    # --- calling, with hooks

    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, args)`` runs before each call's forward; it may return new args (a tuple, or one value)."""
        key = next(_hook_ids)
        self._forward_pre_hooks[key] = hook
        structure_changed()
        return RemovableHandle(self._forward_pre_hooks, key)

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, args, output)`` runs after each call's forward; it may return a new output."""
        key = next(_hook_ids)
        self._forward_hooks[key] = hook
        structure_changed()
        return RemovableHandle(self._forward_hooks, key)

    def __call__(self, *args, **kwargs):
        if _INTERCEPTORS:  # symbolic_trace: the tracer decides (leaf or not) and runs no hook
            return _INTERCEPTORS[-1].call_module(self, args, kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    # --- printing

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, child in self._modules.items():
            text = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {text}")
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


_MISSING = object()


def _check_name(module: Module, name: str) -> None:
    if not isinstance(name, str) or not name or "." in name:
        raise KeyError(f"{type(module).__name__}: a parameter, buffer or submodule name must be a non-empty str "
                       f"without '.' (the dot joins qualified names), got {name!r}")
    if name in module.__dict__ and name not in ("training",):
        raise KeyError(f"{type(module).__name__}: attribute {name!r} already exists and is not a parameter, buffer "
                       f"or submodule")


def functional_call(module: Module, state: dict[str, Any], *args, **kwargs):
    """``module(*args)`` with the parameters and buffers named in ``state`` replaced by its values (arrays or
    stand-ins; the others are the module's own arrays), the module itself unchanged: ``(output, buffer_writes)``, the buffers ``forward`` wrote (batch
    norm's running statistics in training mode) as new values by qualified name. ``grad`` differentiates a loss
    through this (``torch.func.functional_call``'s idea)."""
    full = {name: getattr(owner, attr) for name, owner, attr in module._state_slots()}
    unknown = sorted(set(state) - set(full))
    if unknown:
        raise StateDictError(f"{type(module).__name__} has no parameter or buffer named {', '.join(unknown)}; "
                             f"it has {', '.join(full)}")
    with bound_state(bind_state(module, {**full, **state})) as binding:
        out = module(*args, **kwargs)
    return out, dict(binding.writes)
