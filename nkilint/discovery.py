"""Which files a run looks at: paths given, directories walked, excludes,
and (by default) what the tree's ``.gitignore`` files ignore."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .gitignore import GitIgnore
from .paths import display_path, git_root


@dataclass(frozen=True)
class InputFile:
    path: Path  # absolute path on disk ("-" for stdin)
    display: str  # path as reported: relative to the project root (absolute outside it)
    explicit: bool  # named on the command line (not found by walking)


def _display(path: Path, root: Path) -> str:
    return display_path(path, root)


def _resolve(path: Path) -> Path:
    """``path.resolve()`` that survives symlink loops (the file is then
    reported as unreadable instead of crashing the run)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def is_excluded(path: Path, root: Path, patterns: Iterable[str]) -> bool:
    """ruff-like: a pattern matches the path relative to the root, or any
    single component of it (so 'build' excludes every build/ directory)."""
    try:
        rel = _resolve(path).relative_to(root.resolve()).as_posix()
    except ValueError:
        rel = path.as_posix()
    parts = rel.split("/")
    for pattern in patterns:
        pat = pattern.rstrip("/")
        if fnmatch.fnmatchcase(rel, pat) or fnmatch.fnmatchcase(rel, pat + "/*"):
            return True
        if "/" not in pat and any(fnmatch.fnmatchcase(part, pat) for part in parts):
            return True
    return False


def _ignore_top(directory: Path, root: Path) -> Path:
    """Where the chain of .gitignore files for a walked directory starts:
    its git checkout, else the project root when the directory is inside
    it, else the directory itself."""
    found = git_root(directory)
    if found is not None:
        return found
    resolved_root = root.resolve()
    return resolved_root if directory == resolved_root or resolved_root in directory.parents else directory


def discover(
    paths: Iterable[str],
    root: Path,
    excludes: tuple[str, ...],
    force_exclude: bool = False,
    respect_gitignore: bool = True,
) -> tuple[list[InputFile], list[str]]:
    """Files to check, and errors for paths that do not exist.

    Directories are walked for ``*.py`` and ``*.pyi``, leaving out what
    the excludes and (with ``respect_gitignore``) the .gitignore files
    ignore; explicitly named files are checked whatever their suffix and
    whether or not git ignores them, unless ``force_exclude`` applies an
    exclude to them (what pre-commit needs).
    """
    cwd = Path.cwd()
    files: list[InputFile] = []
    errors: list[str] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        abspath = (cwd / path).absolute() if not path.is_absolute() else path
        if not abspath.exists() and not abspath.is_symlink():
            errors.append(f"{raw}: no such file or directory")
            continue
        if abspath.is_dir():
            if force_exclude and is_excluded(abspath, root, excludes) and _resolve(abspath) != root.resolve():
                continue
            ignore = None
            if respect_gitignore:
                walk_dir = _resolve(abspath)
                ignore = GitIgnore(_ignore_top(walk_dir, root))
            for dirpath, dirnames, filenames in os.walk(abspath):
                current = Path(dirpath)
                # The ignore files are matched on resolved paths (the top is
                # resolved); the walk itself stays on the given spelling.
                real = _resolve(current) if ignore is not None else current
                dirnames[:] = sorted(
                    d for d in dirnames
                    if not is_excluded(current / d, root, excludes)
                    and not (ignore is not None and ignore.ignored(real / d, is_dir=True))
                )
                for name in sorted(filenames):
                    if not (name.endswith(".py") or name.endswith(".pyi")):
                        continue
                    file_path = current / name
                    if is_excluded(file_path, root, excludes):
                        continue
                    if ignore is not None and ignore.ignored(real / name, is_dir=False):
                        continue
                    key = _resolve(file_path)
                    if key in seen:
                        continue
                    seen.add(key)
                    files.append(InputFile(file_path, _display(file_path, root), explicit=False))
        else:
            if force_exclude and is_excluded(abspath, root, excludes):
                continue
            key = _resolve(abspath)
            if key in seen:
                continue
            seen.add(key)
            files.append(InputFile(abspath, _display(abspath, root), explicit=True))
    return files, errors
