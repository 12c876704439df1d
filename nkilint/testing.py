"""Helpers to run rule examples (used by nkilint's tests and by rule packs').

``run_example(rule, example)`` checks the example's source with the default
rule set plus the rule under test and returns the findings of that rule.
Examples with extra ``files`` are written to a temporary project so that
imports between them resolve.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from .config import Settings
from .engine import Checker, RunOptions
from .findings import Finding
from .plugins import installed_rules
from .rule import Example, Rule, RuleSet
from .selection import resolve_enabled
from .versions import LATEST, NkiVersion


@dataclass
class ExampleOutcome:
    findings: list[Finding]  # of the rule under test, not suppressed
    all_findings: list[Finding]
    fixed: str | None  # source after applying fixes (when the example has `fixed`)
    crashed: bool


def _settings(example: Example, root: Path) -> Settings:
    if example.sdk is not None:
        from .releases.table import parse_release

        release = parse_release(example.sdk)
        return Settings(root=root, target_name=example.target or "trn2", release=release,
                        nki_version=release.nki, nki_version_explicit=True)
    version = NkiVersion.parse(example.nki_version) if example.nki_version else LATEST
    return Settings(
        root=root,
        target_name=example.target or "trn2",
        nki_version=version,
        nki_version_explicit=example.nki_version is not None,
    )


def run_example(rule: type[Rule], example: Example, ruleset: RuleSet | None = None) -> ExampleOutcome:
    ruleset = ruleset or installed_rules()
    with tempfile.TemporaryDirectory(prefix="nkilint-example-") as tmp:
        root = Path(tmp).resolve()
        for name, code in example.files:
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code, encoding="utf-8")
        main = root / example.filename
        main.parent.mkdir(parents=True, exist_ok=True)
        main.write_text(example.code, encoding="utf-8")
        settings = _settings(example, root)
        enabled = resolve_enabled(ruleset, None, [], []) | {rule.id}
        extra = tuple(r for r in example.with_rules if r.id not in ruleset.rules)
        checker = Checker(settings, ruleset, enabled, RunOptions(keep_text=example.fixed is not None, extra_rules=extra))
        from .discovery import InputFile

        result = checker.check_path(InputFile(main, example.filename, True))
        fixed = None
        if example.fixed is not None:
            from .fixes import fix_source

            fixed = fix_source(example.code, result.findings, unsafe=example.unsafe_fixes, only_rule=rule.id)
        mine = [f for f in result.findings if f.rule_id == rule.id and not f.suppressed]
        return ExampleOutcome(mine, result.findings, fixed, result.crashed)
