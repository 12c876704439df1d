"""Nested ``[tool.nkilint]`` tables: per-directory configuration.

As in ruff's hierarchical configuration, each file is checked with the
nearest ``pyproject.toml`` with a ``[tool.nkilint]`` table at or above its
directory, up to the project root: a nested table *replaces* the root's
for the files under its directory (keys it does not set take their
defaults; without ``sdk`` / ``nki-version`` the release its own pins name,
else the newest), so a file gets the same settings whether the run starts
at the root or in the subdirectory. Its ``[[tool.nkilint.overrides]]`` and
``per-file-ignores`` globs are relative to its directory. The command line
still applies over every table.

Keys that configure the run rather than a file (which files are walked,
the exit code, the hardware numbers, the time budget) keep the root's
values; a nested table that sets one gets a warning saying it is ignored.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from .config import ConfigError, Settings, apply_cli, cli_table_of, config_origin, parse_table, read_table
from .rule import RuleSet
from .safefs import read_text_capped
from .selection import SelectorError, resolve_enabled, validate_override_selectors, validate_selectors

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Settings of the whole run: a nested table that sets them is told so.
RUN_KEYS = ("exclude", "extend-exclude", "respect-gitignore", "fail-level", "hardware", "file-time-limit")
_RUN_FIELDS = ("exclude", "extend_exclude", "respect_gitignore", "fail_level", "hardware", "file_time_limit")


@dataclass(frozen=True)
class Scope:
    """The files under ``directory`` (relative to the project root, POSIX)
    and the settings of the nested configuration that covers them."""

    directory: str
    config_file: Path
    settings: Settings
    enabled: tuple[str, ...]  # sorted: the repr is part of the cache key
    digest: str  # sha256 of the configuration file's text
    ignored: tuple[str, ...] = ()  # run-wide keys the table sets (not applied)

    def covers(self, rel: str) -> bool:
        return rel.startswith(self.directory + "/")


def _has_table(path: Path) -> bool:
    try:
        text = read_text_capped(path)
    except (OSError, UnicodeDecodeError):
        return False
    try:
        tool = tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError:
        # A broken file that mentions us is reported when it is loaded.
        return "[tool.nkilint" in text
    return isinstance(tool, dict) and "nkilint" in tool


def nested_config(root: Path, directory: Path, seen: dict[Path, Path | None] | None = None) -> Path | None:
    """The nearest pyproject.toml with [tool.nkilint] in ``directory`` or
    above it, strictly below ``root`` (None: the root's configuration)."""
    seen = {} if seen is None else seen
    root = root.resolve()
    try:
        directory = directory.resolve()
        directory.relative_to(root)
    except (ValueError, OSError, RuntimeError):
        return None  # outside the project: the run's settings
    walked = []
    found = None
    while directory != root:
        if directory in seen:
            found = seen[directory]
            break
        walked.append(directory)
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and _has_table(candidate):
            found = candidate
            break
        directory = directory.parent
    for d in walked:
        seen[d] = found
    return found


def load_scope(run: Settings, path: Path, ruleset: RuleSet) -> Scope:
    """The scope of a nested configuration file; ConfigError naming the file
    for a bad table or a selector that matches no rule."""
    table, text = read_table(path)
    directory = path.parent.resolve()
    rel = directory.relative_to(run.root.resolve()).as_posix()
    where = f"{path} [tool.nkilint]"
    ignored = tuple(key for key in RUN_KEYS if key in table)
    own = {k: v for k, v in table.items() if k not in RUN_KEYS}
    values = parse_table(own, where, directory, origin=config_origin(path, text, own))
    # Validate the run-wide keys too: a typo is an error wherever it is.
    parse_table({k: table[k] for k in ignored}, where, directory)
    base = Settings(root=run.root, config_file=path, scope_dir=rel, hierarchical=False,
                    **{f: getattr(run, f) for f in _RUN_FIELDS}, **values)
    settings = apply_cli(base, cli_table_of(run))
    if not settings.nki_version_explicit:
        from .pins import target_from_pins

        pinned = target_from_pins(directory, directory, cwd=run.root)
        if pinned is not None:
            settings = settings.merged(release=pinned[0], target_origin=pinned[1])
    try:
        select = validate_selectors(settings.select, ruleset, f"{where}: select") if settings.select is not None else None
        extend = validate_selectors(settings.extend_select, ruleset, f"{where}: extend-select")
        ignore = validate_selectors(settings.ignore, ruleset, f"{where}: ignore")
        for glob, selectors in settings.per_file_ignores:
            validate_selectors(selectors, ruleset, f"{where}: per-file-ignores[{glob!r}]")
        validate_override_selectors(settings, ruleset)
    except SelectorError as exc:
        raise ConfigError(str(exc)) from None
    enabled = resolve_enabled(ruleset, select, extend, ignore)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return Scope(rel, path, settings, tuple(sorted(enabled)), digest, ignored)


def resolve_scopes(run: Settings, directories: Iterable[Path], ruleset: RuleSet) -> tuple[Scope, ...]:
    """The nested configurations that cover files in ``directories``, deepest
    first (a file takes the first that covers it); the same whatever the
    order of the directories."""
    if not run.hierarchical:
        return ()
    seen: dict[Path, Path | None] = {}
    configs = {found for d in directories if (found := nested_config(run.root, d, seen)) is not None}
    scopes = [load_scope(run, path, ruleset) for path in configs]
    return tuple(sorted(scopes, key=lambda s: (-s.directory.count("/"), s.directory)))


def scope_for(settings: Settings, rel: str) -> Scope | None:
    """The nested configuration of the file at ``rel`` (relative to the root)."""
    for scope in settings.scopes:
        if scope.covers(rel):
            return scope
    return None


def ignored_keys_messages(scopes: Iterable[Scope], root_config: Path | None) -> list[str]:
    """One warning per nested table that sets a run-wide key."""
    out = []
    for scope in scopes:
        if scope.ignored:
            keys = ", ".join(f"'{k}'" for k in scope.ignored)
            where = f"in {root_config}" if root_config is not None else "in the root pyproject.toml"
            out.append(f"{scope.config_file} [tool.nkilint]: {keys} ignored in a nested configuration: "
                       f"{'it applies' if len(scope.ignored) == 1 else 'they apply'} to the whole run; "
                       f"set {'it' if len(scope.ignored) == 1 else 'them'} {where} or on the command line")
    return out


def shadowed_overrides_messages(run: Settings, displays: Iterable[str]) -> list[str]:
    """One warning per root [[tool.nkilint.overrides]] table that matches
    files a nested configuration covers: the nested table replaces the
    root's there, so the table does not apply to them."""
    covered = [(d, scope) for d in displays if (scope := scope_for(run, d)) is not None]
    out = []
    for number, override in enumerate(run.overrides, 1):
        hit = sorted({scope.directory for d, scope in covered if override.matches(d)})
        if hit:
            dirs = ", ".join(f"{d}/" for d in hit)
            out.append(f"{override.where} matches files under {dirs}, which use {'their' if len(hit) > 1 else 'its'} "
                       f"nested configuration instead (it replaces the root's there): move the table into "
                       f"{'those' if len(hit) > 1 else 'that'} pyproject.toml, with globs relative to its directory")
    return out


def directories_of(paths: Iterable[Path]) -> set[Path]:
    return {Path(os.path.abspath(p)).parent for p in paths}
