"""The release table (nkilint.releases): parsing, NKI aliases, the facts
rules query, the package versions that identify a release, and the
generated docs/releases.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nkilint.cli import cli
from nkilint.config import Settings
from nkilint.releases import (
    ALLOWED,
    ERROR,
    FACTS,
    LATEST_RELEASE,
    NOTE,
    RELEASES,
    WARNING,
    ReleaseError,
    parse_release,
    release_of_nki,
)
from nkilint.releases.packages import resolve
from nkilint.versions import KNOWN_VERSIONS, V0_1, V0_2, V0_3, V0_6, V0_7, V0_8, NkiVersion

ROOT = Path(__file__).resolve().parent.parent


def R(text: str):
    return parse_release(text)


# -- the table ----------------------------------------------------------------------
def test_every_minor_release_from_2_20_to_2_34_in_order():
    assert [r.minor for r in RELEASES] == [f"2.{n}" for n in range(20, 35)]
    assert LATEST_RELEASE.minor == "2.34"
    assert all(a < b for a, b in zip(RELEASES, RELEASES[1:]))
    assert all(r.date < s.date for r, s in zip(RELEASES, RELEASES[1:]))


@pytest.mark.parametrize("text, minor", [("2.24", "2.24"), ("2.24.0", "2.24"), ("2.24.1", "2.24"), ("v2.29.1", "2.29"),
                                         (" 2.34 ", "2.34"), ("2.33.1", "2.33")])
def test_patch_releases_mean_their_minor(text, minor):
    assert R(text).minor == minor


@pytest.mark.parametrize("text", ["2.19", "2.35", "2", "2.x", "3.0", "2.24.1.0", ""])
def test_unknown_or_malformed_releases_are_rejected_with_the_valid_range(text):
    with pytest.raises(ReleaseError, match=r"2\.20 \.\.\. 2\.34"):
        R(text)


@pytest.mark.parametrize("version, minor", [("0.1", "2.26"), ("0.2", "2.28"), ("0.3", "2.29"), ("0.4", "2.30"),
                                            ("0.5", "2.31"), ("0.6", "2.32"), ("0.7", "2.33"), ("0.8", "2.34")])
def test_nki_version_is_an_alias_for_its_newest_release(version, minor):
    assert release_of_nki(NkiVersion.parse(version)).minor == minor


def test_each_release_maps_to_its_nki_version():
    assert {r.minor: str(r.nki) for r in RELEASES if r.minor in ("2.24", "2.27", "2.33", "2.34")} == {
        "2.24": "0.1", "2.27": "0.2", "2.33": "0.7", "2.34": "0.8"}
    assert set(KNOWN_VERSIONS) == {r.nki for r in RELEASES}
    assert V0_7 > V0_6 and V0_8 > V0_7 and str(V0_8) == "0.8"


def test_namespaces_frontends_and_hardware_by_release():
    assert R("2.26").imports == ("neuronxcc.nki",) and not R("2.26").current_imports
    assert R("2.27").legacy_imports and R("2.27").current_imports
    assert R("2.34").imports == ("nki",)  # neuronxcc.nki removed from neuronx-cc
    assert [r.minor for r in RELEASES if r.frontend == "tracer"] == ["2.33", "2.34"]
    assert "trn2" not in R("2.20").hardware and "trn2" in R("2.21").hardware
    assert "trn1" not in R("2.29").hardware  # the NKI FAQ: Trainium2 and Trainium3


def test_settings_keep_release_and_nki_version_together():
    assert Settings().release == LATEST_RELEASE and Settings().nki_version == V0_8
    assert Settings(nki_version=V0_1).release.minor == "2.26"
    assert Settings(release=R("2.27")).nki_version == V0_2
    assert Settings(release=R("2.27"), nki_version=V0_2).release.minor == "2.27"
    with pytest.raises(ValueError, match="SDK 2.24 ships NKI 0.1"):
        Settings(release=R("2.24"), nki_version=V0_3)
    moved = Settings(release=R("2.24")).merged(nki_version=V0_6)
    assert (moved.release.minor, moved.nki_version) == ("2.32", V0_6)


# -- facts --------------------------------------------------------------------------
@pytest.mark.parametrize("minor, status", [("2.22", ALLOWED), ("2.23", WARNING), ("2.24", WARNING), ("2.25", ERROR),
                                           ("2.26", ERROR)])
def test_block_dimensions_warn_in_2_23_and_2_24_and_are_errors_from_2_25(minor, status):
    st = FACTS.status("block-dimension", R(minor))
    assert st.status is status


def test_a_fact_status_carries_its_step_source_and_confidence():
    st = FACTS.status("block-dimension", R("2.24"))
    assert st.since.minor == "2.23" and st.step.tag == "D"
    assert st.upcoming.since == "2.25" and st.upcoming.status is ERROR and st.upcoming.tag == "A"
    assert "announce-eos-block-dimension-nki" in FACTS.status("block-dimension", R("2.25")).citation
    assert st.describe().endswith("warning since SDK 2.23 (deprecated); error from SDK 2.25")


@pytest.mark.parametrize("fact, minor, status", [
    ("dynamic-range-loop", "2.28", ERROR),  # not yet introduced
    ("dynamic-range-loop", "2.31", ALLOWED),
    ("dynamic-range-loop", "2.32", WARNING),
    ("dynamic-range-loop", "2.33", ERROR),
    ("while-register", "2.33", ERROR),
    ("legacy-namespace-import", "2.26", ALLOWED),
    ("legacy-namespace-import", "2.33", WARNING),
    ("legacy-namespace-import", "2.34", ERROR),
    ("legacy-namespace-in-kernel", "2.29", WARNING),
    ("legacy-namespace-in-kernel", "2.30", ERROR),
    ("spmd-grid-lnc-mismatch", "2.32", WARNING),
    ("spmd-grid-lnc-mismatch", "2.33", ERROR),
    ("virtual-register", "2.33", ALLOWED),
    ("virtual-register", "2.34", WARNING),
    ("nki-scalar", "2.32", ERROR),
    ("nki-scalar", "2.33", ALLOWED),
    ("if-else", "2.33", ERROR),
    ("if-else", "2.34", ALLOWED),
    ("jit-on-subkernel", "2.32", ERROR),
    ("jit-on-subkernel", "2.33", ALLOWED),
    ("affine-sequential-range", "2.34", NOTE),
    ("torch-nki-jit", "2.23", WARNING),
    ("torch-nki-jit", "2.24", ERROR),
    ("jax-nki-call", "2.23", ERROR),
    ("tensor-copy-dynamic", "2.30", ERROR),
    ("standalone-nki-package", "2.26", ERROR),
    ("standalone-nki-package", "2.27", ALLOWED),
    ("isa-dtype-keyword", "2.27", WARNING),
    ("isa-dtype-keyword", "2.28", ERROR),
    ("isa-dtype-keyword", "2.34", ERROR),
    ("isa-mask-keyword", "2.27", WARNING),
    ("isa-mask-keyword", "2.28", ERROR),
    ("unknown-keyword", "2.27", WARNING),
    ("unknown-keyword", "2.28", ERROR),
])
def test_facts_by_release(fact, minor, status):
    assert FACTS.status(fact, R(minor)).status is status


def test_every_fact_step_names_a_known_release_a_source_and_a_tag():
    for fact in FACTS:
        assert fact.steps, fact.id
        assert [s.release for s in fact.steps] == sorted(s.release for s in fact.steps), fact.id
        for step in fact.steps:
            assert step.since in {r.minor for r in RELEASES}
            assert step.tag in ("D", "A", "I", "X") and step.source.startswith(("sdk:", "rtd:")), (fact.id, step)


def test_unknown_fact_names_the_known_ones():
    with pytest.raises(KeyError, match="block-dimension"):
        FACTS.status("block-dimensions", LATEST_RELEASE)


def test_last_release_accepting_legacy_code_in_kernels_is_2_29():
    assert FACTS.last_release_accepting("legacy-namespace-in-kernel").minor == "2.29"
    assert FACTS.last_release_accepting("legacy-namespace-import").minor == "2.33"


# -- package versions -> release ------------------------------------------------------
@pytest.mark.parametrize("package, spec, minor, how", [
    ("neuronx-cc", "==2.19.8089.0", "2.24", "exact"),  # the example
    ("neuronx-cc", "==2.15.141.0", "2.20", "exact"),  # a patch release's compiler
    ("neuronx-cc", "==2.24.8799.0", "2.29", "exact"),
    ("neuronx-cc", "==2.19.9999.0", "2.24", "nearest"),  # an unlisted build of the 2.19 series
    ("neuronx-cc", "==2.29.1234.0", "2.34", "nearest"),
    ("neuronx-cc", ">=2.19,<2.21", "2.25", "range"),  # a range takes its newest release
    ("neuronx-cc", "<2.25", "2.29", "range"),
    ("neuronx-cc", "~=2.28.0", "2.33", "range"),
    ("neuronx-cc", "==2.21.*", "2.26", "range"),
    ("neuronx-cc", ">=0.0.0a0", "2.34", "range"),
    ("neuronx_cc", "==2.19.8089.0", "2.24", "exact"),  # PEP 503 names
    ("nki", "==0.1.0", "2.27", "exact"),  # the nki package of 2.27 is 0.1.0
    ("nki", "==0.6.0", "2.32", "exact"),
    ("nki", "==0.8.0", "2.34", "exact"),
    ("nki", ">=0.3,<0.5", "2.30", "range"),
    ("neuronx-cc-stubs", "==2.22.12471.0", "2.27", "exact"),
    ("neuronx-cc-stubs", ">=0", "2.29", "range"),  # no stubs package after 2.29
    ("torch-neuronx", "==2.7.0.2.8.6734", "2.24", "exact"),
    ("torch-neuronx", "==2.9.0.2.15.32035", "2.33", "exact"),  # the last XLA wheel, shipped through 2.33
    ("torch-neuronx", ">=2.9", "2.34", "newer"),
    ("jax-neuronx", "==0.6.0.1.0.1296", "2.24", "exact"),
    ("jax-neuronx", "==0.10.0.1.0.15472", "2.33", "exact"),  # 2.33.1
    ("jax-neuronx", ">=0.10", "2.34", "newer"),
])
def test_pinned_versions_map_to_releases(package, spec, minor, how):
    found = resolve(package, spec)
    assert found is not None and (found.release.minor, found.how) == (minor, how)


@pytest.mark.parametrize("package, spec", [("neuronx-cc", "==1.0"), ("numpy", "==1.26"), ("neuronx-cc", "==="),
                                           ("neuronx-cc", ">=3")])
def test_pins_that_name_no_release(package, spec):
    assert resolve(package, spec) is None


def test_bounded_pins_are_told_apart_from_open_ranges():
    assert resolve("neuronx-cc", "==2.19.8089.0").bounded
    assert resolve("neuronx-cc", "~=2.19.0").bounded
    assert not resolve("neuronx-cc", ">=2.19").bounded


# -- the releases page -----------------------------------------------------------------
def test_releases_doc_is_up_to_date():
    result = CliRunner().invoke(cli, ["releases", "--format", "markdown"])
    assert result.exit_code == 0
    committed = (ROOT / "docs" / "releases.md").read_text(encoding="utf-8")
    assert committed == result.output, "regenerate with: nkilint releases --format markdown > docs/releases.md"


def test_releases_doc_lists_every_release_and_what_changed():
    text = (ROOT / "docs" / "releases.md").read_text(encoding="utf-8")
    for release in RELEASES:
        assert f"## SDK {release.minor} (" in text
    assert "**error** (removed, A): block dimensions" in text
    assert "| 2.19.8089.0 |" in text


def test_releases_command_json_and_text():
    import json

    doc = json.loads(CliRunner().invoke(cli, ["releases", "--format", "json"]).output)
    assert [r["sdk"] for r in doc][0] == "2.20" and doc[-1]["nki_version"] == "0.8"
    r24 = next(r for r in doc if r["sdk"] == "2.24")
    assert r24["patches"][1]["packages"]["neuronx-cc"] == ["2.19.8089.0"]
    assert any(c["fact"] == "block-dimension" for c in next(r for r in doc if r["sdk"] == "2.25")["changes"])
    text = CliRunner().invoke(cli, ["releases"]).output
    assert "0.1 = 2.26" in text and text.splitlines()[0].split()[:3] == ["SDK", "DATE", "NKI"]
