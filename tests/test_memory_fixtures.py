"""Memory-family fixtures (NKI2xx): bad kernels are reported exactly on their
``# expect:`` lines (with the marked levels) on every target their header
names, and their fixed twins are clean on the same targets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fixture_markers import check_fixture, expected_markers, lint_file

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "memory"
BAD = sorted(FIXTURES.glob("*_bad.py"))
GOOD = sorted(FIXTURES.glob("*_good.py"))
HEADER = re.compile(r"#\s*nkilint-fixture:\s*targets=([a-z0-9,]+)")


def targets_of(path: Path) -> list[str]:
    m = HEADER.search(path.read_text(encoding="utf-8"))
    assert m, f"{path.name} has no '# nkilint-fixture: targets=...' header"
    return m.group(1).split(",")


CASES_BAD = [pytest.param(p, t, id=f"{p.name}-{t}") for p in BAD for t in targets_of(p)]
CASES_GOOD = [pytest.param(p, t, id=f"{p.name}-{t}") for p in GOOD for t in targets_of(p)]


def test_every_bad_fixture_has_a_fixed_twin():
    assert len(BAD) >= 10, "memory fixtures missing"
    assert {p.name.replace("_bad", "_good") for p in BAD} == {p.name for p in GOOD}


@pytest.mark.parametrize("path,target", CASES_BAD)
def test_bad_fixture_is_reported_exactly_on_its_markers(path, target):
    markers = expected_markers(path.read_text(encoding="utf-8"))
    assert any(rule.startswith("NKI2") for rules in markers.values() for rule in rules), "no NKI2 marker"
    outcome = check_fixture(path, "NKI2", target=target)
    assert outcome.ok, outcome.describe()


@pytest.mark.parametrize("path,target", CASES_GOOD)
def test_fixed_twin_is_clean(path, target):
    assert not expected_markers(path.read_text(encoding="utf-8"))
    outcome = check_fixture(path, "NKI2", target=target)
    assert outcome.ok, outcome.describe()


@pytest.mark.parametrize("path", BAD + GOOD, ids=lambda p: p.name)
def test_memory_rules_do_not_crash_on_fixtures(path):
    crashes = [f for f in lint_file(path, select=("NKI2", "NKI003")) if f.rule_id == "NKI003" and "NKI2" in f.message]
    assert not crashes, [f.message for f in crashes]


def test_every_rule_of_the_family_is_exercised_by_a_fixture():
    seen = set()
    for path in BAD:
        for rules in expected_markers(path.read_text(encoding="utf-8")).values():
            seen |= {r for r in rules if r.startswith("NKI2")}
    from nkilint.plugins import installed_rules

    family = {r.id for r in installed_rules() if r.family == "memory"}
    assert family and family <= seen, sorted(family - seen)


def test_both_api_generations_are_covered():
    names = {p.name for p in BAD}
    assert any(n.startswith("current_") for n in names) and any(n.startswith("legacy_") for n in names)


@pytest.mark.parametrize("target", ["trn1", "trn2", "trn3"])
def test_sbuf_cache_edge_on_each_target(target):
    """The cache fixture of each target is exactly at the usable budget; one
    more element is over it."""
    good = FIXTURES / f"current_sbuf_cache_{target}_good.py"
    bad = FIXTURES / f"current_sbuf_cache_{target}_bad.py"
    assert not [f for f in lint_file(good, target=target, select=("NKI2",))]
    found = [f for f in lint_file(bad, target=target, select=("NKI204",))]
    assert found and all("B per partition" in f.message for f in found)
