"""A set of files analysed together, so imports between them resolve.

Modules are found on disk from the project root (and its ``src/``) and
from the importing file's own package root (read and parsed, never
imported), once per process. When pre-commit passes only some files, their
imports still resolve from the tree on disk; which other files were checked
before never changes how an import resolves.
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
        # Absolute imports resolve from these and from the importer's own
        # package root, never from the roots of files checked earlier: a
        # file's results must not depend on which files the process saw
        # first (or on how files were split between worker processes).
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
        self._static_imports: dict[Path, ReadLog] = {}
        # The modules each module binds as module objects (``import pkg``,
        # ``from pkg import sub``), whose attributes reach their submodules.
        self._bound_modules: dict[Path, set[Path]] = {}
        self._package_roots: dict[Path, Path | None] = {}
        # Edits that dropped evaluated values (tests and benchmarks read it).
        self.invalidations = 0

    # -- files ----------------------------------------------------------------
    def loaded_source(self, path: Path, text: str) -> SourceFile | None:
        """The source of the module already parsed at ``path`` (an earlier
        file imported it) when its text is ``text``: checking that file then
        walks the very tree the project's values were made from, instead of
        parsing it again and rebuilding its module (bindings, values)."""
        try:
            key = path.resolve()
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop
            return None
        info = self._modules.get(key)
        if info is not None and info.source.text == text:
            return info.source
        return None

    def register_source(self, path: Path, source: SourceFile) -> None:
        """A file being checked: reuse its parsed tree for imports."""
        try:
            key = path.resolve()
        except OSError:  # pragma: no cover
            return
        previous = self._sources.get(key)
        self._sources[key] = source
        loaded = self._modules.get(key)
        if previous is not None and previous is not source and previous.text != source.text:
            # New text for this file (a fix round, an editor buffer).
            self._invalidate(key)
        elif loaded is not None and loaded.source is not source:
            if loaded.source.text != source.text:
                # Parsed from disk earlier, now an unsaved buffer: its importers
                # evaluated the disk text.
                self._invalidate(key)
            else:
                # Same text, new SourceFile: rules walk this source's tree, so
                # the model must use the same tree (node identities must match).
                self._modules.pop(key, None)

    def _invalidate(self, key: Path) -> None:
        """Drop what an edit to ``key`` made stale: its parsed module, the
        evaluated values of it and of every loaded module that imports it
        (transitively), and the pure-helper results of those modules. The
        other modules' values stay: nothing they evaluated read this file."""
        affected = self.importers_of(key)
        affected.add(key)
        self._modules.pop(key, None)
        self._static_imports.pop(key, None)  # its import statements may have changed
        self._bound_modules.pop(key, None)
        for path in affected:
            info = self._modules.get(path)
            if info is not None:
                info.env = None
                info.env_state = "new"
        # Memo keys start with the helper's module path (interp.helpers._memo_key):
        # a pure helper reads only its module's values and what that imports.
        names = {str(path) for path in affected}
        for memo_key in [k for k in self.pure_memo if k and k[0] in names]:
            del self.pure_memo[memo_key]
        self.invalidations += 1

    def importers_of(self, key: Path) -> set[Path]:
        """Evaluated modules whose values may rest on the module at ``key``:
        the modules that import it, directly or through others.

        Found from the import syntax of every module whose values were
        evaluated (``_scan_reads``), a superset of what the interpreter
        resolved: an import inside a function counts even if it never ran.
        A module never evaluated holds no values, and one that holds it as
        a module object evaluates it when an attribute is read, after the
        edit: neither needs dropping, nor links an importer to ``key``."""
        readers: dict[Path, set[Path]] = {}
        packages: list[tuple[Path, Path]] = []  # (package directory, a module binding the package)
        for path, info in list(self._modules.items()):
            if info is not None and info.env is not None and path != key:
                self._scan_reads(path, readers, packages)
        out: set[Path] = set()
        todo = [key]
        while todo:
            current = todo.pop()
            found = set(readers.get(current, ()))
            # ``import pkg`` then ``pkg.sub.f``: a submodule reached through
            # the package's attributes, which no import statement names.
            found.update(reader for directory, reader in packages if directory in current.parents)
            for reader in found - out:
                out.add(reader)
                todo.append(reader)
        out.discard(key)
        return out

    def _scan_reads(self, path: Path, readers: dict[Path, set[Path]], packages: list[tuple[Path, Path]]) -> None:
        """Record ``path`` as a reader of the modules its imports name (with
        the packages of ``import a.b.c``, see ``_imports_of``)."""
        imports = self._imports_of(path)
        if imports is None:
            return
        for dep in imports.read:
            readers.setdefault(dep, set()).add(path)
        for dep in self._bound_modules.get(path, ()):
            if dep.name == "__init__.py":
                packages.append((dep.parent, path))

    def _package_root(self, path: Path) -> Path | None:
        """The directory on sys.path for a file inside packages (once per
        directory: every import of every module asks)."""
        directory = path.parent
        if directory in self._package_roots:
            return self._package_roots[directory]
        top = self._find_package_root(directory)
        self._package_roots[directory] = top
        return top

    @staticmethod
    def _find_package_root(directory: Path) -> Path | None:
        if not (directory / "__init__.py").exists():
            return directory
        while (directory / "__init__.py").exists() and directory.parent != directory:
            directory = directory.parent
        return directory

    def module_at(self, path: Path) -> ModuleInfo | None:
        """Parse (once) the module stored at ``path``."""
        try:
            key = path.resolve()
        except OSError:
            return None
        if self._log is not None:
            self._log.read.add(key)
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
        outer, self._log = self._log, ReadLog()
        bound: set[Path] = set()
        try:
            info = self._modules[key] if key in self._modules else self.module_at(key)
            if info is None:
                return None
            for node in _import_statements(info.tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        found = self.find_module(info, 0, alias.name)
                        if alias.asname is None:
                            # ``import a.b.c`` binds ``a``: the interpreter reads
                            # a's package and reaches a.b by attribute.
                            parts = alias.name.split(".")
                            for end in range(1, len(parts)):
                                top = self.find_module(info, 0, ".".join(parts[:end]))
                                if end == 1 and top is not None:
                                    bound.add(top.path)
                            if len(parts) == 1 and found is not None:
                                bound.add(found.path)
                        elif found is not None:
                            bound.add(found.path)
                elif isinstance(node, ast.ImportFrom):
                    self.find_module(info, node.level, node.module or "")
                    for alias in node.names:
                        if alias.name != "*":
                            sub = self.is_package_module(info, node.level, node.module or "", alias.name)
                            if sub is not None:
                                bound.add(sub.path)
            log = self._log
        finally:
            self._log = outer
        self._static_imports[key] = log
        self._bound_modules[key] = bound
        return log


# Fields of a statement that hold statements: imports are statements, and no
# expression contains one, so the walk for them never enters an expression.
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _import_statements(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, at any depth (functions,
    classes, branches, handlers, match cases)."""
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        for name in _BODIES:
            children = getattr(node, name, None)
            if isinstance(children, list):
                todo.extend(reversed(children))
