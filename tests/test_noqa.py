"""`# noqa` suppressions: what they suppress, and stale ones (NKI004)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write

KERNEL_BODY = "\n\ndef kernel(a):\n    return nl.load(a) + nisa.x + nki.y\n"


def _findings(cli, *args, source: str) -> tuple[int, list[dict]]:
    write(Path.cwd() / "k.py", source)
    # Only the tool rules and legacy-namespace: other families would add
    # findings on these small kernels that these tests are not about.
    select = () if any(a.startswith("--select") for a in args) else ("--select", "NKI0,NKI601")
    result = cli("check", "--format", "json", *select, *args, "k.py")
    return result.exit_code, json.loads(result.stdout)["findings"]


def _active(findings) -> list[tuple[str, int]]:
    return [(f["rule"], f["range"]["start"]["line"]) for f in findings if not f["suppressed"]]


def _suppressed(findings) -> list[tuple[str, int]]:
    return [(f["rule"], f["range"]["start"]["line"]) for f in findings if f["suppressed"]]


@pytest.mark.parametrize(
    "comment",
    ["# noqa: NKI601", "# noqa:NKI601", "#noqa: nki601", "# NOQA: NKI601", "# noqa: legacy-namespace", "# noqa", "# noqa: NKI004, NKI601"],
)
def test_noqa_suppresses(cli, project, comment):
    code, findings = _findings(cli, source=f"import neuronxcc.nki.language as nl  {comment}\n" + KERNEL_BODY)
    assert _suppressed(findings) == [("NKI601", 1)]
    assert _active(findings) == []
    assert code == 0


def test_suppressed_finding_is_omitted_from_text(cli, project):
    write(project / "k.py", "import neuronxcc.nki.language as nl  # noqa: NKI601\n" + KERNEL_BODY)
    result = cli("check", "--select", "NKI0,NKI601", "k.py")  # the body reads undefined nisa, nki (NKI728)
    assert result.exit_code == 0
    assert "NKI601" not in result.stdout
    assert "All checks passed! 1 suppressed by '# noqa'." in result.stdout


def test_noqa_with_several_codes(cli, project):
    source = (
        "import neuronxcc.nki.language as nl  # noqa: NKI001, NKI601\n"
        "import neuronxcc.nki.isa as nisa  # noqa: NKI002,legacy-namespace\n"
        "import neuronxcc.nki as nki  # noqa: NKI001\n" + KERNEL_BODY
    )
    code, findings = _findings(cli, source=source)
    assert _suppressed(findings) == [("NKI601", 1), ("NKI601", 2)]
    # Line 3: the NKI601 there is not suppressed, and NKI001 suppresses nothing.
    assert sorted(_active(findings)) == [("NKI004", 1), ("NKI004", 2), ("NKI004", 3), ("NKI601", 3)]
    by_line = {f["range"]["start"]["line"]: f["message"] for f in findings if f["rule"] == "NKI004"}
    assert "NKI001" in by_line[1] and "NKI601" not in by_line[1]
    assert "NKI002" in by_line[2]
    assert code == 1


def test_noqa_on_another_line_does_not_suppress(cli, project):
    code, findings = _findings(cli, source="# noqa: NKI601\nimport neuronxcc.nki.language as nl\n" + KERNEL_BODY)
    assert ("NKI601", 2) in _active(findings)
    assert ("NKI004", 1) in _active(findings)


def test_unused_noqa_is_reported(cli, project):
    code, findings = _findings(cli, source="import nki.language as nl  # noqa: NKI601\nx = 1  # noqa\n")
    active = [f for f in findings if not f["suppressed"]]
    # A bare `# noqa` may be another linter's: not judged.
    assert [(f["rule"], f["range"]["start"]["line"], f["level"]) for f in active] == [("NKI004", 1, "warning")]
    assert "unused suppression: NKI601" in active[0]["message"]
    # The finding points at the comment.
    assert active[0]["range"]["start"]["column"] == len("import nki.language as nl  ") + 1
    assert code == 1


def test_unknown_code_is_reported(cli, project):
    code, findings = _findings(cli, source="x = 1  # noqa: NKI999, no-such-rule\n")
    [f] = findings
    assert f["rule"] == "NKI004"
    assert "unknown rule code(s): NKI999, no-such-rule" in f["message"]


def test_noqa_inside_a_string_does_not_count(cli, project):
    source = 'import neuronxcc.nki.language as nl; s = "# noqa: NKI601"\n' + KERNEL_BODY
    code, findings = _findings(cli, source=source)
    assert _active(findings) == [("NKI601", 1)]
    assert _suppressed(findings) == []
    assert code == 1


def test_noqa_in_a_docstring_is_not_reported_as_unused(cli, project):
    code, findings = _findings(cli, source='"""Write # noqa: NKI601 on the line."""\nx = 1\n')
    assert findings == []
    assert code == 0


def test_noqa_for_a_rule_that_is_not_selected_is_not_unused(cli, project):
    source = "import neuronxcc.nki.language as nl  # noqa: NKI601\n" + KERNEL_BODY
    code, findings = _findings(cli, "--ignore", "NKI601", source=source)
    assert findings == []
    code, findings = _findings(cli, "--select", "tool", source=source)
    assert findings == []
    assert code == 0


def test_noqa_of_a_rule_silent_at_this_version_is_unused(cli, project):
    # At NKI 0.1 the legacy namespace is the target itself: the noqa is stale.
    code, findings = _findings(cli, "--nki-version", "0.1", source="import neuronxcc.nki.language as nl  # noqa: NKI601\n")
    assert _active(findings) == [("NKI004", 1)]


def test_unused_noqa_can_itself_be_ignored(cli, project):
    code, findings = _findings(cli, "--ignore", "NKI004", source="x = 1  # noqa: NKI601\n")
    assert findings == []
    assert code == 0


def test_noqa_with_lone_cr_line_endings(cli, project):
    source = "x = 1\rimport neuronxcc.nki.language as nl  # noqa: NKI601\r\r\rdef f():\r    return nl.x\r"
    code, findings = _findings(cli, source=source)
    assert _suppressed(findings) == [("NKI601", 2)]
    assert _active(findings) == []


def test_noqa_with_crlf_line_endings(cli, project):
    source = ("x = 1\nimport neuronxcc.nki.language as nl  # noqa: NKI601\n" + KERNEL_BODY).replace("\n", "\r\n")
    code, findings = _findings(cli, source=source)
    assert _suppressed(findings) == [("NKI601", 2)]
    assert _active(findings) == []


def test_other_linters_codes_are_not_judged(cli, project):
    source = "import os  # noqa: F401\nx = 1  # noqa: E501, NKI999\ny = 2  # noqa: PYI024\n"
    code, findings = _findings(cli, source=source)
    active = _active(findings)
    assert active == [("NKI004", 2)]
    message = [f["message"] for f in findings if f["rule"] == "NKI004"][0]
    assert "NKI999" in message and "E501" not in message


# -- file-level `# nkilint: noqa` ---------------------------------------------
LEGACY_TWO = "import neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n" + KERNEL_BODY


@pytest.mark.parametrize(
    "header",
    ["# nkilint: noqa\n", "#nkilint:noqa\n", "# NKILINT: NOQA\n", "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n\n# nkilint: noqa\n",
     "# nkilint: noqa: NKI601\n", "# nkilint: noqa: legacy-namespace\n", "# Copyright\n#   nkilint: noqa: NKI601,NKI602\n"],
)
def test_file_level_noqa_suppresses_the_whole_file(cli, project, header):
    code, findings = _findings(cli, source=header + LEGACY_TWO)
    offset = header.count("\n")
    assert _suppressed(findings) == [("NKI601", 1 + offset), ("NKI601", 2 + offset)]
    assert _active(findings) == []
    assert code == 0


def test_file_level_noqa_keeps_other_rules(cli, project):
    # Only NKI601 is suppressed: the NKI728 (undefined names) of the body stays.
    code, findings = _findings(cli, "--select", "NKI0,NKI601,NKI728", source="# nkilint: noqa: NKI601\n" + LEGACY_TWO)
    assert {rule for rule, _ in _suppressed(findings)} == {"NKI601"}
    assert {rule for rule, _ in _active(findings)} == {"NKI728"}
    assert code == 1


def test_file_level_noqa_after_code_has_no_effect(cli, project):
    source = '"""Docstring."""\n# nkilint: noqa\n' + LEGACY_TWO
    code, findings = _findings(cli, source=source)
    assert sorted(_active(findings)) == [("NKI004", 2), ("NKI601", 3), ("NKI601", 4)]
    message = next(f["message"] for f in findings if f["rule"] == "NKI004")
    assert "has no effect here" in message


def test_file_level_noqa_at_the_end_of_a_code_line_has_no_effect(cli, project):
    code, findings = _findings(cli, source="import neuronxcc.nki.language as nl  # nkilint: noqa\n")
    assert sorted(_active(findings)) == [("NKI004", 1), ("NKI601", 1)]


def test_a_comment_mentioning_the_directive_is_prose(cli, project):
    code, findings = _findings(cli, source="x = 1\n# Put '# nkilint: noqa' at the top to silence a file.\n")
    assert findings == []
    assert code == 0


def test_unused_file_level_codes_are_reported(cli, project):
    code, findings = _findings(cli, source="# nkilint: noqa: NKI601, NKI001, NKI999\nimport neuronxcc.nki.language as nl\n")
    assert _suppressed(findings) == [("NKI601", 2)]
    messages = sorted(f["message"] for f in findings if f["rule"] == "NKI004" and not f["suppressed"])
    assert messages == ["'# noqa' names unknown rule code(s): NKI999",
                        "unused suppression: NKI001 reports nothing in this file"]
    stale = [f for f in findings if f["rule"] == "NKI004"]
    assert all(f["range"]["start"]["line"] == 1 for f in stale)
    assert code == 1


def test_unused_blanket_file_level_noqa_is_reported(cli, project):
    code, findings = _findings(cli, source="# nkilint: noqa\nx = 1\n")
    assert _active(findings) == [("NKI004", 1)]
    assert "suppresses nothing in this file" in findings[0]["message"]


def test_file_level_code_of_an_unselected_rule_is_not_unused(cli, project):
    code, findings = _findings(cli, "--select", "NKI0", source="# nkilint: noqa: NKI601\nimport neuronxcc.nki.language as nl\n")
    assert findings == []
    assert code == 0


def test_line_noqa_made_redundant_by_the_file_level_one_is_reported(cli, project):
    source = "# nkilint: noqa: NKI601\nimport neuronxcc.nki.language as nl  # noqa: NKI601\n"
    code, findings = _findings(cli, source=source)
    assert _suppressed(findings) == [("NKI601", 2)]
    assert _active(findings) == [("NKI004", 2)]


def test_blanket_file_level_noqa_also_silences_stale_line_comments(cli, project):
    source = "# nkilint: noqa\nimport neuronxcc.nki.language as nl\nx = 1  # noqa: NKI601\n"
    code, findings = _findings(cli, source=source)
    assert _active(findings) == []
    assert sorted(_suppressed(findings)) == [("NKI004", 3), ("NKI601", 2)]
    assert code == 0


def test_file_level_noqa_counts_in_the_summary(cli, project):
    write(project / "k.py", "# nkilint: noqa: NKI601\n" + LEGACY_TWO)
    result = cli("check", "--select", "NKI0,NKI601", "k.py")
    assert result.exit_code == 0
    assert "All checks passed! 2 suppressed by '# noqa'." in result.stdout
