"""Pipeline-family fixtures (NKI3xx): each bad kernel is reported exactly on
its ``# expect:`` lines (and levels), its fixed twin is clean, and every
rule of the family is exercised in both API generations where it applies."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixture_markers import check_fixture, expected_markers, lint_file
from nkilint.findings import Level

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pipeline"
BAD = sorted(FIXTURES.glob("*_bad.py"))
GOOD = sorted(FIXTURES.glob("*_good.py"))
HEADER = re.compile(r"#\s*nkilint-fixture:(.*)")
RULES = [f"NKI3{n:02d}" for n in range(1, 12)]


def header(path: Path) -> tuple[list[str], str | None]:
    """(targets, nki version) from the fixture's header line."""
    m = HEADER.search(path.read_text(encoding="utf-8"))
    assert m, f"{path.name} has no '# nkilint-fixture: targets=...' header"
    fields = dict(part.split("=", 1) for part in m.group(1).split())
    return fields["targets"].split(","), fields.get("nki-version")


def cases(paths):
    out = []
    for p in paths:
        targets, version = header(p)
        out += [pytest.param(p, t, version, id=f"{p.name}-{t}") for t in targets]
    return out


def test_every_bad_fixture_has_a_fixed_twin():
    assert len(BAD) >= 15, "pipeline fixtures missing"
    assert {p.name.replace("_bad", "_good") for p in BAD} == {p.name for p in GOOD}


@pytest.mark.parametrize("path,target,version", cases(BAD))
def test_bad_fixture_is_reported_exactly_on_its_markers(path, target, version):
    markers = expected_markers(path.read_text(encoding="utf-8"))
    assert any(rule.startswith("NKI3") for rules in markers.values() for rule in rules), "no NKI3 marker"
    outcome = check_fixture(path, "NKI3", target=target, nki_version=version)
    assert outcome.ok, outcome.describe()


@pytest.mark.parametrize("path,target,version", cases(GOOD))
def test_fixed_twin_is_clean(path, target, version):
    assert not expected_markers(path.read_text(encoding="utf-8"))
    outcome = check_fixture(path, "NKI3", target=target, nki_version=version)
    assert outcome.ok, outcome.describe()


@pytest.mark.parametrize("path", BAD + GOOD, ids=lambda p: p.name)
def test_pipeline_findings_are_never_errors_and_rules_do_not_crash(path):
    _, version = header(path)
    findings = lint_file(path, nki_version=version, select=("NKI3", "NKI003"))
    assert not [f for f in findings if f.rule_id == "NKI003"], [f.message for f in findings]
    assert all(f.level in (Level.WARNING, Level.NOTE) for f in findings if f.rule_id.startswith("NKI3"))


def _marked(paths) -> set[str]:
    seen: set[str] = set()
    for path in paths:
        for rules in expected_markers(path.read_text(encoding="utf-8")).values():
            seen |= {r for r in rules if r.startswith("NKI3")}
    return seen


def test_every_rule_of_the_family_is_exercised_by_a_fixture():
    assert _marked(BAD) == set(RULES)


@pytest.mark.parametrize("rule", ["NKI301", "NKI302", "NKI303", "NKI304", "NKI305", "NKI308"])
def test_rules_for_both_generations_have_fixtures_in_both(rule):
    legacy = [p for p in BAD if p.name.startswith("legacy_")]
    current = [p for p in BAD if p.name.startswith("current")]
    assert rule in _marked(legacy), f"{rule}: no legacy fixture"
    assert rule in _marked(current), f"{rule}: no current-API fixture"
