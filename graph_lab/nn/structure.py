"""The structure clock: one count that graph_lab.nn advances whenever any module's structure changes.

A module's *structure* is what its code finds when it looks itself up: its class and instance attributes, the
keys and objects of its ``_parameters``, ``_buffers`` and ``_modules`` dicts, its hooks, its ``training`` flag.
(The *values* in its parameter and buffer arrays are not structure: an optimizer step writes into them.)
``Module`` advances the clock on every change it makes to these: attribute assignment and deletion,
``register_*``, ``add_module``, ``train()``/``eval()``, a hook handle's ``remove()``, and the state bindings
captures install.

compile() reads it (``frontends/dynamo/module_guards.py``): the guards on a model's structure are checked once
after each change rather than on every call. Code that writes into those dicts or into a module's ``__dict__``
directly, around ``Module``'s methods, says so with ``structure_changed()``.
"""

from __future__ import annotations

STRUCTURE_CLOCK = [0]
"""The count of changes so far (a one-item list, so that readers hold the same object)."""

STRUCTURE_DICTS = ("_parameters", "_buffers", "_non_persistent", "_modules", "_forward_pre_hooks", "_forward_hooks")
"""The attributes of a module that hold its structure, each changed only by ``Module``'s methods."""


def structure_changed() -> None:
    """Advance the clock: some module's structure may have changed (see the module docstring)."""
    STRUCTURE_CLOCK[0] += 1
