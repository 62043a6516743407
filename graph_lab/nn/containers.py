"""Containers: ``Sequential`` (calls its modules in order), ``ModuleList`` and ``ModuleDict`` (hold modules so
that their parameters are registered; the owner's ``forward`` decides how to call them)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterable, Iterator, Mapping

from .module import Module


class Sequential(Module):
    """``Sequential(a, b, c)(x)`` is ``c(b(a(x)))``; submodules are named ``0``, ``1``, ... (or by the keys of
    an ``OrderedDict`` given instead)."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, index):
        items = list(self._modules.items())
        if isinstance(index, slice):
            return Sequential(OrderedDict(items[index]))
        return items[_index(index, len(items), "Sequential")][1]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self._modules)), module)
        return self


class ModuleList(Module):
    """A list of modules, registered as ``0``, ``1``, ...; index it, iterate over it, append to it."""

    def __init__(self, modules: Iterable[Module] = ()):
        super().__init__()
        self.extend(modules)

    def __getitem__(self, index):
        items = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(items[index])
        return items[_index(index, len(items), "ModuleList")]

    def __setitem__(self, index: int, module: Module) -> None:
        self.add_module(str(_index(index, len(self._modules), "ModuleList")), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        self.extend(items)


class ModuleDict(Module):
    """A dict of modules by string key: ``blocks[key](x)`` picks one with a Python key."""

    def __init__(self, modules: Mapping[str, Module] | None = None):
        super().__init__()
        for key, m in (modules or {}).items():
            self[key] = m

    def __getitem__(self, key: str) -> Module:
        if key not in self._modules:
            raise KeyError(f"ModuleDict has no key {key!r}; its keys are {list(self._modules)}")
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()


def _index(i: int, n: int, what: str) -> int:
    if not -n <= i < n:
        raise IndexError(f"{what} index {i} is out of range for {n} modules")
    return i % n
