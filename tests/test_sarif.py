"""SARIF 2.1.0 output. Every log is validated against the official schema
(the `sarif_log` fixture); these tests check what the schema cannot:
descriptors, indices, positions, URIs, fingerprints, suppressions."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CLEAN_KERNEL, LEGACY_IMPORT_ONLY, LEGACY_KERNEL, write
from nkilint import __version__
from nkilint.fingerprint import line_hashes
from nkilint.plugins import installed_rules

IMPORT_LINE = "import neuronxcc.nki.language as nl"
OFFICIAL_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@pytest.fixture
def sarif(cli, sarif_log):
    def run(*args: str, input: str | None = None) -> tuple[int, dict, str]:
        result = cli("check", "--format", "sarif", *args, input=input)
        return result.exit_code, sarif_log(result.stdout), result.stdout

    return run


def test_log_header_and_driver(sarif, project):
    write(project / "k.py", LEGACY_KERNEL)
    code, log, _ = sarif("k.py")
    assert code == 1
    assert log["$schema"] == OFFICIAL_SCHEMA
    assert log["version"] == "2.1.0"
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "nkilint"
    assert driver["semanticVersion"] == __version__
    assert driver["informationUri"].startswith("https://")
    assert run["columnKind"] == "unicodeCodePoints"


def test_every_rule_is_described(sarif, project):
    write(project / "k.py", CLEAN_KERNEL)
    _, log, _ = sarif("k.py")
    descriptors = log["runs"][0]["tool"]["driver"]["rules"]
    ruleset = installed_rules()
    assert [d["id"] for d in descriptors] == [r.id for r in ruleset]
    for d, rule in zip(descriptors, ruleset):
        assert d["name"] == rule.name
        assert d["shortDescription"]["text"] == rule.summary
        assert d["fullDescription"]["text"].strip()
        assert rule.summary in d["help"]["text"]
        assert d["help"]["markdown"].startswith(f"# {rule.id} {rule.name}")
        assert d["helpUri"].startswith("https://") and rule.id.lower() in d["helpUri"]
        # "warning" is sarif-om's default and must still be written.
        assert d["defaultConfiguration"]["level"] == rule.level.label
        assert d["properties"]["tags"][0] == rule.family
        assert d["properties"]["precision"] == rule.precision
    levels = {d["id"]: d["defaultConfiguration"]["level"] for d in descriptors}
    assert levels["NKI004"] == "warning" and levels["NKI601"] == "error"


def test_src_root_is_an_absolute_directory_uri(sarif, project):
    write(project / "k.py", LEGACY_KERNEL)
    _, log, _ = sarif("k.py")
    uri = log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert uri.startswith("file:///") and uri.endswith("/")
    assert uri == project.resolve().as_uri() + "/"


def test_result_fields(sarif, project):
    text = LEGACY_KERNEL
    write(project / "pkg" / "k.py", text)
    code, log, _ = sarif("pkg/k.py")
    run = log["runs"][0]
    [res] = run["results"]
    assert res["ruleId"] == "NKI601"
    assert run["tool"]["driver"]["rules"][res["ruleIndex"]]["id"] == "NKI601"
    assert res["level"] == "error"
    assert "legacy namespace 'neuronxcc.nki.language'" in res["message"]["text"]
    assert "import nki.language as nl" in res["message"]["text"]  # the hint
    [location] = res["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "pkg/k.py", "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": len(IMPORT_LINE) + 1}
    assert res["partialFingerprints"]["primaryLocationLineHash"] == line_hashes(text)[1]
    assert "suppressions" not in res


def test_warning_level_is_written(sarif, project):
    write(project / "k.py", LEGACY_IMPORT_ONLY)
    write(project / "n.py", "x = 1  # noqa: NKI601\n")
    _, log, raw = sarif("--sdk", "2.33", "k.py", "n.py")  # an import-only legacy file warns before 2.34
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("NKI601", "warning"), ("NKI004", "warning")]
    assert raw.count('"level": "warning"') >= 2 + 1  # two results and NKI004's default


def test_rule_index_points_at_the_rule(sarif, project):
    write(project / "k.py", "import neuronxcc.nki.language as nl  # noqa: NKI001\n" + LEGACY_KERNEL[len(IMPORT_LINE) + 1 :])
    _, log, _ = sarif("k.py")
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = sorted(r["ruleId"] for r in run["results"])
    assert ids == ["NKI004", "NKI601"]
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]


def test_non_ascii_columns_count_code_points(sarif, project):
    prefix = 's = "é€😀"; '
    line = prefix + IMPORT_LINE
    text = line + "\n\n\ndef kernel(a):\n    return nl.load(a)\n"
    write(project / "k.py", text)
    _, log, _ = sarif("k.py")
    [res] = log["runs"][0]["results"]
    region = res["locations"][0]["physicalLocation"]["region"]
    assert region["startColumn"] == len(prefix) + 1 == 12
    assert region["endColumn"] == len(line) + 1
    assert res["partialFingerprints"]["primaryLocationLineHash"] == line_hashes(text)[1]


def test_multi_line_region_and_crlf(sarif, project):
    text = "import neuronxcc.nki.language as nl\r\n\r\n\r\ndef kernel(a):\r\n    return nl.load(a)\r\n"
    write(project / "k.py", text.encode())
    _, log, _ = sarif("k.py")
    [res] = log["runs"][0]["results"]
    assert res["partialFingerprints"]["primaryLocationLineHash"] == line_hashes(text.replace("\r\n", "\n"))[1]
    assert res["locations"][0]["physicalLocation"]["region"]["endColumn"] == len(IMPORT_LINE) + 1


def test_uri_is_percent_encoded(sarif, project):
    write(project / "my kernels" / "k#1.py", LEGACY_KERNEL)
    _, log, _ = sarif("my kernels/k#1.py")
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "my%20kernels/k%231.py", "uriBaseId": "%SRCROOT%"}


def test_file_outside_the_root_gets_an_absolute_uri(sarif, project, tmp_path):
    outside = write(tmp_path / "elsewhere" / "k.py", LEGACY_KERNEL)
    _, log, _ = sarif(str(outside))
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location["uri"] == outside.resolve().as_uri()
    assert "uriBaseId" not in location


def test_stdin_filename_in_sarif(sarif, project):
    _, log, _ = sarif("-", "--stdin-filename", "kernels/k.py", input=LEGACY_KERNEL)
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "kernels/k.py", "uriBaseId": "%SRCROOT%"}


def test_no_findings_gives_an_empty_result_list(sarif, project):
    write(project / "k.py", CLEAN_KERNEL)
    code, log, _ = sarif("k.py")
    assert code == 0
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True


SUPPRESSED = "import neuronxcc.nki.language as nl  # noqa: NKI601\nimport neuronxcc.nki as nki\n\n\ndef kernel(a):\n    return nl.load(a) + nki.x\n"


def test_suppressed_results_are_omitted_by_default(sarif, project):
    write(project / "k.py", SUPPRESSED)
    _, log, _ = sarif("k.py")
    results = log["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == [("NKI601", 2)]
    assert all("suppressions" not in r for r in results)


def test_include_suppressed(sarif, project):
    write(project / "k.py", SUPPRESSED)
    _, log, raw = sarif("--include-suppressed", "k.py")
    results = log["runs"][0]["results"]
    by_line = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r for r in results}
    assert set(by_line) == {1, 2}
    assert by_line[1]["suppressions"] == [{"kind": "inSource", "status": "accepted"}]
    assert "suppressions" not in by_line[2]
    assert '"state"' not in raw  # the pre-release name


def test_sarif_of_bad_inputs_is_valid(sarif, project):
    write(project / "syntax.py", "x = (1,\n")
    write(project / "latin.py", b"x = '\xff'\n")
    write(project / "bin.py", b"\x00\x01")
    write(project / "ok.py", LEGACY_KERNEL)
    code, log, _ = sarif("syntax.py", "latin.py", "bin.py", "ok.py", "missing.py")
    assert code == 2
    run = log["runs"][0]
    assert sorted(r["ruleId"] for r in run["results"]) == ["NKI001", "NKI002", "NKI002", "NKI601"]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert any("missing.py" in n["message"]["text"] for n in notes)


# -- the writer itself ----------------------------------------------------------------
def test_writer_keeps_explicit_defaults_and_drops_unset_ones():
    import sarif_om as so

    from nkilint.sarif_writer import make, to_json

    explicit = to_json(make(so.Result, message=make(so.Message, text="m"), level="warning", rule_id="X1"))
    assert explicit == {"message": {"text": "m"}, "level": "warning", "ruleId": "X1"}
    stock = to_json(so.Result(message=so.Message(text="m"), level="warning"))
    assert "level" not in stock and "kind" not in stock
    suppression = to_json(make(so.Suppression, kind="inSource", state="accepted"))
    assert suppression == {"kind": "inSource", "status": "accepted"}
    bag = to_json(make(so.PropertyBag, tags=["memory"], _extra={"precision": "high"}))
    assert bag == {"tags": ["memory"], "precision": "high"}


def test_output_file_is_valid_sarif(cli, project, sarif_log):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "--format", "sarif", "-o", "report.sarif", "k.py")
    assert result.exit_code == 1
    log = sarif_log(Path(project / "report.sarif").read_text(encoding="utf-8"))
    assert log["runs"][0]["results"][0]["ruleId"] == "NKI601"
