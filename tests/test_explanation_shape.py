"""Rule explanations of the converted families have the fixed shape: what
the rule finds, then a "**Why on Trainium:**" paragraph, then "**Fix:**"."""

from __future__ import annotations

import pytest

import nkilint_rules.memory
import nkilint_rules.numerics
import nkilint_rules.partition
import nkilint_rules.pipeline

FAMILIES = (nkilint_rules.partition, nkilint_rules.memory, nkilint_rules.pipeline, nkilint_rules.numerics)


@pytest.mark.parametrize("rule", [r for family in FAMILIES for r in family.RULES], ids=lambda r: r.id)
def test_explanation_says_what_why_and_fix(rule):
    paragraphs = [p.strip() for p in rule.explanation.strip().split("\n\n")]
    why = [i for i, p in enumerate(paragraphs) if p.startswith("**Why on Trainium:**")]
    fix = [i for i, p in enumerate(paragraphs) if p.startswith("**Fix:**")]
    assert len(why) == 1 and len(fix) == 1, rule.id
    assert 0 < why[0] < fix[0] == len(paragraphs) - 1, rule.id
    assert not paragraphs[0].startswith("**"), rule.id
    assert "../shared" not in rule.explanation and not any("shared/" in ref for ref in rule.references)
