"""What a SARIF run records about itself: the invocation (command line,
working directory, times, a truthful executionSuccessful), the analysis
category, the target and selection, a fingerprint unique per result, and
GitHub's result limit."""

from __future__ import annotations

import json

import nkilint.reporters.sarif as sarif

from conftest import run_nkilint, write

# Two NKI101 findings on one line (same rule, same line hash).
SAME_LINE = """\
import nki
import nki.language as nl


@nki.jit
def kernel(a):
    t, u = nl.ndarray((256, 8), dtype=nl.float32, buffer=nl.sbuf), nl.ndarray((256, 8), dtype=nl.float32, buffer=nl.sbuf)
    return a
"""


def _run(log: dict) -> dict:
    return log["runs"][0]


def test_invocation_records_the_command_line_and_times(project, sarif_log):
    write(project / "k.py", SAME_LINE)
    proc = run_nkilint("check", "--isolated", "--select", "NKI101", "--format", "sarif", "k.py", cwd=project)
    assert proc.returncode == 1
    run = _run(sarif_log(proc.stdout))
    (invocation,) = run["invocations"]
    assert invocation["commandLine"] == "nkilint check --isolated --select NKI101 --format sarif k.py"
    assert invocation["arguments"][-1] == "k.py"
    assert invocation["workingDirectory"]["uri"] == project.resolve().as_uri() + "/"
    assert invocation["startTimeUtc"].endswith("Z") and invocation["startTimeUtc"] <= invocation["endTimeUtc"]
    assert invocation["executionSuccessful"] is True and invocation["exitCode"] == 1
    assert run["properties"]["nkilint.commandLine"] == invocation["commandLine"]


def test_exit_2_is_not_a_successful_execution(cli, project, sarif_log):
    write(project / "k.py", SAME_LINE)
    result = cli("check", "--format", "sarif", "k.py", "missing.py")
    assert result.exit_code == 2
    invocation = _run(sarif_log(result.stdout))["invocations"][0]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2


def test_category_target_release_and_selection(cli, project, sarif_log):
    write(project / "k.py", SAME_LINE)
    result = cli("check", "--format", "sarif", "--target", "trn1", "--sdk", "2.24", "--select", "partition",
                 "--ignore", "NKI104", "k.py")
    run = _run(sarif_log(result.stdout))
    assert run["automationDetails"]["id"] == "nkilint/trn1/"
    props = run["properties"]
    assert props["nkilint.sdk"] == "2.24" and props["nkilint.hardwareTarget"] == "trn1"
    assert props["nkilint.release"].startswith("SDK 2.24")
    selection = props["nkilint.selection"]
    assert selection["select"] == ["partition"] and selection["ignore"] == ["NKI104"]
    assert "NKI101" in selection["enabled"] and "NKI104" not in selection["enabled"]
    assert all(rid.startswith("NKI1") for rid in selection["enabled"])


def test_every_result_key_is_unique(cli, project, sarif_log):
    write(project / "k.py", SAME_LINE)
    write(project / "j.py", SAME_LINE)
    run = _run(sarif_log(cli("check", "--format", "sarif", "--select", "NKI101", ".").stdout))
    results = run["results"]
    assert len(results) == 4
    line_keys = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                  r["partialFingerprints"]["primaryLocationLineHash"]) for r in results}
    assert len(line_keys) == 2  # the line hash alone does not tell the two apart
    keys = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             json.dumps(r["partialFingerprints"], sort_keys=True)) for r in results}
    assert len(keys) == 4
    # Stable: the same file gives the same column keys.
    again = _run(sarif_log(cli("check", "--format", "sarif", "--select", "NKI101", ".").stdout))["results"]
    assert [r["partialFingerprints"] for r in again] == [r["partialFingerprints"] for r in results]


def test_result_limit_leaves_out_the_rest_with_a_notification(cli, project, sarif_log, monkeypatch):
    monkeypatch.setattr(sarif, "MAX_RESULTS", 1)
    write(project / "k.py", SAME_LINE)
    run = _run(sarif_log(cli("check", "--format", "sarif", "--select", "NKI101", "k.py").stdout))
    assert len(run["results"]) == 1
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert any("1 of 2 results were left out" in n["message"]["text"] for n in notes)


def test_a_log_over_the_upload_size_leaves_out_results_until_it_fits(cli, project, sarif_log, monkeypatch):
    # A tiny size limit stands for GitHub's 10 MB (gzip): what must go goes, least severe first.
    write(project / "k.py", SAME_LINE)
    full = cli("check", "--format", "sarif", "--select", "NKI101", "k.py").stdout
    import gzip as _gzip

    size = len(_gzip.compress(full.encode()))
    monkeypatch.setattr(sarif, "MAX_GZIP_BYTES", size - 1)
    out = cli("check", "--format", "sarif", "--select", "NKI101", "k.py").stdout
    run = _run(sarif_log(out))
    assert len(run["results"]) < 2
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert any("results were left out: the log would be" in t and "MB gzip-compressed" in t for t in notes), notes
