"""Semantics-family fixtures (NKI7xx): every bad kernel is reported exactly
on its ``# expect:`` lines, its fixed twin is clean. A fixture may pin the
target NKI version with a ``# nki-version: 0.2`` comment line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixture_markers import check_fixture, expected_markers, lint_file

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "semantics"
BAD = sorted(FIXTURES.glob("*_bad.py"))
GOOD = sorted(FIXTURES.glob("*_good.py"))
VERSION = re.compile(r"^#\s*nki-version:\s*([0-9.]+)\s*$", re.M)


def _version(path: Path) -> str | None:
    m = VERSION.search(path.read_text(encoding="utf-8"))
    return m.group(1) if m else None


def test_every_bad_fixture_has_a_fixed_twin():
    assert BAD, "no semantics fixtures found"
    assert {p.name.replace("_bad", "_good") for p in BAD} == {p.name for p in GOOD}


def test_twins_target_the_same_version():
    for bad in BAD:
        assert _version(bad) == _version(bad.with_name(bad.name.replace("_bad", "_good"))), bad.name


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_fixture_is_reported_exactly_on_its_markers(path):
    markers = expected_markers(path.read_text(encoding="utf-8"))
    assert any(rule.startswith("NKI7") for rules in markers.values() for rule in rules), "fixture has no NKI7 marker"
    outcome = check_fixture(path, "NKI7", nki_version=_version(path))
    assert outcome.ok, outcome.describe()


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_fixed_twin_is_clean(path):
    assert not expected_markers(path.read_text(encoding="utf-8"))
    outcome = check_fixture(path, "NKI7", nki_version=_version(path))
    assert outcome.ok, outcome.describe()


@pytest.mark.parametrize("path", BAD + GOOD, ids=lambda p: p.name)
def test_semantics_rules_do_not_crash_on_fixtures(path):
    findings = lint_file(path, nki_version=_version(path), select=("NKI7", "NKI003"))
    crashes = [f for f in findings if f.rule_id == "NKI003" and "NKI7" in f.message]
    assert not crashes, [f.message for f in crashes]


def test_all_rules_of_the_family_are_exercised_by_fixtures():
    from nkilint.plugins import installed_rules

    ours = {r.id for r in installed_rules() if r.family == "semantics"}
    seen = set()
    for path in BAD:
        for rules in expected_markers(path.read_text(encoding="utf-8")).values():
            seen |= {r for r in rules if r.startswith("NKI7")}
    assert ours and ours <= seen, sorted(ours - seen)
