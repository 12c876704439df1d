#!/usr/bin/env python3
"""Import circles in nkilint and its rule pack.

Reads every module of ``nkilint/`` and ``rules/`` (installed as
``nkilint_rules``) with ``ast`` and builds the graph of imports between
them, counting imports inside functions too (a deferred import hides a
circle, it does not remove it) but not those under ``if TYPE_CHECKING:``.
Prints each circle (a strongly connected component of more than one
module) and exits 1 if there is any.

    python scripts/import_cycles.py [REPO_ROOT]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import networkx as nx

PACKAGES = {"nkilint": "nkilint", "nkilint_rules": "rules"}


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    out: dict[str, tuple[Path, bool]] = {}
    for package, folder in PACKAGES.items():
        base = root / folder
        for path in sorted(base.rglob("*.py")):
            parts = list(path.relative_to(base).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            out[".".join([package, *parts])] = (path, is_package)
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def _resolve(current: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def import_graph(root: Path) -> nx.DiGraph:
    mods = modules(root)
    graph = nx.DiGraph()
    graph.add_nodes_from(mods)
    for name, (path, is_package) in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node.level, node.module)
                # `from pkg import mod` depends on pkg.mod, not on pkg's __init__.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            for target in targets:
                # The deepest known module the import names.
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph.add_edge(name, target)
    return graph


def circles(root: Path) -> list[list[str]]:
    graph = import_graph(root)
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    found = circles(root)
    for circle in found:
        print("circle: " + " -> ".join(circle))
    if not found:
        print("no import circles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
