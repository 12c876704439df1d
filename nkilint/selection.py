"""Which rules run: --select / --extend-select / --ignore, per-file ignores.

A selector is a rule id (``NKI201``), an id prefix (``NKI2``, ``NKI``), a
family name (``memory``), a rule slug (``psum-tile-exceeds-bank``) or
``ALL``. As in ruff, when a rule matches both a select and an ignore
selector, the more specific one wins (an id beats a prefix beats a family
beats ALL); on a tie, ignore wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from .rule import FAMILIES, Rule, RuleSet


class SelectorError(ValueError):
    pass


@dataclass(frozen=True)
class Selector:
    text: str

    def specificity(self, rule: type[Rule]) -> int:
        """How specifically this selector names ``rule`` (0: not at all)."""
        key = self.text.strip()
        if key.upper() == "ALL":
            return 1
        if key.lower() in FAMILIES:
            return 2 if rule.family == key.lower() else 0
        if key.upper() == rule.id:
            return 100
        if key.lower() == rule.name:
            return 100
        if key.upper() and rule.id.startswith(key.upper()) and key[:1].isalpha():
            return 3 + len(key)
        return 0


def validate_selectors(selectors: Iterable[str], ruleset: RuleSet, what: str) -> list[Selector]:
    out = []
    for text in selectors:
        text = text.strip()
        if not text:
            continue
        sel = Selector(text)
        if not any(sel.specificity(rule) for rule in ruleset):
            raise SelectorError(
                f"{what}: {text!r} matches no rule; use a rule id (NKI201), an id prefix (NKI2), "
                f"a family ({', '.join(FAMILIES)}), a rule name, or ALL"
            )
        out.append(sel)
    return out


def validate_override_selectors(settings, ruleset: RuleSet) -> None:
    """SelectorError for a selector of a [[tool.nkilint.overrides]] table that matches no rule."""
    for override in settings.overrides:
        if override.select is not None:
            validate_selectors(override.select, ruleset, f"{override.where}: select")
        validate_selectors(override.extend_select, ruleset, f"{override.where}: extend-select")
        validate_selectors(override.ignore, ruleset, f"{override.where}: ignore")


def _best(selectors: list[Selector], rule: type[Rule]) -> int:
    return max((s.specificity(rule) for s in selectors), default=0)


def resolve_enabled(
    ruleset: RuleSet,
    select: list[Selector] | None,
    extend_select: list[Selector],
    ignore: list[Selector],
) -> frozenset[str]:
    """The ids of the rules that run."""
    enabled = set()
    for rule in ruleset:
        chosen = select if select is not None else None
        if chosen is None:
            # Default selection: every rule that is on by default.
            sel_score = 1 if rule.default_enabled else 0
        else:
            sel_score = _best(chosen, rule)
            # An off-by-default rule needs more than ALL to be selected.
            if not rule.default_enabled and sel_score <= 1:
                sel_score = 0
        ext_score = _best(extend_select, rule)
        if not rule.default_enabled and ext_score <= 1:
            ext_score = 0
        sel_score = max(sel_score, ext_score)
        ign_score = _best(ignore, rule)
        if sel_score and sel_score > ign_score:
            enabled.add(rule.id)
    return frozenset(enabled)


def matches_any(selectors: list[Selector], rule: type[Rule]) -> bool:
    return any(s.specificity(rule) for s in selectors)


def apply_layer(
    ruleset: RuleSet,
    current: frozenset[str],
    select: list[Selector] | None,
    extend_select: list[Selector],
    ignore: list[Selector],
) -> frozenset[str]:
    """The rules enabled after one more layer of settings (an override
    table, or the command line over it), as ruff layers configurations: a
    ``select`` replaces the rules that were on, ``extend-select`` adds,
    ``ignore`` removes; within the layer the more specific selector wins,
    and on a tie, ignore."""
    enabled = set()
    for rule in ruleset:
        sel_score = _best(select, rule) if select is not None else 0
        ext_score = _best(extend_select, rule)
        if not rule.default_enabled:
            # An off-by-default rule needs more than ALL to be selected.
            sel_score = sel_score if sel_score > 1 else 0
            ext_score = ext_score if ext_score > 1 else 0
        score = max(sel_score, ext_score)
        ign_score = _best(ignore, rule)
        if score and score > ign_score:
            enabled.add(rule.id)
        elif select is None and rule.id in current and not ign_score:
            enabled.add(rule.id)
    return frozenset(enabled)
