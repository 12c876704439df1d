"""Which files a run looks at: paths given, directories walked, excludes."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .paths import display_path


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


def discover(
    paths: Iterable[str], root: Path, excludes: tuple[str, ...], force_exclude: bool = False
) -> tuple[list[InputFile], list[str]]:
    """Files to check, and errors for paths that do not exist.

    Directories are walked for ``*.py`` and ``*.pyi``; explicitly named files
    are checked whatever their suffix unless ``force_exclude`` applies an
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
            for dirpath, dirnames, filenames in os.walk(abspath):
                current = Path(dirpath)
                dirnames[:] = sorted(
                    d for d in dirnames if not is_excluded(current / d, root, excludes)
                )
                for name in sorted(filenames):
                    if not (name.endswith(".py") or name.endswith(".pyi")):
                        continue
                    file_path = current / name
                    if is_excluded(file_path, root, excludes):
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
