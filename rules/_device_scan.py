"""The device-code map in the shape the numerics family reads (an adapter
kept while that family moves to the model API; the cuda family reads
``nkilint.model.device.DeviceCode`` and its own ``GpuNames`` analysis).

Device code is every function the semantic model treats as a kernel or
reached from one; everything else in the file is host code.
"""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.model.device import DeviceCode


class FileScan:
    """Device functions of ctx's file, their nodes and owners, and parents."""

    def __init__(self, device: DeviceCode) -> None:
        self._device = device
        self.device_functions: list[ast.FunctionDef] = device.outermost
        self.all_nodes: list[ast.AST] = device.index.nodes
        self.parents: dict[int, ast.AST] = device.index.parents

    def nodes(self, fn: ast.AST) -> list[ast.AST]:
        return self._device.nodes(fn)

    @property
    def device_nodes(self) -> Iterator[ast.AST]:
        return self._device.all_nodes()

    def in_device(self, node: ast.AST) -> bool:
        return self._device.contains(node)

    def function_of(self, node: ast.AST) -> ast.FunctionDef | None:
        return self._device.owner(node)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._device.index.parent(node)


def scan(ctx: RuleContext) -> FileScan:
    """The device-code map of ctx's file (DeviceCode is computed once per file)."""
    return FileScan(ctx.analysis(DeviceCode))


def chain_text(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain ('' for anything else)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))
