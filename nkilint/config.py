"""``[tool.nkilint]`` in pyproject.toml, and the settings of one run.

Unknown keys and bad values are errors that say what is wrong and what is
valid; nothing is silently ignored.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .findings import Level
from .targets import DEFAULT_TARGET, OVERRIDABLE, Target, resolve_target, target_names
from .versions import LATEST, VERSION_NAMES, NkiVersion

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
    "target": f"one of {', '.join(target_names())}",
    "nki-version": f"one of {', '.join(VERSION_NAMES)}",
    "fail-level": "note, warning or error: the lowest level that makes the exit code 1",
    "hardware": f"table of hardware overrides ({', '.join(OVERRIDABLE)})",
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
    target_name: str = DEFAULT_TARGET
    nki_version: NkiVersion = LATEST
    nki_version_explicit: bool = False
    fail_level: Level = Level.WARNING
    hardware: tuple[tuple[str, int | float], ...] = ()
    root: Path = field(default_factory=Path.cwd)
    config_file: Path | None = None

    @property
    def target(self) -> Target:
        return resolve_target(self.target_name, dict(self.hardware))

    @property
    def all_excludes(self) -> tuple[str, ...]:
        return tuple(self.exclude) + tuple(self.extend_exclude)

    def merged(self, **changes: Any) -> "Settings":
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def _string_list(key: str, value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise ConfigError(f"{where}: '{key}' must be a list of strings, e.g. {key} = [\"{value}\"], not a string")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings ({KNOWN_KEYS.get(key, '')})")
    return tuple(value)


def parse_table(table: dict[str, Any], where: str, root: Path) -> dict[str, Any]:
    """Validate a [tool.nkilint] table; return Settings field values."""
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
        elif key == "target":
            if not isinstance(value, str):
                raise ConfigError(f"{where}: 'target' must be a string, one of {', '.join(target_names())}")
            try:
                resolve_target(value)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
            out["target_name"] = value
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
    return out


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
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                # A broken pyproject.toml without our table is not our business,
                # but one that mentions us is reported by load_config.
                try:
                    if "[tool.nkilint" in candidate.read_text(encoding="utf-8", errors="replace"):
                        return candidate
                except OSError:
                    pass
                continue
            if "nkilint" in data.get("tool", {}):
                return candidate
    return None


def load_config(path: Path) -> Settings:
    """Settings from a pyproject.toml's [tool.nkilint] table."""
    try:
        text = path.read_text(encoding="utf-8")
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
    values = parse_table(table, f"{path} [tool.nkilint]", path.parent)
    return Settings(root=path.parent.resolve(), config_file=path, **values)
