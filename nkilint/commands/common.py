"""What the subcommands share: usage errors, settings from config and flags, the rule set."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

import click

from ..config import Settings, apply_cli, find_config, load_config
from ..paths import common_start, project_root
from ..plugins import PluginError, installed_rules
from ..selection import SelectorError, resolve_enabled, validate_override_selectors, validate_selectors
from ..terminal import printable

EXAMPLE_PATH = Path(__file__).parent.parent / "examples" / "softmax_port.py"


class UsageFailure(click.ClickException):
    exit_code = 2

    def show(self, file=None) -> None:  # noqa: D401 - click API
        click.echo(f"nkilint: error: {printable(self.format_message())}", err=True)


def _split(values: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return tuple(out)


def _load_ruleset():
    try:
        return installed_rules()
    except PluginError as exc:
        raise UsageFailure(str(exc)) from None


def build_settings(
    paths: tuple[str, ...],
    config: str | None,
    isolated: bool,
    find_pins: bool = True,
    **overrides,
) -> Settings:
    """Settings from the nearest [tool.nkilint] (or --config), then the CLI;
    without a target from either, the release the project's pins name
    (not with --isolated, which ignores every project file)."""
    if config and isolated:
        raise UsageFailure("--config and --isolated cannot be used together")
    # The project root (what every report's paths are relative to): the
    # found configuration file's directory, else the git checkout, else the cwd.
    start = common_start(paths)
    if config:
        # As ruff does: a file named with --config applies to the tree being
        # checked, whose root is the checkout (or the cwd), not the file's
        # directory.
        settings = load_config(Path(config)).merged(root=project_root(start))
    elif isolated:
        settings = Settings(root=project_root(start))
    else:
        found = find_config(start) or (find_config(Path.cwd()) if start != Path.cwd() else None)
        settings = load_config(found) if found else Settings(root=project_root(start))
    # CLI values override the file; they are validated by the same code.
    table = {}
    for key in ("select", "extend-select", "ignore", "exclude", "extend-exclude"):
        value = overrides.get(key.replace("-", "_"))
        if value:
            table[key] = list(value)
    for key in ("target", "sdk", "nki-version", "fail-level", "respect-gitignore", "file-time-limit"):
        value = overrides.get(key.replace("-", "_"))
        if value is not None:
            table[key] = value
    settings = apply_cli(settings, table)
    if config or isolated:
        # One configuration named (or none): nested [tool.nkilint] tables are not read.
        settings = settings.merged(hierarchical=False)
    if not settings.nki_version_explicit and not isolated and find_pins:
        settings = _target_from_project(settings, paths)
    return settings


def _target_from_project(settings: Settings, paths: tuple[str, ...]) -> Settings:
    """No --sdk / --nki-version / config target: the release the project pins."""
    from ..pins import target_from_pins

    real = [Path(p) for p in paths if p != "-"]
    start = Path.cwd()
    if real:
        try:
            start = Path(os.path.commonpath([str(p.absolute()) for p in real]))
        except ValueError:
            pass
    stop = settings.config_file.parent.resolve() if settings.config_file is not None else None
    found = target_from_pins(start, stop, cwd=settings.root)
    if found is None:
        return settings
    release, origin = found
    return settings.merged(release=release, target_origin=origin)


def _ruleset_and_enabled(settings: Settings):
    ruleset = _load_ruleset()
    try:
        select = validate_selectors(settings.select, ruleset, "select") if settings.select is not None else None
        extend = validate_selectors(settings.extend_select, ruleset, "extend-select")
        ignore = validate_selectors(settings.ignore, ruleset, "ignore")
        for glob, selectors in settings.per_file_ignores:
            validate_selectors(selectors, ruleset, f"per-file-ignores[{glob!r}]")
        validate_override_selectors(settings, ruleset)
    except SelectorError as exc:
        raise UsageFailure(str(exc)) from None
    return ruleset, resolve_enabled(ruleset, select, extend, ignore)


