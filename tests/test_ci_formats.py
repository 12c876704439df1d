"""`--format gitlab` (GitLab Code Quality) and `--format junit` (JUnit XML):
shape, severities, fingerprints that survive line moves, escaping, and a
report that parses back."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import CLEAN_KERNEL, LEGACY_IMPORT_ONLY, LEGACY_KERNEL, write
from nkilint.config import Settings
from nkilint.engine import FileResult, Notification
from nkilint.findings import Finding, Level, Span
from nkilint.plugins import installed_rules
from nkilint.reporters.junit import render_junit
from nkilint.run import Run

TWO_FINDINGS = LEGACY_KERNEL + "\n\ndef other(b):\n    return nl.load(b)\n"


def _gitlab(cli, *args: str) -> tuple[int, list]:
    result = cli("check", "--format", "gitlab", *args)
    return result.exit_code, json.loads(result.stdout)


def _junit(cli, *args: str) -> tuple[int, ET.Element, str]:
    result = cli("check", "--format", "junit", *args)
    return result.exit_code, ET.fromstring(result.stdout.encode("utf-8")), result.stdout


# -- GitLab Code Quality ---------------------------------------------------------
def test_gitlab_issue_shape_and_severities(cli, project):
    write(project / "src" / "k.py", LEGACY_KERNEL)
    write(project / "src" / "w.py", LEGACY_IMPORT_ONLY)  # a warning before SDK 2.34
    code, issues = _gitlab(cli, "--sdk", "2.33", "src")
    assert code == 1
    assert [(i["check_name"], i["severity"], i["location"]) for i in issues] == [
        ("NKI601", "critical", {"path": "src/k.py", "lines": {"begin": 1}}),
        ("NKI601", "minor", {"path": "src/w.py", "lines": {"begin": 1}}),
    ]
    first = issues[0]
    assert set(first) == {"description", "check_name", "fingerprint", "severity", "location"}
    assert first["description"].startswith("NKI601 (legacy-namespace): the legacy namespace")
    assert "Hint: use 'import nki.language as nl'" in first["description"]
    assert len(first["fingerprint"]) == 32 and int(first["fingerprint"], 16) >= 0


def test_gitlab_warning_is_minor_and_note_is_info(cli, project):
    write(project / "k.py", "import triton\n" + CLEAN_KERNEL.replace("def kernel", "@nki.jit\ndef kernel")
          .replace("import nki.language", "import nki\nimport nki.language") + "x = 1  # noqa: NKI601\n")
    _, issues = _gitlab(cli, "--select", "ALL", "k.py")
    assert {i["check_name"]: i["severity"] for i in issues} == {"NKI432": "info", "NKI004": "minor"}


def test_gitlab_paths_relative_to_the_project_root(cli, project, monkeypatch):
    (project / ".git").mkdir()
    write(project / "src" / "k.py", LEGACY_KERNEL)
    monkeypatch.chdir(project / "src")
    _, issues = _gitlab(cli, "k.py")
    assert [i["location"]["path"] for i in issues] == ["src/k.py"]


def test_gitlab_fingerprint_survives_moves_and_tells_apart_copies(cli, project):
    write(project / "k.py", "import neuronxcc.nki.language as nl\nimport neuronxcc.nki.language as nl\n")
    _, before = _gitlab(cli, "k.py")
    assert len(before) == 2
    fps = [i["fingerprint"] for i in before]
    assert len(set(fps)) == 2, "identical findings need distinct fingerprints"
    write(project / "k.py", "# a comment\n\n\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.language as nl\n")
    _, after = _gitlab(cli, "k.py")
    assert [i["location"]["lines"]["begin"] for i in after] == [4, 5]
    assert [i["fingerprint"] for i in after] == fps
    # Another file with the same finding is another issue.
    write(project / "m.py", "import neuronxcc.nki.language as nl\n")
    _, both = _gitlab(cli, "k.py", "m.py")
    assert len({i["fingerprint"] for i in both}) == 3
    # Editing the reported line makes it a new issue.
    write(project / "k.py", "import neuronxcc.nki.language as nl2\nimport neuronxcc.nki.language as nl\n")
    _, edited = _gitlab(cli, "k.py")
    assert edited[0]["fingerprint"] not in fps


def test_gitlab_clean_run_is_an_empty_array(cli, project):
    write(project / "k.py", CLEAN_KERNEL)
    code, issues = _gitlab(cli, "k.py")
    assert code == 0 and issues == []


def test_gitlab_leaves_out_suppressed_findings(cli, project):
    write(project / "k.py", "import neuronxcc.nki.language as nl  # noqa: NKI601\n")
    _, issues = _gitlab(cli, "k.py")
    assert issues == []


# -- JUnit XML -------------------------------------------------------------------
def test_junit_one_suite_per_file_with_failures(cli, project):
    write(project / "a.py", TWO_FINDINGS)
    write(project / "b.py", LEGACY_KERNEL)
    write(project / "c.py", CLEAN_KERNEL)
    code, root, text = _junit(cli, "a.py", "b.py", "c.py")
    assert code == 1
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "2", "0")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["a.py", "b.py"]
    assert [s.get("tests") for s in suites] == ["1", "1"]
    [case] = suites[0].findall("testcase")
    assert case.get("name") == "NKI601 (legacy-namespace) at line 1, column 1"
    assert case.get("classname") == "a"  # no '.py': Jenkins splits class names at dots
    assert case.get("file") == "a.py" and case.get("line") == "1"
    failure = case.find("failure")
    assert failure.get("type") == "error"
    assert failure.get("message").startswith("the legacy namespace")
    assert failure.text.startswith("a.py:1:1: NKI601 [error] ")
    assert "\nhint: use 'import nki.language as nl'" in failure.text


def test_junit_clean_run_has_one_passing_case(cli, project):
    write(project / "k.py", CLEAN_KERNEL)
    code, root, _ = _junit(cli, "k.py")
    assert code == 0
    [suite] = root.findall("testsuite")
    [case] = suite.findall("testcase")
    assert case.find("failure") is None and root.get("failures") == "0" and root.get("tests") == "1"


def test_junit_escapes_paths_and_drops_control_characters(cli, project):
    name = "we<i>rd & \"x\" \x1b.py"
    write(project / name, LEGACY_KERNEL)
    _, root, text = _junit(cli, name)
    assert "\x1b" not in text
    [suite] = root.findall("testsuite")
    assert suite.get("name") == "we<i>rd & \"x\" .py"
    assert suite.find("testcase").get("classname") == "we<i>rd & \"x\" "


def test_junit_message_with_markup_and_control_characters(project):
    """Through the reporter itself: a message with XML markup, a CDATA end,
    newlines and control characters still gives a document that parses and
    keeps every printable character."""
    settings = Settings(root=project)
    ruleset = installed_rules()
    run = Run(settings, ruleset, frozenset(ruleset.rules), cwd=project)
    message = "a <b> & ]]> \"c\"\x00\x07 d\x0c\ne\tf\ud800"
    result = FileResult("k.py")
    result.findings.append(Finding("NKI601", Level.WARNING, message, "k.py", Span(3, 2, 3, 5), hint="x\x1by"))
    result.notifications.append(Notification(Level.ERROR, "k.py: not analysed: bad\x02 bytes", "k.py"))
    run.files.append(result)
    root = ET.fromstring(render_junit(run).encode("utf-8"))
    [suite] = root.findall("testsuite")
    failing, broken = suite.findall("testcase")
    assert failing.find("failure").get("message") == "a <b> & ]]> \"c\" d\ne\tf"
    assert failing.find("failure").get("type") == "warning"
    assert failing.find("failure").text.endswith("\nhint: xy")
    assert broken.find("error").get("message") == "k.py: not analysed: bad bytes"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "1")


def test_junit_crash_is_reported_once(cli, project, monkeypatch):
    """A rule crash is both a notification and an NKI rule-crash finding: one case."""
    import nkilint.model.semantic as semantic

    def broken(*args, **kwargs):
        raise RuntimeError("model bug")

    monkeypatch.setattr(semantic, "analyze_file", broken)
    write(project / "k.py", CLEAN_KERNEL)
    code, root, _ = _junit(cli, "--no-cache", "k.py")
    assert code == 2
    cases = root.findall("testsuite/testcase")
    assert sum("model bug" in ET.tostring(c, encoding="unicode") for c in cases) == 1


def test_readme_lists_the_formats():
    from nkilint.reporters import FORMATS

    usage = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    line = next(line for line in usage.splitlines() if line.startswith("nkilint check --format "))
    assert set(line.split()[3].split("|")) == set(FORMATS)
