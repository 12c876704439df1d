"""Every example of every installed rule is run: invalid examples must be
reported on exactly their lines, valid ones not at all, fixable examples
must produce their fixed source."""

from __future__ import annotations

import pytest

from nkilint.plugins import installed_rules
from nkilint.rule import FAMILIES
from nkilint.testing import run_example

RULESET = installed_rules()

CASES = [
    pytest.param(rule, example, id=f"{rule.id}-{rule.name}-{'valid' if example.is_valid else 'invalid'}{i}")
    for rule in RULESET
    for i, example in enumerate(rule.examples)
]


@pytest.mark.parametrize("rule,example", CASES)
def test_example(rule, example):
    outcome = run_example(rule, example, RULESET)
    lines = sorted({f.span.start_line for f in outcome.findings})
    detail = "\n".join(f"  {f.span.start_line}:{f.span.start_col} [{f.level.label}] {f.message}" for f in outcome.findings)
    if example.is_valid:
        assert not outcome.findings, f"valid example reported:\n{detail}\n---\n{example.code}"
    else:
        assert lines == sorted(set(example.lines)), (
            f"expected lines {sorted(set(example.lines))}, got {lines}:\n{detail}\n---\n{example.code}"
        )
        if example.level is not None:
            assert {f.level for f in outcome.findings} == {example.level}, detail
    if example.fixed is not None:
        assert outcome.fixed == example.fixed, f"fixed source differs:\n{outcome.fixed}"
    # A rule must not crash on its own examples (other than the crash demo).
    if not example.with_rules:
        assert not outcome.crashed, [f.message for f in outcome.all_findings if f.rule_id == "NKI003"]


@pytest.mark.parametrize("rule", list(RULESET), ids=lambda r: r.id)
def test_rule_is_documented_and_has_examples(rule):
    assert rule.family in FAMILIES
    assert rule.summary and rule.explanation.strip()
    assert any(not e.is_valid for e in rule.examples), f"{rule.id} has no invalid example"
    assert any(e.is_valid for e in rule.examples), f"{rule.id} has no valid example"
    explanation = rule.explanation.lower()
    assert "fix" in explanation, f"{rule.id}'s explanation does not say how to fix"
    if rule.fixable:
        assert any(e.fixed is not None for e in rule.examples), f"fixable {rule.id} has no example with fixed source"


def test_builtin_rule_ids_are_in_their_family_range():
    for rule in RULESET:
        if RULESET.origins[rule.id].startswith("builtin"):
            assert rule.id.startswith(FAMILIES[rule.family].prefix), rule.id
