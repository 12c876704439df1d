"""Discovering rule packs through the ``nkilint.rules`` entry-point group.

An entry point may name a sequence of Rule classes, a module (every Rule
subclass with an id defined in it), or a callable returning either. The
built-in pack is loaded exactly like a third-party one.
"""

from __future__ import annotations

import inspect
from importlib import metadata
from types import ModuleType
from typing import Iterable

from .rule import Rule, RuleDefinitionError, RuleSet

ENTRY_POINT_GROUP = "nkilint.rules"


class PluginError(Exception):
    """A rule pack that cannot be loaded (the run stops with exit code 2)."""


def _rules_from(obj: object, origin: str) -> list[type[Rule]]:
    if inspect.ismodule(obj):
        module: ModuleType = obj  # type: ignore[assignment]
        return [
            value
            for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.id
        ]
    if isinstance(obj, type) and issubclass(obj, Rule):
        return [obj]
    if callable(obj) and not isinstance(obj, type):
        return _rules_from(obj(), origin)
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes)):
        out: list[type[Rule]] = []
        for item in obj:
            out.extend(_rules_from(item, origin))
        return out
    raise PluginError(f"rule pack {origin} gave {type(obj).__name__}, not Rule classes")


def _entry_points() -> list[metadata.EntryPoint]:
    eps = metadata.entry_points()
    if hasattr(eps, "select"):
        selected = list(eps.select(group=ENTRY_POINT_GROUP))
    else:  # pragma: no cover - Python < 3.10 API shape
        selected = list(eps.get(ENTRY_POINT_GROUP, []))
    # The same distribution can be visible twice (e.g. editable + path); keep one.
    seen: dict[tuple[str, str], metadata.EntryPoint] = {}
    for ep in selected:
        seen.setdefault((ep.name, ep.value), ep)
    return sorted(seen.values(), key=lambda ep: (ep.name != "builtin", ep.name))


def load_rules(extra: Iterable[type[Rule]] = ()) -> RuleSet:
    """Load every installed rule pack. Raises PluginError on a broken pack."""
    ruleset = RuleSet()
    for ep in _entry_points():
        origin = f"{ep.name} = {ep.value}"
        try:
            obj = ep.load()
        except Exception as exc:  # a broken third-party pack must be named
            raise PluginError(f"cannot load rule pack '{origin}': {type(exc).__name__}: {exc}") from exc
        try:
            for rule in _rules_from(obj, origin):
                ruleset.add(rule, origin)
        except RuleDefinitionError as exc:
            raise PluginError(str(exc)) from exc
    for rule in extra:
        try:
            ruleset.add(rule, "extra")
        except RuleDefinitionError as exc:
            raise PluginError(str(exc)) from exc
    if not ruleset.rules:
        raise PluginError(
            f"no rules found: no package registers the '{ENTRY_POINT_GROUP}' entry point "
            "(is nkilint installed with `pip install .`?)"
        )
    return ruleset


_CACHE: RuleSet | None = None


def installed_rules() -> RuleSet:
    """The installed rules, loaded once per process."""
    global _CACHE
    if _CACHE is None:
        _CACHE = load_rules()
    return _CACHE
