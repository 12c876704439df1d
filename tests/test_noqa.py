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
