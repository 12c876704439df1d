"""A set of files analysed together, so imports between them resolve.

Modules are found on disk from the project root and from the package roots
of the files being checked (read and parsed, never imported), once per
process. When pre-commit passes only some files, their imports still
resolve from the tree on disk.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..safefs import read_bytes_capped
from ..source import SourceError, SourceFile, decode_source
from .bindings import Bindings, collect_bindings

MAX_MODULE_BYTES = 2 * 1024 * 1024


class ModuleInfo:
    """One parsed module of the project."""

    def __init__(self, path: Path, source: SourceFile, tree: ast.Module, project: "Project") -> None:
        self.path = path
        self.source = source
        self.tree = tree
        self.project = project
        self.bindings: Bindings = collect_bindings(tree)
        self.env: dict | None = None  # module-level abstract values (interp fills it)
        self.env_state = "new"  # new, running, done
        self.functions: dict[str, ast.FunctionDef] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[stmt.name] = stmt
            elif isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = stmt

    @property
    def display(self) -> str:
        return self.source.display_path

    @property
    def package_dir(self) -> Path:
        return self.path.parent

    def __repr__(self) -> str:
        return f"ModuleInfo({self.path})"


class Project:
    def __init__(self, root: Path, scan_roots: tuple[Path, ...] = (), excludes: tuple[str, ...] = ()) -> None:
        self.root = root.resolve()
        self._sources: dict[Path, SourceFile] = {}
        self._modules: dict[Path, ModuleInfo | None] = {}
        self._roots: list[Path] = [self.root, self.root / "src"]
        # Results of pure helpers called with constant arguments (div_ceil(512, 128)).
        self.pure_memo: dict[tuple, object] = {}
        # Where to look for the callers of decorated kernels (the linted tree);
        # empty: decide within each file only.
        self.scan_roots = tuple(Path(r).resolve() for r in scan_roots)
        self.excludes = tuple(excludes)
        # Project-wide indexes built by the modules that own them, once
        # (callgraph.kernel_calls).
        self.indexes: dict[str, object] = {}

    # -- files ----------------------------------------------------------------
    def register_source(self, path: Path, source: SourceFile) -> None:
        """A file being checked: reuse its parsed tree for imports."""
        try:
            key = path.resolve()
        except OSError:  # pragma: no cover
            return
        previous = self._sources.get(key)
        self._sources[key] = source
        if previous is not None and previous is not source and previous.text != source.text:
            # New text for this file (a fix round, an editor buffer): drop the
            # module parsed from the old text, and every module's evaluated
            # values, which may have imported from it.
            self._modules.pop(key, None)
            for info in self._modules.values():
                if info is not None:
                    info.env = None
                    info.env_state = "new"
            self.pure_memo.clear()
        elif key in self._modules and self._modules[key] is not None and self._modules[key].source is not source:
            # Same text, new SourceFile: rules walk this source's tree, so the
            # model must use the same tree (node identities must match).
            self._modules.pop(key, None)
        top = self._package_root(key)
        if top is not None and top not in self._roots:
            self._roots.append(top)

    @staticmethod
    def _package_root(path: Path) -> Path | None:
        """The directory on sys.path for a file inside packages."""
        directory = path.parent
        if not (directory / "__init__.py").exists():
            return directory
        while (directory / "__init__.py").exists() and directory.parent != directory:
            directory = directory.parent
        return directory

    def module_at(self, path: Path, register_root: bool = True) -> ModuleInfo | None:
        """Parse (once) the module stored at ``path``. ``register_root``: add the
        module's package root to the import search roots."""
        try:
            key = path.resolve()
        except OSError:
            return None
        if key in self._modules:
            return self._modules[key]
        self._modules[key] = None  # guards against cycles while parsing
        source = self._sources.get(key)
        if source is None:
            try:
                text = decode_source(read_bytes_capped(key, MAX_MODULE_BYTES))
            except (OSError, SourceError):
                return None
            source = SourceFile(str(key), text, str(key))
        try:
            tree = source.tree
        except SourceError:
            return None
        info = ModuleInfo(key, source, tree, self)
        self._modules[key] = info
        if register_root:
            top = self._package_root(key)
            if top is not None and top not in self._roots:
                self._roots.append(top)
        return info

    # -- import resolution -------------------------------------------------------
    def _candidates(self, base: Path, parts: list[str]) -> list[Path]:
        target = base.joinpath(*parts) if parts else base
        return [target.with_suffix(".py") if parts else base / "__init__.py", target / "__init__.py"]

    def find_module(self, importer: ModuleInfo | None, level: int, module: str) -> ModuleInfo | None:
        """The project module an import names (relative or absolute)."""
        parts = [p for p in module.split(".") if p] if module else []
        if level:
            if importer is None:
                return None
            base = importer.path.parent
            for _ in range(level - 1):
                base = base.parent
            for cand in self._candidates(base, parts):
                if cand.is_file():
                    return self.module_at(cand)
            return None
        if not parts:
            return None
        roots = list(self._roots)
        if importer is not None:
            top = self._package_root(importer.path)
            if top is not None and top not in roots:
                roots.insert(0, top)
        for root in roots:
            for cand in self._candidates(root, parts):
                if cand.is_file():
                    return self.module_at(cand)
        return None

    def is_package_module(self, importer: ModuleInfo | None, level: int, module: str, name: str) -> ModuleInfo | None:
        """``from pkg import sub`` where ``sub`` is a submodule."""
        full = f"{module}.{name}" if module else name
        return self.find_module(importer, level, full)
