"""How one file is checked: the run's settings, or those the
[[tool.nkilint.overrides]] tables matching it give (nkilint/overrides.py),
with the target and the rules that follow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .overrides import file_settings
from .rule import Rule, RuleSet
from .selection import Selector, apply_layer
from .targets import Target

if TYPE_CHECKING:  # pragma: no cover
    from .config import Settings


@dataclass(frozen=True)
class Profile:
    settings: "Settings"
    target: Target
    enabled: frozenset[str]
    rules: tuple[Rule, ...]


def _selectors(texts) -> list[Selector]:
    return [Selector(t) for t in texts]


def file_enabled(settings: "Settings", ruleset: RuleSet, enabled: frozenset[str], indexes: tuple[int, ...]) -> frozenset[str]:
    """The rules on for a file: the run's, then each matching table's
    selection as one more layer, then the command line's again (it applies
    to every file, over the tables)."""
    chosen = [settings.overrides[i] for i in indexes if settings.overrides[i].has_selection]
    if not chosen:
        return enabled
    for override in chosen:
        enabled = apply_layer(ruleset, enabled, _selectors(override.select) if override.select is not None else None,
                              _selectors(override.extend_select), _selectors(override.ignore))
    cli = settings.cli_keys
    if cli & {"select", "extend-select", "ignore"}:
        enabled = apply_layer(
            ruleset, enabled, _selectors(settings.select) if "select" in cli else None,
            _selectors(settings.cli_extend_select), _selectors(settings.ignore) if "ignore" in cli else [],
        )
    return enabled


def build_profile(settings: "Settings", ruleset: RuleSet, enabled: frozenset[str], indexes: tuple[int, ...],
                  extra_rules: tuple[type[Rule], ...] = ()) -> Profile:
    """The profile of the files the tables at ``indexes`` match."""
    own = file_settings(settings, indexes)
    on = file_enabled(settings, ruleset, enabled, indexes)
    rules = [ruleset.rules[rid]() for rid in sorted(on) if rid in ruleset.rules]
    rules.extend(rule() for rule in extra_rules)
    return Profile(own, own.target, on, tuple(rules))
