"""Fixture kernels with ``# expect:`` markers, checked exactly.

A fixture marks every line a rule family must report with a trailing
comment ``# expect: NKI101`` (several ids comma-separated; ``NKI101:warning``
also requires the finding's level). ``check_fixture``
lints the file with every installed rule and compares the findings of the
selected ids (a family prefix such as ``"NKI1"`` or explicit ids) with the
markers: nothing missing, nothing extra.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from nkilint.config import Settings
from nkilint.discovery import InputFile
from nkilint.engine import Checker, RunOptions
from nkilint.findings import Finding
from nkilint.plugins import installed_rules
from nkilint.versions import LATEST, NkiVersion

_ITEM = r"[A-Z]+[0-9]+(?::[a-z]+)?"
MARKER = re.compile(rf"#\s*expect:\s*({_ITEM}(?:\s*,\s*{_ITEM})*)")


def expected_markers(source: str) -> dict[int, set[str]]:
    """Line -> rule ids marked ``# expect: ...`` on that line (without levels)."""
    return {line: {rule for rule, _ in items} for line, items in expected_levels(source).items()}


def expected_levels(source: str) -> dict[int, set[tuple[str, str | None]]]:
    """Line -> (rule id, required level or None) marked on that line."""
    out: dict[int, set[tuple[str, str | None]]] = {}
    for lineno, line in enumerate(source.splitlines(), start=1):
        m = MARKER.search(line)
        if m:
            items = set()
            for x in m.group(1).split(","):
                rule, _, level = x.strip().partition(":")
                items.add((rule, level or None))
            out[lineno] = items
    return out


def lint_file(path: Path, target: str = "trn2", nki_version: str | None = None,
              select: tuple[str, ...] | None = None) -> list[Finding]:
    """Findings on one file (suppressed ones dropped) of every installed rule,
    or of the rules whose ids start with one of ``select``."""
    path = Path(path).resolve()
    ruleset = installed_rules()
    version = NkiVersion.parse(nki_version) if nki_version else LATEST
    settings = Settings(root=path.parent, target_name=target, nki_version=version,
                        nki_version_explicit=nki_version is not None)
    if select is None:
        enabled = frozenset(ruleset.rules)
    else:
        enabled = frozenset(r for r in ruleset.rules if _selected(r, select))
    checker = Checker(settings, ruleset, enabled, RunOptions())
    result = checker.check_path(InputFile(path, path.name, True))
    return [f for f in result.findings if not f.suppressed]


@dataclass
class FixtureOutcome:
    missing: list[tuple[int, str]]  # (line, rule id) marked but not reported
    extra: list[Finding]  # reported but not marked
    wrong_level: list[tuple[Finding, str]] = field(default_factory=list)  # (finding, level marked)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.extra and not self.wrong_level

    def describe(self) -> str:
        parts = [f"missing {rule} on line {line}" for line, rule in self.missing]
        parts += [f"extra {f.rule_id} on line {f.span.start_line}: {f.message}" for f in self.extra]
        parts += [f"{f.rule_id} on line {f.span.start_line} is {f.level.label}, marked {level}: {f.message}"
                  for f, level in self.wrong_level]
        return "\n".join(parts)


def _selected(rule_id: str, select: tuple[str, ...]) -> bool:
    return any(rule_id.startswith(s) for s in select)


def check_fixture(path: Path, select: tuple[str, ...] | str, target: str = "trn2",
                  nki_version: str | None = None) -> FixtureOutcome:
    """Compare the selected findings of a fixture with its markers."""
    select = (select,) if isinstance(select, str) else tuple(select)
    path = Path(path)
    levels = expected_levels(path.read_text(encoding="utf-8"))
    markers = {line: {rule for rule, _ in items} for line, items in levels.items()}
    findings = [f for f in lint_file(path, target, nki_version, select) if _selected(f.rule_id, select)]
    reported = {(f.span.start_line, f.rule_id) for f in findings}
    wanted = {(line, rule) for line, rules in markers.items() for rule in rules if _selected(rule, select)}
    missing = sorted(wanted - reported)
    extra = [f for f in findings if (f.span.start_line, f.rule_id) not in wanted]
    wrong = []
    for f in findings:
        for rule, level in levels.get(f.span.start_line, ()):
            if rule == f.rule_id and level is not None and f.level.label != level:
                wrong.append((f, level))
    return FixtureOutcome(missing, extra, wrong)
