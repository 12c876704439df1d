"""The project root and the paths reports show.

Every report names files relative to the project root, whatever the
working directory: a CI step run from a subdirectory then uploads SARIF
whose URIs exist in the repository, and a baseline written from one
directory matches a run from another. The root is the directory of the
configuration file, else the enclosing git checkout, else the working
directory.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable


def _absolute(path: Path) -> Path:
    """An absolute, normalised path (``..`` folded) without resolving symlinks."""
    return Path(os.path.normpath(path.absolute()))


def common_start(paths: Iterable[str], cwd: Path | None = None) -> Path:
    """The directory the checked paths share ('-' and nothing: the working directory)."""
    cwd = cwd or Path.cwd()
    real = [str(_absolute(cwd / p)) for p in paths if p != "-"]
    if not real:
        return cwd
    try:
        return Path(os.path.commonpath(real))
    except ValueError:  # different drives
        return cwd


def git_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git`` (a
    directory, or the file a worktree or submodule has); never runs git."""
    start = _absolute(start)
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def project_root(start: Path, cwd: Path | None = None) -> Path:
    """Without a configuration file: the git checkout around ``start`` (or
    around the working directory), else the working directory."""
    cwd = cwd or Path.cwd()
    found = git_root(start) or git_root(cwd)
    return (found or cwd).resolve()


def display_path(path: Path | str, root: Path) -> str:
    """``path`` relative to ``root`` in POSIX form; a path outside the root
    stays absolute (a report must not invent a location)."""
    path = Path(path)
    absolute = _absolute(path)
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        pass
    try:
        return absolute.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop
        return absolute.as_posix()


def on_disk(display: str, root: Path) -> Path:
    """The file a root-relative display path names."""
    path = Path(display)
    return path if path.is_absolute() else root / path
