"""Launches of a kernel from other files of the project.

A kernel module rarely launches its own kernels; the project's tests do::

    # tests/test_k.py
    from pkg.k import kernel
    def test_kernel():
        kernel(np.zeros((128, 512), np.float32))

The project-wide kernel index (``callgraph.KernelCallIndex``) already knows
which files' host code refers to a kernel; this module reads the launches
in those files (``launches.find_launches``, with the names under which each
file imports the kernel), so that the kernel is specialized to them as it
is to a launch in its own file. Files are visited in sorted path order and
launches in source order, so the specializations of a kernel never depend
on which files were checked before it or on the number of workers.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import TYPE_CHECKING

from .callgraph import device_functions, kernel_calls
from .launches import Launch, find_launches

if TYPE_CHECKING:  # pragma: no cover
    from .project import ModuleInfo

# At most this many other files are read for the launches of one kernel.
MAX_FILES = 16


def project_launches(module: "ModuleInfo", kernels: list[ast.FunctionDef]) -> list[Launch]:
    """Launches of ``module``'s top-level ``kernels`` in the host code of
    other project files, each naming its file (relative to the project root);
    empty when the project has no scan roots."""
    index = kernel_calls(module.project)
    if index is None or not kernels:
        return []
    by_name = {fn.name: fn for fn in kernels}
    own = _resolved(module.path)
    files: set[Path] = set()
    for fn in kernels:
        files.update(index.host_launch_files(module.path, fn.name))
    out: list[Launch] = []
    for path in sorted(files)[:MAX_FILES]:
        info = module.project.module_at(path)
        if info is None:
            continue
        names = {local: by_name[name] for local, (where, name) in index.names_in(info).items()
                 if where == own and name in by_name}
        if not names:
            continue
        out.extend(find_launches(info.tree, info.bindings, list(names.values()), device_functions(info),
                                 info.source.parents, info.source.nodes, names=names,
                                 file=_display(module.project.root, info.path)))
    return out


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path


def _display(root: Path, path: Path) -> str:
    """The file relative to the project root (POSIX separators), else its name."""
    try:
        rel = os.path.relpath(_resolved(path), _resolved(root))
    except ValueError:  # another drive
        return path.name
    return path.name if rel.startswith("..") else Path(rel).as_posix()


__all__ = ["MAX_FILES", "project_launches"]
