"""Names a function reads that nothing binds (analysis ``UnboundNames``).

Python resolves a free name through the enclosing functions, then the
module, then the builtins; a name none of them binds raises ``NameError``
when the line runs (the legacy tracer runs the kernel body) or when the
kernel is parsed (the NKI 0.2+ frontend resolves every name). The usual
cause in kernels is a missing import (``np`` used in a kernel whose module
imports only ``nki``) or a helper's local used in the caller.

The answer is a must-fact: a module whose namespace can grow in ways the
syntax does not show (``from x import *``, ``globals()``, ``exec``,
``setattr`` on a module, ``vars()``, ``__getattr__``) has no unbound names,
and neither has a function with a ``match`` statement or a ``try`` that
catches ``NameError``.
"""

from __future__ import annotations

import ast
import builtins
from typing import TYPE_CHECKING

from .. import astwalk
from .analysis import Analysis
from .scopes import Scopes

if TYPE_CHECKING:  # pragma: no cover
    from .semantic import FileModel

# Builtins, module attributes every module has, and names that interactive
# environments inject.
KNOWN = frozenset(dir(builtins)) | {
    "__file__", "__name__", "__doc__", "__spec__", "__loader__", "__package__", "__path__", "__builtins__",
    "__debug__", "__class__", "__annotations__", "__dict__", "__cached__", "get_ipython", "display",
    "reveal_type", "WindowsError",
}
_DYNAMIC_CALLS = frozenset({"globals", "exec", "eval", "vars", "locals", "setattr", "__import__"})


def _module_names(tree: ast.Module, nodes: list[ast.AST]) -> set[str]:
    """Every name the module binds at its top level, and every name any
    function declares ``global`` (it may bind it at module level). ``nodes``:
    every node of ``tree`` (SourceFile.nodes, walked once per file)."""
    out: set[str] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.add(node.rest)
        stack.extend(astwalk.child_nodes(node))
    for node in nodes:
        if isinstance(node, ast.Global):
            out.update(node.names)
    return out


def _dynamic_namespace(tree: ast.Module, nodes: list[ast.AST]) -> bool:
    """The module's names may be bound in ways the syntax does not show."""
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DYNAMIC_CALLS:
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__getattr__" and \
                node in tree.body:
            return True
    return False


def _catches_name_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(isinstance(k, ast.Name) and k.id in ("NameError", "Exception", "BaseException")
                                       for k in kinds)


def catches_name_error(handler: ast.ExceptHandler) -> bool:
    """The handler catches ``NameError`` (bare, ``Exception``, ``BaseException`` too)."""
    return _catches_name_error(handler)


class UnboundNames(Analysis):
    """Free names of the checked file's functions that nothing binds (a per-file analysis)."""

    def __init__(self, model: "FileModel") -> None:
        super().__init__(model)
        self.scopes = model.analysis(Scopes)
        tree = model.module.tree
        nodes = model.module.source.nodes
        self.dynamic = _dynamic_namespace(tree, nodes)
        self.module_names = frozenset(_module_names(tree, nodes)) if not self.dynamic else frozenset()

    def unbound(self, fn: ast.AST) -> list[ast.Name]:
        """The first read of each name in ``fn`` (its own body, not nested
        functions) that no enclosing function, the module or the builtins
        bind, in source order."""
        if self.dynamic:
            return []
        for node in self.scopes.file.subtree(fn):
            if isinstance(node, ast.Match):
                return []
            if isinstance(node, ast.ExceptHandler) and _catches_name_error(node):
                return []
        scope = self.scopes.of(fn)
        out: list[ast.Name] = []
        for name, loads in scope.loads.items():
            if name in KNOWN or name in self.module_names or scope.owner(name) is not None:
                continue
            if name in scope.declared_outer:
                continue
            real = [n for n in loads if hasattr(n, "lineno")]
            if real:
                out.append(min(real, key=lambda n: (n.lineno, n.col_offset)))
        out.sort(key=lambda n: (n.lineno, n.col_offset))
        return out


__all__ = ["KNOWN", "UnboundNames", "catches_name_error"]
