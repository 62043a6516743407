"""Concrete mode: the one instruction at a graph break, run for real on real values.

Handlers ask the same questions in both modes; here every answer is what CPython does. A Python function the
instruction calls runs through ``compile_callee`` when one is given: compiled on its own, as TorchDynamo compiles
every frame it meets.
"""

from __future__ import annotations

import builtins
import types

from .frame import IterState, Var
from .values import compilable_callee


class ConcreteContext:
    """Everything real: runs the instruction at a graph break exactly as CPython would. A Python function it
    calls runs through ``compile_callee`` (its own compiled version) when one is given."""

    symbolic = False

    def __init__(self, compile_callee=None):
        self.compile_callee = compile_callee

    def wrap(self, value, source) -> Var:
        return Var(value, source)

    def created(self, value) -> Var:
        return Var(value)

    def use(self, var: Var):
        return var.value

    identity = real = contained = use

    def same(self, left, right) -> bool:
        return left.value is right.value

    def truth(self, var: Var) -> bool:
        return bool(var.value)

    @staticmethod
    def is_tensor(value) -> bool:
        return False

    def side_effect(self, what: str) -> None:
        pass

    def mutate(self, container: Var, what: str) -> None:
        pass

    @staticmethod
    def stores_itself(obj: Var, key, value: Var) -> bool:
        return False

    def check_inplace(self, left: Var, op: str) -> None:
        pass

    def apply(self, fn, args):
        return Var(fn(*[a.value for a in args]))

    def build(self, kind, items):
        if kind is dict:
            return Var({k: v.value for k, v in items.items()})
        return Var(kind(v.value for v in items))

    def append(self, container, var):
        container.value.append(var.value)

    def keyword_items(self, var):
        return {k: Var(v) for k, v in dict(var.value).items()}

    def subscript(self, container, key):
        return Var(container.value[key.value])

    def store_subscript(self, container, key, value):
        container.value[key.value] = value.value

    def delete_subscript(self, container, key):
        del container.value[key.value]

    def iterate(self, var, as_vars=False):
        value = var.value
        if isinstance(value, IterState):
            items = value.rest()
        else:
            items = [Var(x) for x in value]
        return items if as_vars else [v.value for v in items]

    def load_global(self, frame, name):
        if name in frame.f_globals:
            return Var(frame.f_globals[name])
        if hasattr(builtins, name):
            return Var(getattr(builtins, name))
        raise NameError(f"name '{name}' is not defined")

    def make_cell(self, frame, name):
        cell = types.CellType()
        if name in frame.locals:
            cell.cell_contents = frame.locals[name].value
        frame.locals[name] = Var(cell)

    def load_cell(self, frame, name):
        try:
            return Var(frame.cell(name).value.cell_contents)
        except ValueError:
            raise NameError(f"cannot access free variable '{name}' where it is not associated with a value") \
                from None

    def store_cell(self, frame, name, var):
        frame.cell(name).value.cell_contents = var.value

    def delete_cell(self, frame, name):
        del frame.cell(name).value.cell_contents

    def import_module(self, frame, name, fromlist, level):
        return Var(__import__(name, frame.f_globals, None, fromlist, level))

    def load_attr(self, obj, name):
        return Var(getattr(obj.value, name))

    def call(self, frame, fn, args, kwargs):
        f, args, kwargs = fn.value, [a.value for a in args], {k: v.value for k, v in kwargs.items()}
        if f in FRAME_BUILTINS:
            return Var(FRAME_BUILTINS[f](frame, args, kwargs))
        callee = compilable_callee(f) if self.compile_callee is not None else None
        if callee is not None:
            compiled = self.compile_callee(callee[0])
            if compiled is not None:
                return Var(compiled(*args, **kwargs) if callee[1] is None else compiled(callee[1], *args, **kwargs))
        return Var(f(*args, **kwargs))


def _local_values(frame) -> dict:
    out = {}
    for name, var in frame.locals.items():
        if name in frame.code.co_cellvars:
            try:
                out[name] = var.value.cell_contents
            except ValueError:
                continue
        else:
            out[name] = var.value
    return out


def _super(frame, args, kwargs):
    if args or kwargs:
        return super(*args, **kwargs)
    first = frame.code.co_varnames[0]
    self_value = frame.locals[first].value
    if first in frame.code.co_cellvars:
        self_value = self_value.cell_contents
    return super(frame.cell("__class__").value.cell_contents, self_value)


def _with_frame_namespaces(fn):
    def call(frame, args, kwargs):
        if len(args) == 1 and not kwargs:  # eval("x + 1") reads the function's own globals and locals
            args = [args[0], frame.f_globals, _local_values(frame)]
        return fn(*args, **kwargs)
    return call


FRAME_BUILTINS = {
    globals: lambda frame, args, kwargs: frame.f_globals,
    locals: lambda frame, args, kwargs: _local_values(frame),
    vars: lambda frame, args, kwargs: vars(*args) if args else _local_values(frame),
    dir: lambda frame, args, kwargs: dir(*args) if args else sorted(_local_values(frame)),
    super: _super,
    eval: _with_frame_namespaces(eval),
    exec: _with_frame_namespaces(exec),
}
"""Builtins that read the calling frame: here the frame is the interpreted function's, not graph_lab's own."""

