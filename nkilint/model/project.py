"""A set of files analysed together, so imports between them resolve.

Modules are found on disk from the project root (read, never imported) and
parsed once per process.
"""

from __future__ import annotations

from pathlib import Path

from ..source import SourceFile


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._sources: dict[Path, SourceFile] = {}

    def register_source(self, path: Path, source: SourceFile) -> None:
        """A file being checked: reuse its parsed tree for imports."""
        try:
            self._sources[path.resolve()] = source
        except OSError:  # pragma: no cover - unresolvable path
            pass
