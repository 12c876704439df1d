"""``[tool.nkilint]`` in pyproject.toml, and the settings of one run.

Unknown keys and bad values are errors that say what is wrong and what is
valid; nothing is silently ignored.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .deadline import DEFAULT_FILE_TIME_LIMIT
from .findings import Level
from .safefs import read_text_capped
from .releases import DEFAULT_ORIGIN, Release, ReleaseError, TargetOrigin, parse_release, release_names, release_of_nki
from .releases import LATEST_RELEASE
from .overrides import OVERRIDE_KEYS, Override, OverrideError, parse_override
from .targets import DEFAULT_TARGET, OVERRIDABLE, Target, resolve_target, target_names
from .versions import VERSION_NAMES, NkiVersion

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    """A configuration problem; the run stops with exit code 2."""


DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "__pycache__",
    "__pypackages__",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    ".eggs",
    "*.egg-info",
)

KNOWN_KEYS = {
    "select": "list of rule selectors (ids, prefixes, families, names, ALL)",
    "extend-select": "list of rule selectors added to the selection",
    "ignore": "list of rule selectors to turn off",
    "per-file-ignores": "table: glob -> list of rule selectors",
    "exclude": "list of globs; replaces the default exclusions",
    "extend-exclude": "list of globs added to the exclusions",
    "respect-gitignore": "true or false: leave out what .gitignore files ignore when walking directories",
    "target": f"one of {', '.join(target_names())}",
    "sdk": f"the Neuron SDK release to check against: {release_names()[0]} ... {release_names()[-1]} (a string)",
    "nki-version": f"one of {', '.join(VERSION_NAMES)} (the newest SDK release of that NKI version)",
    "fail-level": "note, warning or error: the lowest level that makes the exit code 1",
    "hardware": f"table of hardware overrides ({', '.join(OVERRIDABLE)})",
    "file-time-limit": "seconds of analysis per file before the rest of its rules are skipped (0: no limit)",
    "overrides": "array of tables [[tool.nkilint.overrides]]: files = [globs] and their sdk, nki-version, target, "
                 "select, extend-select, ignore",
}


@dataclass(frozen=True)
class Settings:
    """Everything that configures one run (CLI merged over pyproject)."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    target_name: str = DEFAULT_TARGET
    # The target release and its NKI version; give either (the other follows:
    # an NKI version means the newest release of it) or both when they agree.
    release: Release | None = None
    nki_version: NkiVersion | None = None
    nki_version_explicit: bool = False  # sdk or nki-version was given (CLI or config)
    target_origin: TargetOrigin = DEFAULT_ORIGIN
    fail_level: Level = Level.WARNING
    file_time_limit: float = DEFAULT_FILE_TIME_LIMIT
    hardware: tuple[tuple[str, int | float], ...] = ()
    root: Path = field(default_factory=Path.cwd)
    config_file: Path | None = None
    # [[tool.nkilint.overrides]], in order (nkilint/overrides.py).
    overrides: tuple[Override, ...] = ()
    # What the command line set, which applies to every file over the
    # overrides: "select", "extend-select", "ignore", "release", "target";
    # cli_extend_select is its own extend-select (the merged one also has
    # the configuration's).
    cli_keys: frozenset[str] = frozenset()
    cli_extend_select: tuple[str, ...] = ()
    # The command line's values as a [tool.nkilint] table (lists as tuples),
    # applied again over each nested configuration (nkilint/nested.py).
    cli_table: tuple[tuple[str, Any], ...] = ()
    # Nested [tool.nkilint] tables below the root (nkilint/nested.py): False
    # with --config or --isolated, which name the one configuration.
    hierarchical: bool = True
    # The nested configurations of the files being checked, by directory.
    scopes: tuple[Any, ...] = ()
    # For a nested configuration's settings: its directory relative to the
    # project root (POSIX); its overrides and per-file-ignores are relative to it.
    scope_dir: str = ""

    def __post_init__(self) -> None:
        release, version = self.release, self.nki_version
        if release is None:
            release = release_of_nki(version) if version is not None else LATEST_RELEASE
        if version is None:
            version = release.nki
        if release.nki != version:
            raise ValueError(f"SDK {release.minor} ships NKI {release.nki}, not NKI {version}")
        object.__setattr__(self, "release", release)
        object.__setattr__(self, "nki_version", version)

    @property
    def target(self) -> Target:
        return resolve_target(self.target_name, dict(self.hardware))

    @property
    def all_excludes(self) -> tuple[str, ...]:
        return tuple(self.exclude) + tuple(self.extend_exclude)

    def merged(self, **changes: Any) -> "Settings":
        changes = {k: v for k, v in changes.items() if v is not None}
        # A new release or NKI version replaces both (the other follows).
        if "release" in changes and "nki_version" not in changes:
            changes["nki_version"] = changes["release"].nki
        if "nki_version" in changes and "release" not in changes:
            changes["release"] = release_of_nki(changes["nki_version"])
        return replace(self, **changes)


def _string_list(key: str, value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ConfigError(f"{where}: '{key}' must be a list of strings, e.g. {key} = [\"{value}\"], not a string")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings ({KNOWN_KEYS.get(key, '')})")
    return tuple(value)


def parse_table(table: dict[str, Any], where: str, root: Path, origin: str | None = None) -> dict[str, Any]:
    """Validate a [tool.nkilint] table; return Settings field values.

    ``origin`` says where a target given in the table comes from (a file and
    line, or ``--sdk``); by default ``where``."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            hint = ""
            if key.replace("_", "-") in KNOWN_KEYS:
                hint = f" (did you mean '{key.replace('_', '-')}'?)"
            valid_keys = ", ".join(sorted(KNOWN_KEYS))
            raise ConfigError(f"{where}: unknown key '{key}'{hint}; valid keys: {valid_keys}")
        if key in ("select", "extend-select", "ignore", "exclude", "extend-exclude"):
            out[key.replace("-", "_")] = _string_list(key, value, where)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: 'per-file-ignores' must be a table of glob = [selectors]")
            pfi = []
            for glob, selectors in value.items():
                pfi.append((glob, _string_list(f"per-file-ignores.\"{glob}\"", selectors, where)))
            out["per_file_ignores"] = tuple(pfi)
        elif key == "respect-gitignore":
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: 'respect-gitignore' must be true or false, got {value!r}")
            out["respect_gitignore"] = value
        elif key == "target":
            if not isinstance(value, str):
                raise ConfigError(f"{where}: 'target' must be a string, one of {', '.join(target_names())}")
            try:
                resolve_target(value)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
            out["target_name"] = value
        elif key == "sdk":
            if not isinstance(value, str):
                raise ConfigError(
                    f"{where}: 'sdk' must be a string such as \"2.30\" (a TOML number 2.30 reads as 2.3), "
                    f"one of {', '.join(release_names())}"
                )
            try:
                out["release"] = parse_release(value)
            except ReleaseError as exc:
                raise ConfigError(f"{where}: {exc}") from None
            out["nki_version_explicit"] = True
        elif key == "nki-version":
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise ConfigError(f"{where}: 'nki-version' must be a string, one of {', '.join(VERSION_NAMES)}")
            try:
                out["nki_version"] = NkiVersion.parse(value)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
            out["nki_version_explicit"] = True
        elif key == "fail-level":
            if not isinstance(value, str):
                raise ConfigError(f"{where}: 'fail-level' must be one of note, warning, error")
            try:
                out["fail_level"] = Level.parse(value)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
        elif key == "file-time-limit":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"{where}: 'file-time-limit' must be a number of seconds >= 0 (0: no limit), "
                                  f"got {value!r}")
            out["file_time_limit"] = float(value)
        elif key == "overrides":
            out["overrides"] = _overrides(value, where, root)
        elif key == "hardware":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: 'hardware' must be a table, e.g. [tool.nkilint.hardware]")
            hw = []
            for hkey, hval in value.items():
                name = hkey.replace("-", "_")
                if name not in OVERRIDABLE:
                    raise ConfigError(
                        f"{where}: unknown hardware key '{hkey}'; valid keys: {', '.join(OVERRIDABLE)}"
                    )
                if isinstance(hval, bool) or not isinstance(hval, (int, float)) or hval <= 0:
                    raise ConfigError(f"{where}: hardware.{hkey} must be a positive number, got {hval!r}")
                hw.append((name, hval))
            out["hardware"] = tuple(hw)
    _target_values(table, out, where, origin)
    return out


def _overrides(value: Any, where: str, root: Path) -> tuple[Override, ...]:
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise ConfigError(f"{where}: 'overrides' must be an array of tables: [[tool.nkilint.overrides]] with "
                          "files = [\"legacy/**/*.py\"] and the settings for those files")
    out = []
    for number, table in enumerate(value, 1):
        here = where.replace("[tool.nkilint]", f"[[tool.nkilint.overrides]] #{number}")
        if here == where:
            here = f"{where} overrides #{number}"
        for key in table:
            if key not in OVERRIDE_KEYS:
                hint = " (set it in [tool.nkilint]: it applies to the whole run)" if key in KNOWN_KEYS else ""
                raise ConfigError(f"{here}: unknown key '{key}'{hint}; valid keys: {', '.join(OVERRIDE_KEYS)}")
        settings_part = {k: v for k, v in table.items() if k != "files"}
        key = "sdk" if "sdk" in table else "nki-version" if "nki-version" in table else None
        origin = f"from {here} ({key})" if key else None
        values = parse_table(settings_part, here, root, origin=origin)
        try:
            out.append(parse_override(table, here, values))
        except OverrideError as exc:
            raise ConfigError(str(exc)) from None
    return tuple(out)


def _target_values(table: dict[str, Any], out: dict[str, Any], where: str, origin: str | None) -> None:
    """The release both of 'sdk' and 'nki-version' mean (an error when they
    disagree), and where it comes from."""
    release, version = out.get("release"), out.get("nki_version")
    if release is None and version is None:
        return
    if release is not None and version is not None and release.nki != version:
        if where == "command line":
            raise ConfigError(
                f"--sdk {table['sdk']} (NKI {release.nki}) and --nki-version {table['nki-version']} disagree: "
                f"SDK {release.minor} ships NKI {release.nki}; give one of them"
            )
        raise ConfigError(
            f"{where}: 'sdk' = \"{table['sdk']}\" (NKI {release.nki}) and 'nki-version' = \"{table['nki-version']}\" "
            f"disagree: SDK {release.minor} ships NKI {release.nki}; give one of them"
        )
    if release is None:
        release = release_of_nki(version)
    out["release"], out["nki_version"] = release, release.nki
    if origin is None:
        origin = f"from {where}"
    kind = "cli" if where == "command line" else "config"
    out["target_origin"] = TargetOrigin(kind, origin)


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml (at or above ``start``) with [tool.nkilint]."""
    try:
        start = start.resolve()
    except (OSError, RuntimeError):  # e.g. a symlink loop: reported per file later
        start = Path(os.path.abspath(start))
    if not start.is_dir():
        start = start.parent
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(read_text_capped(candidate))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                # A broken pyproject.toml without our table is not our business,
                # but one that mentions us is reported by load_config.
                try:
                    if "[tool.nkilint" in read_text_capped(candidate, errors="replace"):
                        return candidate
                except OSError:
                    pass
                continue
            if "nkilint" in data.get("tool", {}):
                return candidate
    return None


def load_config(path: Path) -> Settings:
    """Settings from a pyproject.toml's [tool.nkilint] table."""
    table, text = read_table(path)
    values = parse_table(table, f"{path} [tool.nkilint]", path.parent, origin=config_origin(path, text, table))
    return Settings(root=path.parent.resolve(), config_file=path, **values)


def read_table(path: Path) -> tuple[dict[str, Any], str]:
    """A pyproject.toml's [tool.nkilint] table (empty when absent) and the file's text."""
    try:
        text = read_text_capped(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    tool = data.get("tool", {})
    table = tool.get("nkilint", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.nkilint] must be a table")
    return table, text


def config_origin(path: Path, text: str, table: dict[str, Any]) -> str | None:
    """``from pyproject.toml:12 ([tool.nkilint] sdk)`` for a target the table sets."""
    key = "sdk" if "sdk" in table else "nki-version" if "nki-version" in table else None
    if key is None:
        return None
    in_table = False
    line_no = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            in_table = stripped.replace(" ", "") == "[tool.nkilint]"
            continue
        if in_table and re.match(rf"^[\"']?{re.escape(key)}[\"']?\s*=", stripped):
            line_no = number
            break
    from .pins import display_path

    where = display_path(path) + (f":{line_no}" if line_no else "")
    return f"from {where} ([tool.nkilint] {key})"


def apply_cli(settings: Settings, table: dict[str, Any]) -> Settings:
    """``settings`` with the command line's values (a [tool.nkilint]-style
    table, validated by the same code) over them; what the command line sets
    applies to every file, over the overrides."""
    if not table:
        return settings
    origin = f"from --sdk {table['sdk']}" if "sdk" in table else (
        f"from --nki-version {table['nki-version']}" if "nki-version" in table else None)
    values = parse_table(table, "command line", settings.root, origin=origin)
    cli_keys = {key for key in ("select", "extend-select", "ignore", "target") if key in table}
    if "sdk" in table or "nki-version" in table:
        cli_keys.add("release")
    values["cli_keys"] = frozenset(cli_keys)
    if "extend_select" in values:
        values["cli_extend_select"] = values["extend_select"]
        values["extend_select"] = tuple(settings.extend_select) + values["extend_select"]
    values["cli_table"] = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in table.items())
    return settings.merged(**values)


def cli_table_of(settings: Settings) -> dict[str, Any]:
    """The command line's table back from ``Settings.cli_table`` (lists again)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in settings.cli_table}
