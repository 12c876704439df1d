"""Adopting nkilint on a repository with findings: --write-baseline /
--baseline (matched across line moves, independent of the cwd) and
--add-noqa (merged with existing comments, never inside strings)."""

from __future__ import annotations

import json

import pytest

from nkilint.findings import Finding, Level, Span
from nkilint.noqa_writer import add_noqa

from conftest import LEGACY_KERNEL, write

# Two findings: NKI101 (256 partitions) on line 7 and line 8.
TWO_FAULTS = """\
import nki
import nki.language as nl


@nki.jit
def kernel(a):
    t = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
    u = nl.ndarray((512, 64), dtype=nl.float32, buffer=nl.sbuf)
    return a
"""

NEW_FAULT = "    v = nl.ndarray((1024, 8), dtype=nl.float32, buffer=nl.sbuf)\n"


def _check(cli, *args, **kw):
    return cli("check", "--isolated", "--select", "NKI101,NKI601,NKI004", *args, **kw)


def _active(result) -> list[tuple[str, int]]:
    doc = json.loads(result.stdout)
    return [(f["rule"], f["range"]["start"]["line"]) for f in doc["findings"] if not f["suppressed"]]


# -- baseline ------------------------------------------------------------------------
def test_write_baseline_then_baseline_run_passes(cli, project):
    write(project / "k.py", TWO_FAULTS)
    written = _check(cli, "--write-baseline", "base.json", ".")
    assert written.exit_code == 0, written.stderr
    assert "wrote 2 findings to the baseline base.json" in written.stderr
    doc = json.loads((project / "base.json").read_text())
    assert [(e["rule"], e["path"], e["line"]) for e in doc["findings"]] == [("NKI101", "k.py", 7), ("NKI101", "k.py", 8)]
    result = _check(cli, "--baseline", "base.json", ".")
    assert result.exit_code == 0, result.stdout
    assert "All checks passed! 2 in the baseline." in result.stdout


def test_baseline_survives_line_moves_and_reports_only_the_new_finding(cli, project):
    path = write(project / "k.py", TWO_FAULTS)
    _check(cli, "--write-baseline", "base.json", ".")
    lines = TWO_FAULTS.splitlines(keepends=True)
    moved = lines[:5] + ["# a comment\n", "\n"] + lines[5:8] + [NEW_FAULT] + lines[8:]
    path.write_text("".join(moved))
    result = _check(cli, "--baseline", "base.json", "--format", "json", ".")
    assert result.exit_code == 1
    assert _active(result) == [("NKI101", 11)]
    doc = json.loads(result.stdout)
    assert doc["summary"]["baselined"] == 2
    assert sorted(f["range"]["start"]["line"] for f in doc["findings"] if f["baselined"]) == [9, 10]


def test_a_second_copy_of_a_baselined_fault_is_new(cli, project):
    path = write(project / "k.py", TWO_FAULTS)
    _check(cli, "--write-baseline", "base.json", ".")
    lines = TWO_FAULTS.splitlines(keepends=True)
    path.write_text("".join(lines[:7] + [lines[6]] + lines[7:]))
    result = _check(cli, "--baseline", "base.json", "--format", "json", ".")
    assert result.exit_code == 1
    assert len(_active(result)) == 1


def test_baseline_from_another_directory_matches(cli, project, monkeypatch):
    (project / ".git").mkdir()
    write(project / "kernels" / "k.py", TWO_FAULTS)
    _check(cli, "--write-baseline", "base.json", "kernels")
    monkeypatch.chdir(project / "kernels")
    result = _check(cli, "--baseline", "../base.json", ".")
    assert result.exit_code == 0, result.stdout


def test_stale_baseline_entries_are_counted(cli, project):
    path = write(project / "k.py", TWO_FAULTS)
    _check(cli, "--write-baseline", "base.json", ".")
    path.write_text(TWO_FAULTS.replace("(512, 64)", "(128, 64)"))
    result = _check(cli, "--baseline", "base.json", ".")
    assert result.exit_code == 0
    assert "1 baseline entry of base.json match no finding" in result.stderr


@pytest.mark.parametrize("content,fragment", [
    (None, "does not exist; create it with --write-baseline"),
    ("{not json", "not valid JSON"),
    ('{"findings": []}', "is not an nkilint baseline"),
])
def test_bad_baseline_is_a_usage_error(cli, project, content, fragment):
    write(project / "k.py", TWO_FAULTS)
    if content is not None:
        write(project / "base.json", content)
    result = _check(cli, "--baseline", "base.json", ".")
    assert result.exit_code == 2
    assert fragment in result.stderr


def test_baselined_findings_are_external_suppressions_in_sarif(cli, project, sarif_log):
    write(project / "k.py", TWO_FAULTS)
    _check(cli, "--write-baseline", "base.json", ".")
    log = sarif_log(_check(cli, "--baseline", "base.json", "--format", "sarif", "--include-suppressed", ".").stdout)
    kinds = [r["suppressions"][0]["kind"] for r in log["runs"][0]["results"]]
    assert kinds == ["external", "external"]


# -- add-noqa ------------------------------------------------------------------------------
def test_add_noqa_then_a_plain_run_is_clean(cli, project):
    path = write(project / "k.py", TWO_FAULTS)
    legacy = write(project / "legacy.py", LEGACY_KERNEL)
    result = _check(cli, "--add-noqa", ".")
    assert result.exit_code == 0, result.stderr
    assert "Added 3 noqa directives to 2 files." in result.stderr
    assert "buffer=nl.sbuf)  # noqa: NKI101\n" in path.read_text()
    assert legacy.read_text().startswith("import neuronxcc.nki.language as nl  # noqa: NKI601\n")
    plain = _check(cli, ".")
    assert plain.exit_code == 0, plain.stdout
    assert "NKI004" not in plain.stdout
    again = _check(cli, "--add-noqa", ".")
    assert "Added 0 noqa directives to 0 files." in again.stderr


def _finding(rule: str, line: int) -> Finding:
    return Finding(rule, Level.ERROR, "m", "k.py", Span(line, 1, line, 2))


def test_add_noqa_merges_with_existing_comments():
    text = "a = 1  # noqa: F401\nb = 2  # type: ignore\nc = 3  # noqa\nd = 4\n"
    edit = add_noqa(text, [_finding("NKI601", 1), _finding("NKI101", 2), _finding("NKI101", 3), _finding("NKI201", 4),
                           _finding("NKI101", 4)])
    assert edit.text == (
        "a = 1  # noqa: F401, NKI601\nb = 2  # type: ignore  # noqa: NKI101\nc = 3  # noqa\nd = 4  # noqa: NKI101, NKI201\n"
    )
    assert edit.added == 4


def test_add_noqa_never_edits_inside_strings_or_continuations():
    text = 'x = """first\nsecond"""\ny = 1 + \\\n    2\nz = f"""{x}\nlast"""\nw = 3\r\n'
    edit = add_noqa(text, [_finding("NKI101", 1), _finding("NKI101", 3), _finding("NKI101", 5), _finding("NKI101", 7)])
    assert edit.text == text.replace("w = 3\r\n", "w = 3  # noqa: NKI101\r\n")
    assert [f.span.start_line for f in edit.skipped] == [1, 3, 5]


def test_add_noqa_leaves_tool_findings_alone():
    text = "a = 1  # noqa: NKI999\n"
    assert add_noqa(text, [_finding("NKI004", 1), _finding("NKI001", 1)]).text == text


def test_add_noqa_refuses_stdin_and_fix(cli, project):
    assert _check(cli, "--add-noqa", "-", input="x = 1\n").exit_code == 2
    assert _check(cli, "--add-noqa", "--fix", ".").exit_code == 2
