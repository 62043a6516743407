"""Questions ``script`` asks of the syntax tree before converting a block: which names does it assign, does it
return, does it break. Nested function definitions and lambdas are their own scopes and are not looked into."""

from __future__ import annotations

import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _walk(nodes):
    """Every node of ``nodes`` and below, without entering nested scopes."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _target_names(target) -> list[str]:
    """The variables an assignment target binds or writes into (``x``, ``a, b``, ``x[i]`` writes x)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _target_names(t)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    if isinstance(target, ast.Subscript):  # x[i] = v makes a new x (a functional update)
        return _target_names(target.value)
    return []


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names the statements assign, in order of first assignment (loop targets, ``x[i] = v``, ``x += 1``,
    ``def f``, ``(y := ...)`` included; comprehension variables are local to their comprehension)."""
    found = []
    for node in _walk(stmts):
        if isinstance(node, ast.Assign):
            names = [n for t in node.targets for n in _target_names(t)]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
            names = _target_names(node.target)
        elif isinstance(node, ast.NamedExpr):
            names = [node.target.id]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names = [node.name]
        else:
            continue
        found += [((node.lineno, node.col_offset), name) for name in names]
    first: dict[str, tuple] = {}
    for position, name in sorted(found):
        first.setdefault(name, position)
    return list(first)


def contains(stmts: list[ast.stmt], kinds) -> ast.AST | None:
    """The first node of one of ``kinds`` in the statements (not in nested scopes), or None."""
    found = [node for node in _walk(stmts) if isinstance(node, kinds)]
    return min(found, key=lambda n: (n.lineno, n.col_offset)) if found else None


def loop_exits(stmts: list[ast.stmt]) -> ast.AST | None:
    """A ``break`` or ``continue`` that leaves these statements (one inside a nested loop belongs to that loop)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return node
        if isinstance(node, (ast.For, ast.While)):
            stack.extend(node.orelse)  # a loop's else clause is outside the loop
            continue
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return None
