"""A set of files analysed together, so imports between them resolve.

Modules are found on disk from the project root and from the package roots
of the files being checked (read and parsed, never imported), once per
process. When pre-commit passes only some files, their imports still
resolve from the tree on disk.
"""

from __future__ import annotations

import ast
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..safefs import read_bytes_capped
from ..source import SourceError, SourceFile, decode_source
from .bindings import Bindings, collect_bindings

MAX_MODULE_BYTES = 2 * 1024 * 1024


@dataclass
class ReadLog:
    """The project files one analysis read (``read``) and the import
    candidates it looked for and did not find (``absent``): what a cached
    result must be re-validated against."""

    read: set[Path] = field(default_factory=set)
    absent: set[Path] = field(default_factory=set)

    def update(self, other: "ReadLog") -> None:
        self.read |= other.read
        self.absent |= other.absent


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
        # Recording of the files an analysis reads (the result cache asks).
        self._log: ReadLog | None = None
        self._register_roots = True
        self._static_imports: dict[Path, ReadLog] = {}
        self._parsed_for_closure: set[Path] = set()

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
            self._static_imports.clear()
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
        if self._log is not None:
            self._log.read.add(key)
        if key in self._modules:
            if key in self._parsed_for_closure and register_root and self._register_roots:
                # First parsed by a dependency closure: register its root now,
                # as this call would have had it parsed the module itself.
                self._parsed_for_closure.discard(key)
                top = self._package_root(key)
                if top is not None and top not in self._roots:
                    self._roots.append(top)
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
        if register_root and not self._register_roots:
            self._parsed_for_closure.add(key)
        if register_root and self._register_roots:
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
                self._note_absent(cand)
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
                self._note_absent(cand)
        return None

    def is_package_module(self, importer: ModuleInfo | None, level: int, module: str, name: str) -> ModuleInfo | None:
        """``from pkg import sub`` where ``sub`` is a submodule."""
        full = f"{module}.{name}" if module else name
        return self.find_module(importer, level, full)

    # -- what an analysis read (for the result cache) ------------------------------
    def _note_absent(self, path: Path) -> None:
        if self._log is not None:
            self._log.absent.add(path)

    @contextmanager
    def recording(self) -> Iterator[ReadLog]:
        """Record every module read and every import candidate found missing
        inside the block (nested recordings each see their own reads)."""
        outer, log = self._log, ReadLog()
        self._log = log
        try:
            yield log
        finally:
            self._log = outer
            if outer is not None:
                outer.update(log)

    @contextmanager
    def unrecorded(self) -> Iterator[None]:
        """Reads that belong to no single file (the project-wide kernel index)."""
        outer, self._log = self._log, None
        try:
            yield
        finally:
            self._log = outer

    def dependencies(self, path: Path, log: ReadLog) -> ReadLog:
        """Everything the analysis of ``path`` may have read: what ``log``
        recorded plus the static import closure of those modules (module
        values computed for an earlier file are reused without re-reading
        their imports, so the closure is computed from the syntax). Finding
        the closure never widens import resolution for later files."""
        out = ReadLog(set(log.read), set(log.absent))
        try:
            start = path.resolve()
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop
            return out
        todo, seen = [start, *out.read], set()
        while todo:
            key = todo.pop()
            if key in seen:
                continue
            seen.add(key)
            imports = self._imports_of(key)
            if imports is None:
                continue
            out.update(imports)
            todo.extend(imports.read - seen)
        out.read.discard(start)
        return out

    def _imports_of(self, key: Path) -> ReadLog | None:
        cached = self._static_imports.get(key)
        if cached is not None:
            return cached
        registering, self._register_roots = self._register_roots, False
        outer, self._log = self._log, ReadLog()
        try:
            info = self._modules[key] if key in self._modules else self.module_at(key, register_root=False)
            if info is None:
                return None
            for node in ast.walk(info.tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        self.find_module(info, 0, alias.name)
                elif isinstance(node, ast.ImportFrom):
                    self.find_module(info, node.level, node.module or "")
                    for alias in node.names:
                        if alias.name != "*":
                            self.is_package_module(info, node.level, node.module or "", alias.name)
            log = self._log
        finally:
            self._log, self._register_roots = outer, registering
        self._static_imports[key] = log
        return log
