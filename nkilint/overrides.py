"""``[[tool.nkilint.overrides]]``: settings for some of the files.

A repository often holds kernels written for two releases: ``legacy/``
still on ``neuronxcc.nki`` (SDK 2.26), the rest on NKI 0.8. Each table
names files with globs (relative to the project root; ``*`` stays within
a directory, ``**`` crosses them, a name without a slash matches at any
depth, a directory covers its contents) and the settings they get: the
target release (``sdk`` or ``nki-version``), the hardware ``target``, and
the rule selection (``select``, ``extend-select``, ``ignore``). Tables apply
in order, a later one over an earlier one; what a file's rules see
(release, NKI version, hardware) is the result. Values given on the
command line apply to every file, over the tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .gitignore import Pattern, parse_pattern
from .releases import Release, TargetOrigin
from .versions import NkiVersion

OVERRIDE_KEYS = {
    "files": "list of globs (relative to the project root) the table applies to",
    "sdk": "the Neuron SDK release for these files (a string)",
    "nki-version": "the NKI version for these files (a string)",
    "target": "the hardware generation for these files",
    "select": "rules to run on these files (replaces the selection)",
    "extend-select": "rules added to the selection on these files",
    "ignore": "rules turned off on these files",
}


class OverrideError(ValueError):
    pass


@dataclass(frozen=True)
class Override:
    """One table: which files, and the settings they get (None: unchanged)."""

    files: tuple[str, ...]
    where: str  # "pyproject.toml [[tool.nkilint.overrides]] #2", for messages
    release: Release | None = None
    target_name: str | None = None
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    target_origin: TargetOrigin | None = None
    patterns: tuple[Pattern, ...] = field(default=(), repr=False, compare=False)

    @property
    def nki_version(self) -> NkiVersion | None:
        return self.release.nki if self.release is not None else None

    @property
    def has_selection(self) -> bool:
        return self.select is not None or bool(self.extend_select) or bool(self.ignore)

    def matches(self, rel: str) -> bool:
        """Whether the file at ``rel`` (relative to the project root, POSIX)
        is one of the table's: the glob matches it or one of its directories."""
        parts = rel.split("/")
        for pattern in self.patterns:
            if pattern.matches(rel, is_dir=False):
                return True
            if any(pattern.matches("/".join(parts[:n]), is_dir=True) for n in range(1, len(parts))):
                return True
        return False


def compile_globs(globs: tuple[str, ...], where: str) -> tuple[Pattern, ...]:
    """The patterns of an override's ``files``; an error for one that
    cannot match anything or tries to negate."""
    out = []
    for glob in globs:
        text = glob.strip()
        if text.startswith("!"):
            raise OverrideError(f"{where}: 'files' entry {glob!r}: negation is not supported; "
                                "use a later table to change those files back")
        # The globs are relative to the project root: a leading "./" or "/"
        # says so and is dropped, and the slash-less ones still match a name
        # at any depth (as in .gitignore files).
        if text.startswith("./"):
            text = text[2:]
        pattern = parse_pattern(text)
        if pattern is None:
            raise OverrideError(f"{where}: 'files' entry {glob!r} matches no file")
        out.append(pattern)
    return tuple(out)


def parse_override(table: Any, where: str, values: dict[str, Any]) -> Override:
    """An Override from one table and the Settings values its other keys
    parsed to (config.parse_table validates those)."""
    files = table.get("files") if isinstance(table, dict) else None
    if files is None:
        raise OverrideError(f"{where}: 'files' is required, e.g. files = [\"legacy/**/*.py\"]")
    if isinstance(files, str) or not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
        raise OverrideError(f"{where}: 'files' must be a non-empty list of globs, e.g. files = [\"legacy/**/*.py\"]")
    globs = tuple(files)
    return Override(
        files=globs,
        where=where,
        release=values.get("release"),
        target_name=values.get("target_name"),
        select=values.get("select"),
        extend_select=values.get("extend_select", ()),
        ignore=values.get("ignore", ()),
        target_origin=values.get("target_origin"),
        patterns=compile_globs(globs, where),
    )


def matching(overrides: tuple[Override, ...], rel: str) -> tuple[int, ...]:
    """The indexes of the tables that apply to a file, in order."""
    return tuple(i for i, o in enumerate(overrides) if o.matches(rel))


def file_settings(settings: Any, indexes: tuple[int, ...]) -> Any:
    """The Settings one file is checked with: the run's, with the target
    release and hardware of the tables that apply (later over earlier),
    except what the command line set for every file."""
    out = settings
    for index in indexes:
        override = settings.overrides[index]
        if override.release is not None and "release" not in settings.cli_keys:
            out = out.merged(release=override.release, target_origin=override.target_origin, nki_version_explicit=True)
        if override.target_name is not None and "target" not in settings.cli_keys:
            out = out.merged(target_name=override.target_name)
    return out


def settings_for_file(settings: Any, rel: str) -> Any:
    """``file_settings`` for the file at ``rel`` (relative to the project root)."""
    if not settings.overrides:
        return settings
    return file_settings(settings, matching(settings.overrides, rel))
