"""Kernel roots across the project: which decorated kernels other kernels call.

An ``@nki.jit`` function is a *launched* kernel when host code launches it
(a call outside device code, ``k[grid](...)``, or passing it to a launcher
such as ``nki.simulate(k)`` / ``nki.baremetal(k)`` / ``nki.jit(k)``), a
*sub-kernel* when only device code of another function calls it (its
parameters are then whatever the caller passes: SBUF tiles as often as HBM
tensors), and *uncalled* when nothing in the scanned tree refers to it (a
library entry point: launched by code outside the tree).

The index is built from the syntax of every Python file under the scan
roots (parsed, never imported), once per project, in a fixed order, so the
answer for a file never depends on which files were checked before it.
Only files that mention a kernel's name are parsed for calls.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .. import astwalk
from ..safefs import read_bytes_capped
from ..source import SourceError, decode_source
from .kernels import LAUNCHERS, ROOT_DECORATORS, module_aliases, module_kernels, resolve_decorator
from .project import MAX_MODULE_BYTES

if TYPE_CHECKING:  # pragma: no cover
    from .project import ModuleInfo, Project

# Directories never scanned (virtual environments, caches, VCS metadata).
SKIP_DIRS = {".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "env", "__pycache__", "node_modules",
             "build", "dist", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".nkilint_cache", "site-packages"}
MAX_SCANNED_FILES = 20_000

LAUNCHED, SUBKERNEL, UNCALLED = "launched", "subkernel", "uncalled"


@dataclass(frozen=True)
class KernelRef:
    """A reference to a decorated kernel from somewhere in the tree."""

    file: str
    line: int
    caller: str | None  # the device function that calls it (None: host code)
    how: str  # "call", "grid launch", "launcher nki.simulate", ...


@dataclass
class KernelInfo:
    module: Path
    name: str
    refs: list[KernelRef] = field(default_factory=list)

    @property
    def status(self) -> str:
        if any(r.caller is None for r in self.refs):
            return LAUNCHED
        if self.refs:
            return SUBKERNEL
        return UNCALLED


def python_files(roots: Iterable[Path], excludes: Iterable[str] = ()) -> list[Path]:
    """Python files under the roots, sorted, skipping tool and VCS folders
    and paths matching the exclude globs."""
    patterns = tuple(excludes)
    out: set[Path] = set()
    for root in roots:
        root = root.resolve()
        if root.is_file():
            if root.suffix == ".py":
                out.add(root)
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                                 and not _excluded(Path(dirpath) / d, patterns))
            for name in filenames:
                if name.endswith(".py"):
                    path = Path(dirpath) / name
                    if not _excluded(path, patterns):
                        out.add(path)
            if len(out) > MAX_SCANNED_FILES:
                break
    return sorted(out)[:MAX_SCANNED_FILES]


def _excluded(path: Path, patterns: tuple[str, ...]) -> bool:
    """A glob matches the path or any single component of it (as the
    command line's excludes do: 'build' excludes every build/ folder)."""
    text = path.as_posix()
    return any(fnmatch(text, p) or fnmatch(text, f"*/{p}") or any(fnmatch(part, p) for part in path.parts)
               for p in patterns)


class KernelCallIndex:
    """Which decorated kernels of the project are launched, called from
    other kernels, or not referred to at all."""

    def __init__(self, project: "Project", roots: Iterable[Path], excludes: Iterable[str] = ()) -> None:
        self.project = project
        self.files = python_files(roots, excludes)
        self.kernels: dict[tuple[Path, str], KernelInfo] = {}
        texts: dict[Path, str] = {}
        for path in self.files:
            text = self._text(path)
            if text is None:
                continue
            texts[path] = text
            if "jit" in text or "nki" in text:
                self._collect_kernels(path)
        if not self.kernels:
            return
        names = sorted({name for _, name in self.kernels})
        mention = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in names) + r")\b")
        for path in self.files:
            text = texts.get(path)
            if text is not None and mention.search(text):
                self._collect_refs(path)

    # -- queries ----------------------------------------------------------------
    def info(self, module: Path, name: str) -> KernelInfo | None:
        try:
            key = (module.resolve(), name)
        except OSError:
            return None
        return self.kernels.get(key)

    def status(self, module: Path, name: str) -> str | None:
        """launched / subkernel / uncalled for a decorated kernel of the scanned
        tree (None when the function is not one of them)."""
        info = self.info(module, name)
        return info.status if info is not None else None

    def host_launch_files(self, module: Path, name: str) -> list[Path]:
        """Other files of the tree whose host code launches the kernel
        ``name`` of ``module`` (sorted: the same answer in every worker)."""
        info = self.info(module, name)
        if info is None:
            return []
        own = info.module
        return sorted({Path(r.file) for r in info.refs if r.caller is None and Path(r.file) != own})

    def names_in(self, info: "ModuleInfo") -> dict[str, tuple[Path, str]]:
        """The names (and ``module.attr`` chains) under which ``info`` sees
        decorated kernels of the tree."""
        return self._kernel_names_visible_in(info)

    # -- building -----------------------------------------------------------------
    def _text(self, path: Path) -> str | None:
        """The file's text, without parsing it (most files mention no kernel)."""
        try:
            return decode_source(read_bytes_capped(path, MAX_MODULE_BYTES))
        except (OSError, SourceError):
            return None

    def _module(self, path: Path) -> "ModuleInfo | None":
        return self.project.module_at(path)

    def _collect_kernels(self, path: Path) -> None:
        info = self._module(path)
        if info is None:
            return
        aliases = module_aliases(info.tree, info.bindings)
        for stmt in info.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for deco in stmt.decorator_list:
                    if resolve_decorator(deco, info.bindings, aliases) in ROOT_DECORATORS:
                        self.kernels[(info.path, stmt.name)] = KernelInfo(info.path, stmt.name)
                        break

    def _collect_refs(self, path: Path) -> None:
        info = self._module(path)
        if info is None:
            return
        names = self._kernel_names_visible_in(info)
        if not names:
            return
        device = _device_functions(info)
        aliases = module_aliases(info.tree, info.bindings)
        parents: dict[int, ast.AST] = info.source.parents
        for node in info.source.nodes:
            target = _referenced_kernel(node, names)
            if target is None:
                continue
            key, expr = target
            caller = _enclosing_function(node, parents)
            parent = parents.get(id(expr))
            how = None
            if isinstance(parent, ast.Call) and parent.func is expr:
                how = "call"
            elif isinstance(parent, ast.Subscript) and parent.value is expr:
                grand = parents.get(id(parent))
                if isinstance(grand, ast.Call) and grand.func is parent:
                    how = "grid launch"
                    caller = None  # k[grid](...) launches from the host in every release
            elif isinstance(parent, ast.Call) and expr in parent.args:
                launcher = resolve_decorator(parent.func, info.bindings, aliases)
                if launcher in LAUNCHERS:
                    how = f"launcher {launcher}"
                    caller = None
                else:
                    # Handed to a wrapper (a benchmark harness, functools.partial):
                    # from host code the wrapper launches it.
                    how = "passed to a function"
            if how is None:
                continue
            if key[0] == info.path and caller is not None and caller.name == key[1]:
                continue  # recursion inside the kernel itself
            in_device = caller is not None and id(caller) in device
            self.kernels[key].refs.append(KernelRef(str(info.path), getattr(node, "lineno", 0),
                                                    caller.name if in_device else None, how))

    def _kernel_names_visible_in(self, info: "ModuleInfo") -> dict[str, tuple[Path, str]]:
        """Local names (and ``module.attr`` chains) in ``info`` that refer to a
        decorated kernel of the scanned tree."""
        out: dict[str, tuple[Path, str]] = {}
        for (module, name) in self.kernels:
            if module == info.path:
                out[name] = (module, name)
        for stmt in info.source.nodes:  # the tree in ast.walk order, walked once per module
            if isinstance(stmt, ast.ImportFrom):
                target = self.project.find_module(info, stmt.level, stmt.module or "")
                for alias in stmt.names:
                    local = alias.asname or alias.name
                    if target is not None and (target.path, alias.name) in self.kernels:
                        out[local] = (target.path, alias.name)
                    else:
                        sub = self.project.is_package_module(info, stmt.level, stmt.module or "", alias.name)
                        if sub is not None:
                            for (module, name) in self.kernels:
                                if module == sub.path:
                                    out[f"{local}.{name}"] = (module, name)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    target = self.project.find_module(info, 0, alias.name)
                    if target is None:
                        continue
                    local = alias.asname or alias.name
                    for (module, name) in self.kernels:
                        if module == target.path:
                            out[f"{local}.{name}"] = (module, name)
        return out


def _dotted(expr: ast.AST) -> str | None:
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return ".".join(reversed(parts))
    return None


def _referenced_kernel(node: ast.AST, names: dict[str, tuple[Path, str]]) -> tuple[tuple[Path, str], ast.AST] | None:
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
        return names[node.id], node
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        dotted = _dotted(node)
        if dotted is not None and dotted in names:
            return names[dotted], node
    return None


def _enclosing_function(node: ast.AST, parents: dict[int, ast.AST]) -> ast.FunctionDef | None:
    cur = parents.get(id(node))
    while cur is not None:
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return cur
        cur = parents.get(id(cur))
    return None


def device_functions(info: "ModuleInfo") -> set[int]:
    """Ids of a module's device functions by their own syntax (see ``_device_functions``)."""
    return _device_functions(info)


def _device_functions(info: "ModuleInfo") -> set[int]:
    """Functions of a module that are device code by their own syntax
    (decorated or launched kernels and functions that call NKI device APIs),
    and the functions nested in them."""
    out: set[int] = set()
    for cand in module_kernels(info):
        for sub in astwalk.walk(cand.node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.add(id(sub))
    return out


def kernel_calls(project: "Project") -> KernelCallIndex | None:
    """The project's index (built once per project); None when the project
    has no scan roots (each file is then decided on its own)."""
    if not project.scan_roots:
        return None
    index = project.indexes.get("kernel_calls")
    if index is None:
        with project.unrecorded():  # the whole tree, not this file's reads
            index = project.indexes["kernel_calls"] = KernelCallIndex(project, project.scan_roots, project.excludes)
    return index  # type: ignore[return-value]


__all__ = ["KernelCallIndex", "KernelInfo", "kernel_calls", "KernelRef", "LAUNCHED", "SUBKERNEL", "UNCALLED", "python_files"]
