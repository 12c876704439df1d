"""What the server knows between requests: settings, checkers, results.

Settings come from the ``[tool.nkilint]`` at or above the workspace root
(or the document, outside it) and the nested one nearest the document (the
CLI's resolution, with the project's pins choosing the target release when
the configuration does not), and are re-read when that file changes. One
``Checker`` (and so one project of sibling modules read from disk) serves
every document under the same configuration; a change to a file on disk
drops the project so that cross-file facts are read again. Nothing here
depends on LSP: the tests drive it through the real server.
"""

from __future__ import annotations

import os
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ConfigError, Settings, find_config, load_config
from ..engine import RULE_CRASH, Checker, FileResult, RunOptions, project_scan_roots, tune_gc
from ..findings import Finding, Level, Span
from ..nested import resolve_scopes
from ..plugins import installed_rules
from ..rule import RuleSet
from ..selection import SelectorError, resolve_enabled, validate_override_selectors, validate_selectors


@dataclass
class Checked:
    """One lint of one document version."""

    version: int | None
    text: str
    result: FileResult
    checker: Checker | None
    display: str
    disk_path: str | None
    model: object | None = None  # the FileModel, computed when a hover asks


@dataclass
class _Config:
    settings: Settings
    stamp: tuple | None  # (mtime_ns, size) of the config file when read
    enabled: frozenset[str]
    checkers: dict[tuple, Checker] = field(default_factory=dict)
    scopes: dict[Path, tuple] = field(default_factory=dict)  # directory -> nested configuration
    problem: str | None = None


class Session:
    def __init__(self, workspace_root: Path | None = None) -> None:
        self.workspace_root = workspace_root
        self.ruleset: RuleSet = installed_rules()
        self._configs: dict[Path | None, _Config] = {}
        self._lock = threading.Lock()  # the model is not thread-safe: one lint at a time
        self.problems: list[str] = []  # configuration errors to show once
        tune_gc()

    # -- configuration ------------------------------------------------------------
    def reload(self) -> None:
        """Forget settings and projects (a config or watched file changed)."""
        with self._lock:
            self._configs.clear()

    def files_changed(self, paths: list[Path]) -> None:
        """Files changed on disk: configuration re-read, sibling modules re-parsed."""
        with self._lock:
            if any(p.name in ("pyproject.toml", "requirements.txt") or p.suffix in (".toml", ".txt", ".cfg")
                   for p in paths):
                self._configs.clear()
                return
            for config in self._configs.values():
                for checker in config.checkers.values():
                    checker._project = None

    def _config_for(self, path: Path | None) -> _Config:
        start = path.parent if path is not None else (self.workspace_root or Path.cwd())
        if path is not None and self.workspace_root is not None and _under(path, self.workspace_root):
            # As ``nkilint check`` run in the workspace: the configuration at
            # or above the workspace root, then the nested ones below it
            # (nkilint/nested.py, resolved per document in checker_for).
            start = self.workspace_root
        found = find_config(start)
        stamp = _stamp(found)
        config = self._configs.get(found)
        if config is not None and config.stamp == stamp:
            return config
        root = found.parent if found else (self.workspace_root or start).resolve()
        problem = None
        try:
            settings = load_config(found) if found else Settings(root=root)
            if not settings.nki_version_explicit and path is not None:
                from ..pins import target_from_pins

                pinned = target_from_pins(path.parent, found.parent.resolve() if found else None)
                if pinned is not None:
                    settings = settings.merged(release=pinned[0], target_origin=pinned[1])
            enabled = self._enabled(settings)
        except (ConfigError, SelectorError) as exc:
            problem = f"nkilint: {found}: {exc}; using the default settings"
            settings = Settings(root=root)
            enabled = self._enabled(settings)
        config = _Config(settings, stamp, enabled, problem=problem)
        if problem:
            self.problems.append(problem)
        self._configs[found] = config
        return config

    def _enabled(self, settings: Settings) -> frozenset[str]:
        """The enabled rules (the selectors validated as the CLI does)."""
        select = validate_selectors(settings.select, self.ruleset, "select") if settings.select is not None else None
        extend = validate_selectors(settings.extend_select, self.ruleset, "extend-select")
        ignore = validate_selectors(settings.ignore, self.ruleset, "ignore")
        for glob, selectors in settings.per_file_ignores:
            validate_selectors(selectors, self.ruleset, f"per-file-ignores[{glob!r}]")
        validate_override_selectors(settings, self.ruleset)
        return resolve_enabled(self.ruleset, select, extend, ignore)

    def checker_for(self, path: Path | None) -> Checker:
        config = self._config_for(path)
        settings = config.settings
        if path is not None:
            settings = self._with_scope(config, path)
        roots = project_scan_roots((str(path),), settings) if path is not None else ()
        key = (roots, settings.scopes[0].directory if settings.scopes else "")
        checker = config.checkers.get(key)
        if checker is None:
            checker = Checker(settings, self.ruleset, config.enabled, RunOptions(project_roots=roots))
            config.checkers[key] = checker
        return checker

    def _with_scope(self, config: _Config, path: Path) -> Settings:
        """The settings with the nested configuration of the document's
        directory, as the CLI resolves it; a broken one is reported once and
        the document gets the root's settings."""
        directory = path.parent
        if directory not in config.scopes:
            try:
                config.scopes[directory] = resolve_scopes(config.settings, [directory], self.ruleset)
            except ConfigError as exc:
                problem = f"nkilint: {exc}; using the root configuration"
                self.problems.append(problem)
                config.scopes[directory] = ()
        scopes = config.scopes[directory]
        return config.settings.merged(scopes=scopes) if scopes else config.settings

    # -- linting ------------------------------------------------------------------------
    def lint(self, path: Path | None, text: str, version: int | None = None, name: str = "untitled") -> Checked:
        """Findings for the document's current text. Never raises: an internal
        error becomes one error finding at the top of the file."""
        with self._lock:
            checker = None
            display = name
            try:
                checker = self.checker_for(path)
                display = _display(path, checker.settings.root) if path is not None else name
                result, ctx = checker.check_source(text, display, str(path) if path is not None else None)
            except Exception as exc:  # the server must outlive any bug
                result, ctx = _crashed(display, exc), None
            checked = Checked(version, text, result, checker, display, str(path) if path is not None else None)
            if ctx is not None:
                try:
                    checked.model = ctx.model  # the rules' model, kept for hover
                except Exception:  # the model crashed (reported as NKI003); hover has nothing to show
                    pass
            return checked

    def relint(self, checked: Checked, text: str) -> list[Finding]:
        """Findings for a candidate text (after applying fixes), same settings."""
        with self._lock:
            if checked.checker is None:
                return []
            return checked.checker.check_text(text, checked.display, checked.disk_path).findings


    def model(self, checked: Checked):
        """The semantic model of a linted text (for hover), or None."""
        with self._lock:
            if checked.model is not None or checked.checker is None:
                return checked.model
            from ..model.semantic import analyze_file
            from ..source import SourceFile

            checker = checked.checker
            source = SourceFile(checked.disk_path or checked.display, checked.text, checked.display)
            if checked.disk_path:
                checker.project.register_source(Path(checked.disk_path), source)
            try:
                source.tree  # noqa: B018 - a syntax error: no model
                profile = checker.profile_for(checked.display)
                checked.model = analyze_file(source, checker.project, profile.target, profile.settings.nki_version)
            except Exception:
                return None
            return checked.model


def _crashed(display: str, exc: Exception) -> FileResult:
    detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-6))
    message = (f"nkilint failed on this file: {type(exc).__name__}: {exc}. This is a bug in nkilint, not in "
               "your kernel")
    result = FileResult(display, crashed=True)
    result.findings.append(Finding(RULE_CRASH, Level.ERROR, message, display, Span(1, 1, 1, 2),
                                   hint="report it with the file that triggers it: " + detail.strip().splitlines()[-1]))
    return result


def _under(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def _display(path: Path, root: Path) -> str:
    try:
        return Path(os.path.relpath(path, root)).as_posix() if path.is_absolute() else path.as_posix()
    except ValueError:  # another drive
        return path.as_posix()


def _stamp(path: Path | None) -> tuple | None:
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)
