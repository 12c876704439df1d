"""CUDA/Triton-leftover (NKI4xx) and numerics (NKI5xx) fixtures: realistic
ported kernels are reported exactly on their ``# expect:`` lines (both
families, NKI433 port-residue included), their fully ported twins are clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixture_markers import check_fixture, expected_markers, lint_file

ROOT = Path(__file__).resolve().parent.parent / "fixtures"
DIRS = (ROOT / "cuda", ROOT / "numerics")
BAD = sorted(p for d in DIRS for p in d.glob("*_bad.py"))
GOOD = sorted(p for d in DIRS for p in d.glob("*_good.py"))
FAMILIES = ("NKI4", "NKI5")



def test_every_bad_fixture_has_a_fixed_twin():
    assert len(BAD) >= 6
    assert {p.name.replace("_bad", "_good") for p in BAD} == {p.name for p in GOOD}


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_fixture_is_reported_exactly_on_its_markers(path):
    markers = expected_markers(path.read_text(encoding="utf-8"))
    assert any(r.startswith(FAMILIES) for rules in markers.values() for r in rules), "fixture has no NKI4/NKI5 marker"
    outcome = check_fixture(path, FAMILIES)
    assert outcome.ok, outcome.describe()


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_fixed_twin_is_clean(path):
    assert not expected_markers(path.read_text(encoding="utf-8"))
    outcome = check_fixture(path, FAMILIES)
    assert outcome.ok, outcome.describe()


@pytest.mark.parametrize("path", BAD + GOOD, ids=lambda p: p.name)
def test_rules_do_not_crash_on_fixtures(path):
    findings = lint_file(path, select=("NKI4", "NKI5", "NKI003"))
    crashes = [f.message for f in findings if f.rule_id == "NKI003"]
    assert not crashes, crashes


def test_the_six_required_ports_are_present():
    names = {p.name for p in BAD}
    for required in ("triton_vector_add_bad.py", "triton_softmax_bad.py", "cuda_matmul_shared_bad.py",
                     "tree_reduction_bad.py", "layernorm_bf16_bad.py", "numba_elementwise_bad.py"):
        assert required in names


def test_fixtures_cover_both_api_generations():
    texts = [p.read_text(encoding="utf-8") for p in BAD]
    assert any("import neuronxcc.nki" in t for t in texts)
    assert any("\nimport nki\n" in t for t in texts)


def test_fixtures_exercise_most_rules_of_both_families():
    from nkilint.plugins import installed_rules

    mine = {r.id for r in installed_rules() if r.id.startswith(FAMILIES)}
    seen = set()
    for path in BAD:
        for rules in expected_markers(path.read_text(encoding="utf-8")).values():
            seen |= {r for r in rules if r.startswith(FAMILIES)}
    missing = mine - seen
    assert not missing, f"rules without a fixture marker: {sorted(missing)}"
