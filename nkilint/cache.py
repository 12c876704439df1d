"""A content-hashed cache of per-file results.

A file's result is reused when nothing it rests on changed: its bytes, its
display path, the run's key (nkilint's version and the content of its code
and of every installed rule pack, the resolved settings with the target
release, the enabled rules, the run options) and every project file its
analysis read (sibling modules, imports of imports), with the import
candidates that did not exist still absent. A file's decorated kernels are
launched or called from elsewhere in the tree, so the files that mention
their names are part of the key too.

Entries are JSON (never pickle: a cache directory is not trusted code),
written atomically; an entry that is corrupt, of another format or of
another run key is a miss, never an error. Results of a crashed rule are
not stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from . import __version__
from .discovery import InputFile
from .engine import Checker, FileDeps, FileResult, Notification, check_files
from .findings import Edit, Finding, Fix, Level, Related, Span

FORMAT = 2
CACHE_DIR_NAME = ".nkilint_cache"
ENV_CACHE_DIR = "NKILINT_CACHE_DIR"
_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def default_cache_dir(root: Path) -> Path:
    env = os.environ.get(ENV_CACHE_DIR)
    return Path(env) if env else root / CACHE_DIR_NAME


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- the run key -------------------------------------------------------------
def _package_files(module_name: str) -> list[Path]:
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if not file:
        return []
    path = Path(file)
    if path.name != "__init__.py":
        return [path]
    return sorted(p for p in path.parent.rglob("*") if p.suffix in (".py", ".json") and p.is_file())


def code_fingerprint(checker: Checker) -> str:
    """nkilint's version and the content of nkilint and of every rule pack
    that is running (a rule edited in place invalidates its results)."""
    digest = hashlib.sha256(f"nkilint {__version__}\n".encode())
    packages = {"nkilint"} | {type(rule).__module__.split(".")[0] for rule in checker.rules}
    packages |= {cls.__module__.split(".")[0] for cls in checker.ruleset.rules.values()}
    for name in sorted(packages):
        for path in _package_files(name):
            try:
                digest.update(f"{path.name}\n".encode() + path.read_bytes())
            except OSError:
                digest.update(f"{path}: unreadable\n".encode())
    return digest.hexdigest()


def run_key(checker: Checker) -> str:
    options = checker.options
    parts = [
        f"format {FORMAT}",
        code_fingerprint(checker),
        repr(checker.settings),
        ",".join(sorted(checker.enabled)),
        ",".join(sorted(f"{r.__module__}.{r.__qualname__}" for r in options.extra_rules)),
        f"fingerprints={options.want_fingerprints}",
        "roots=" + "|".join(options.project_roots),
    ]
    return _sha("\n".join(parts).encode())


# -- (de)serialising a result --------------------------------------------------
def _span(s: Span | None) -> list[int] | None:
    return None if s is None else [s.start_line, s.start_col, s.end_line, s.end_col]


def _unspan(v) -> Span | None:
    return None if v is None else Span(*(int(x) for x in v))


def _tuples(value):
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def encode_result(result: FileResult) -> dict:
    def finding(f: Finding) -> dict:
        return {
            "rule": f.rule_id, "level": int(f.level), "message": f.message, "path": f.path, "span": _span(f.span),
            "hint": f.hint, "kernel": f.kernel, "suppressed": f.suppressed, "data": [list(kv) for kv in f.data],
            "related": [[_span(r.span), r.message, r.path] for r in f.related],
            "fix": None if f.fix is None else {
                "description": f.fix.description, "safe": f.fix.safe,
                "edits": [[_span(e.span), e.replacement] for e in f.fix.edits],
            },
        }

    def note(n: Notification) -> dict:
        return {"level": int(n.level), "message": n.message, "path": n.path, "rule": n.rule_id,
                "span": _span(n.span), "detail": n.detail}

    return {
        "path": result.path,
        "findings": [finding(f) for f in result.findings],
        "notifications": [note(n) for n in result.notifications],
        "lines": {str(k): v for k, v in result.lines.items()},
        "fingerprints": {str(k): v for k, v in result.fingerprints.items()},
    }


def decode_result(data: dict) -> FileResult:
    """The inverse of ``encode_result``; raises on anything malformed."""
    findings = []
    for f in data["findings"]:
        fix = None
        if f["fix"] is not None:
            fx = f["fix"]
            fix = Fix(str(fx["description"]), tuple(Edit(_unspan(s), str(r)) for s, r in fx["edits"]), bool(fx["safe"]))
        findings.append(Finding(
            rule_id=str(f["rule"]), level=Level(int(f["level"])), message=str(f["message"]), path=str(f["path"]),
            span=_unspan(f["span"]), hint=f["hint"], fix=fix,
            related=tuple(Related(_unspan(s), str(m), None if p is None else str(p)) for s, m, p in f["related"]),
            kernel=f["kernel"],
            suppressed=bool(f["suppressed"]), data=tuple((str(k), _tuples(v)) for k, v in f["data"]),
        ))
    notes = [Notification(Level(int(n["level"])), str(n["message"]), n["path"], n["rule"], _unspan(n["span"]), n["detail"])
             for n in data["notifications"]]
    return FileResult(
        path=str(data["path"]), findings=findings, notifications=notes,
        lines={int(k): str(v) for k, v in data["lines"].items()},
        fingerprints={int(k): str(v) for k, v in data["fingerprints"].items()},
    )


# -- the store -------------------------------------------------------------------
@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    stored: int = 0


@dataclass
class ResultCache:
    """Per-file entries under ``directory/<run key>/``."""

    directory: Path
    key: str
    scan_roots: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    stats: CacheStats = field(default_factory=CacheStats)
    _hashes: dict[str, str | None] = field(default_factory=dict, repr=False)
    _idents: dict[str, frozenset[bytes]] | None = field(default=None, repr=False)

    @classmethod
    def for_checker(cls, checker: Checker, directory: Path) -> "ResultCache":
        return cls(Path(directory), run_key(checker), checker.options.project_roots, checker.settings.all_excludes)

    # -- hashing files (once per run) ----------------------------------------------
    def file_hash(self, path: str) -> str | None:
        """sha256 of a file's bytes; None when it is not a readable file."""
        if path not in self._hashes:
            try:
                self._hashes[path] = _sha(Path(path).read_bytes()) if os.path.isfile(path) else None
            except OSError:
                self._hashes[path] = None
        return self._hashes[path]

    def _mentions(self, names: Sequence[str], own: str) -> dict[str, str | None]:
        """Files of the scanned tree whose text names one of ``names``."""
        if not names:
            return {}
        if self._idents is None:
            from .model.callgraph import python_files

            self._idents = {}
            for path in python_files([Path(r) for r in self.scan_roots], self.excludes):
                try:
                    data = path.read_bytes()
                except OSError:
                    continue
                self._hashes.setdefault(str(path), _sha(data))
                self._idents[str(path)] = frozenset(_IDENT.findall(data))
        wanted = {n.encode() for n in names}
        return {p: self.file_hash(p) for p, idents in self._idents.items() if p != own and wanted & idents}

    # -- entries ------------------------------------------------------------------------
    def _entry_path(self, item: InputFile) -> Path:
        ident = _sha(f"{item.path.absolute()}\0{item.display}".encode())[:32]
        return self.directory / self.key[:24] / f"{ident}.json"

    def lookup(self, item: InputFile) -> FileResult | None:
        own = os.path.realpath(item.path)
        content = self.file_hash(own)
        if content is None:
            return None
        try:
            entry = json.loads(self._entry_path(item).read_text(encoding="utf-8"))
            if (entry.get("format"), entry.get("key"), entry.get("content"), entry.get("display")) != (
                    FORMAT, self.key, content, item.display):
                return None
            deps = entry["deps"]
            if any(self.file_hash(p) != h for p, h in deps.items()):
                return None
            if self._mentions(entry["kernel_names"], own) != entry["mentions"]:
                return None
            result = decode_result(entry["result"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # missing, corrupt or foreign: recheck
        self.stats.hits += 1
        return result

    def store(self, item: InputFile, result: FileResult) -> None:
        if result.crashed or result.timed_out or result.deps is None:
            return
        own = os.path.realpath(item.path)
        content = self.file_hash(own)
        if content is None:
            return
        deps: FileDeps = result.deps
        entry = {
            "format": FORMAT, "key": self.key, "content": content, "display": item.display,
            "deps": {**{p: None for p in deps.absent}, **{p: self.file_hash(p) for p in deps.read}},
            "kernel_names": list(deps.kernel_names),
            "mentions": self._mentions(deps.kernel_names, own),
            "result": encode_result(result),
        }
        target = self._entry_path(item)
        try:
            _prepare(self.directory)
            target.parent.mkdir(parents=True, exist_ok=True)
            _write_atomically(target, json.dumps(entry, separators=(",", ":")))
        except OSError:
            return  # a read-only tree: run without storing
        self.stats.stored += 1


def _prepare(directory: Path) -> None:
    if (directory / ".gitignore").exists():
        return
    directory.mkdir(parents=True, exist_ok=True)
    _write_atomically(directory / ".gitignore", "# Created by nkilint automatically.\n*\n")
    _write_atomically(directory / "CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n"
                                                  "# This is a cache directory created by nkilint.\n")


def _write_atomically(target: Path, text: str) -> None:
    """Concurrent runs each write a whole file and rename it into place."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def clean(directory: Path) -> bool:
    """Delete a cache directory (only one nkilint made: it holds CACHEDIR.TAG)."""
    import shutil

    if not (directory / "CACHEDIR.TAG").is_file():
        return False
    shutil.rmtree(directory, ignore_errors=True)
    return True


# -- a run through the cache ---------------------------------------------------------
def check_files_cached(
    files: Sequence[InputFile],
    checker: Checker,
    jobs: int | None,
    cache: ResultCache | None,
    on_result: Callable[[FileResult], None] | None = None,
) -> Iterator[FileResult]:
    """``engine.check_files`` with cached results reused; input order kept."""
    if cache is None:
        for result in check_files(files, checker, jobs):
            if on_result:
                on_result(result)
            yield result
        return
    known: dict[int, FileResult] = {}
    missing: list[int] = []
    for i, item in enumerate(files):
        hit = cache.lookup(item)
        if hit is None:
            missing.append(i)
            continue
        if checker.options.keep_text:
            hit.text = _text_of(item)
            if hit.text is None:
                missing.append(i)
                continue
        hit.disk_path = str(item.path)
        known[i] = hit
        if on_result:
            on_result(hit)
    cache.stats.misses += len(missing)
    fresh = check_files([files[i] for i in missing], checker, jobs)
    position = 0
    for i in range(len(files)):
        if i in known:
            yield known.pop(i)
            continue
        result = next(fresh)
        cache.store(files[missing[position]], result)
        position += 1
        result.deps = None  # not needed past the cache
        if on_result:
            on_result(result)
        yield result


def _text_of(item: InputFile) -> str | None:
    from .source import SourceError, decode_source

    try:
        return decode_source(item.path.read_bytes())
    except (OSError, SourceError):
        return None


def cached_paths(directory: Path) -> Iterable[Path]:  # pragma: no cover - a debugging aid
    return directory.rglob("*.json")
