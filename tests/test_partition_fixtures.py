"""Partition-family fixtures: bad kernels are reported exactly on their
``# expect:`` lines, their fixed twins are clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixture_markers import check_fixture, expected_markers, lint_file

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "partition"
BAD = sorted(FIXTURES.glob("*_bad.py"))
GOOD = sorted(FIXTURES.glob("*_good.py"))


def test_every_bad_fixture_has_a_fixed_twin():
    assert BAD, "no partition fixtures found"
    assert {p.name.replace("_bad", "_good") for p in BAD} == {p.name for p in GOOD}


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_fixture_is_reported_exactly_on_its_markers(path):
    markers = expected_markers(path.read_text(encoding="utf-8"))
    assert any(rule.startswith("NKI1") for rules in markers.values() for rule in rules), "fixture has no NKI1 marker"
    outcome = check_fixture(path, "NKI1")
    assert outcome.ok, outcome.describe()


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_fixed_twin_is_clean(path):
    assert not expected_markers(path.read_text(encoding="utf-8"))
    outcome = check_fixture(path, "NKI1")
    assert outcome.ok, outcome.describe()


@pytest.mark.parametrize("path", BAD + GOOD, ids=lambda p: p.name)
def test_partition_rules_do_not_crash_on_fixtures(path):
    crashes = [f for f in lint_file(path, select=("NKI1", "NKI003")) if f.rule_id == "NKI003" and "NKI1" in f.message]
    assert not crashes, [f.message for f in crashes]


def test_all_rules_of_the_family_are_exercised_by_fixtures():
    seen = set()
    for path in BAD:
        for rules in expected_markers(path.read_text(encoding="utf-8")).values():
            seen |= {r for r in rules if r.startswith("NKI1")}
    assert seen >= {f"NKI1{n:02d}" for n in range(1, 12)}, sorted(seen)
