"""The device-code map of a file: which functions run on the device.

Device code is every function the semantic model treats as a kernel or
reached from one (``FileModel.is_device_function``); everything else in the
file is host code. The map gives the device functions (all of them, and the
outermost ones, whose subtrees hold the nested ones), the device function
that owns each node (the innermost one, so messages name it), and whether a
node is device code at all.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from .analysis import Analysis
from .scopes import Scopes

if TYPE_CHECKING:  # pragma: no cover
    from .semantic import FileModel


class DeviceCode(Analysis):
    """Device functions of the checked file and the nodes they own (a per-file analysis)."""

    def __init__(self, model: "FileModel") -> None:
        super().__init__(model)
        index = model.analysis(Scopes).file
        self.index = index
        device = [
            node for node in index.nodes
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and model.is_device_function(node)
        ]
        self.functions: list[ast.FunctionDef] = device  # walk order
        # Keep the outermost device functions; nested ones are walked with them.
        device_ids = {id(f) for f in device}
        outer = [fn for fn in device if not any(id(anc) in device_ids for anc in index.ancestors(fn))]
        outer.sort(key=lambda f: f.lineno)
        self.outermost: list[ast.FunctionDef] = outer
        self._owner: dict[int, ast.FunctionDef] = {}
        for fn in outer:
            for sub in index.subtree(fn):
                self._owner.setdefault(id(sub), fn)
        # Nested device functions own their own nodes (messages name the innermost function).
        outer_ids = {id(f) for f in outer}
        for fn in sorted(device, key=lambda f: f.lineno):
            if id(fn) in outer_ids:
                continue
            for sub in index.subtree(fn):
                self._owner[id(sub)] = fn

    def contains(self, node: ast.AST) -> bool:
        """The node is inside a device function."""
        return id(node) in self._owner

    def owner(self, node: ast.AST) -> ast.FunctionDef | None:
        """The innermost device function around the node (None: host code)."""
        return self._owner.get(id(node))

    def nodes(self, fn: ast.AST) -> list[ast.AST]:
        """The nodes of a subtree (cached)."""
        return self.index.subtree(fn)

    def all_nodes(self) -> Iterator[ast.AST]:
        """Every node of device code (each outermost function's subtree)."""
        for fn in self.outermost:
            yield from self.index.subtree(fn)


__all__ = ["DeviceCode"]
