"""The command line: exit codes, output formats, selection, target and NKI
version, stdin, `nkilint rules` / `nkilint rule`, the bundled example."""

from __future__ import annotations

import json
import re
import sys

import pytest

from conftest import CLEAN_KERNEL, LEGACY_IMPORT_ONLY, LEGACY_KERNEL, run_nkilint, write

IMPORT_LINE = "import neuronxcc.nki.language as nl"


def _json(result) -> dict:
    return json.loads(result.stdout)


def _rules_reported(result) -> list[str]:
    return [f["rule"] for f in _json(result)["findings"] if not f["suppressed"]]


# -- exit codes ------------------------------------------------------------------
def test_clean_file_exits_0(cli, project):
    write(project / "k.py", CLEAN_KERNEL)
    result = cli("check", "k.py")
    assert result.exit_code == 0, result.stdout
    assert "All checks passed!" in result.stdout
    assert "NKI601" not in result.stdout


def test_findings_exit_1(cli, project):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "k.py")
    assert result.exit_code == 1
    assert "Found 1 finding (1 error) in 1 of 1 file." in result.stdout


def test_unknown_option_exits_2(cli, project):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "--no-such-option", "k.py")
    assert result.exit_code == 2
    assert "--no-such-option" in result.stderr


@pytest.mark.parametrize("option", [["--target", "trn9"], ["--nki-version", "0.9"], ["--format", "xml"], ["--fail-level", "fatal"]])
def test_bad_option_value_exits_2(cli, project, option):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", *option, "k.py")
    assert result.exit_code == 2
    assert option[1] in result.stderr


def test_exit_zero_keeps_the_report(cli, project):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "--exit-zero", "k.py")
    assert result.exit_code == 0
    assert "k.py:1:1: NKI601 [error]" in result.stdout


@pytest.mark.parametrize(
    "args,code",
    [
        ([], 1),  # warning >= default fail level (warning)
        (["--fail-level", "warning"], 1),
        (["--fail-level", "note"], 1),
        (["--fail-level", "error"], 0),
    ],
)
def test_fail_level(cli, project, args, code):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "--nki-version", "0.3", *args, "k.py")  # NKI601 is a warning at 0.3
    assert "NKI601 [warning]" in result.stdout
    assert result.exit_code == code


def test_fail_level_error_still_fails_on_errors(cli, project):
    write(project / "k.py", LEGACY_KERNEL)
    assert cli("check", "--fail-level", "error", "k.py").exit_code == 1


def test_internal_error_exits_2_not_1(project, monkeypatch, capsys):
    """An unexpected exception is an internal error (2), never 'findings' (1)."""
    import nkilint.cli as cli_module

    write(project / "k.py", CLEAN_KERNEL)

    def broken(*args, **kwargs):
        raise RuntimeError("simulated bug in discovery")

    import nkilint.commands.check as check_module

    monkeypatch.setattr(check_module, "discover", broken)
    monkeypatch.setattr(sys, "argv", ["nkilint", "check", "k.py"])
    with pytest.raises(SystemExit) as exc:
        cli_module.main()
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "simulated bug in discovery" in err and "internal error" in err


# -- formats -----------------------------------------------------------------------
def test_text_format_has_source_line_caret_and_hint(cli, project):
    write(project / "k.py", LEGACY_KERNEL)
    out = cli("check", "--format", "text", "k.py").stdout
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("k.py:1:1: NKI601 [error] "))
    assert "legacy namespace 'neuronxcc.nki.language'" in lines[header]
    assert lines[header + 2] == f"1 | {IMPORT_LINE}"
    caret = lines[header + 3]
    assert caret == "  | " + "^" * len(IMPORT_LINE)
    assert lines[header + 4].startswith("  = hint: use 'import nki.language as nl'")


def test_text_caret_points_at_the_span(cli, project):
    write(project / "k.py", "x = 1; " + IMPORT_LINE + "\n\n\ndef f():\n    return nl.x\n")
    lines = cli("check", "k.py").stdout.splitlines()[1:]  # after the target header
    assert lines[0].startswith("k.py:1:8: NKI601")
    assert lines[3] == "  | " + " " * 7 + "^" * len(IMPORT_LINE)


def test_concise_format(cli, project):
    write(project / "k.py", LEGACY_KERNEL)
    out = cli("check", "--format", "concise", "k.py").stdout.splitlines()
    assert out.pop(0).startswith("target: SDK 2.34 (NKI 0.8) by default")
    assert len(out) == 2
    assert re.fullmatch(r"k\.py:1:1: NKI601 \[error\] the legacy namespace .*", out[0])
    assert out[1].startswith("Found 1 finding")
    assert "^" not in "\n".join(out)


def test_json_format(cli, project):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "--format", "json", "k.py")
    assert result.exit_code == 1
    doc = _json(result)
    assert doc["tool"] == "nkilint" and doc["target"] == "trn2" and doc["nki_version"] == "0.8"
    assert doc["sdk"] == "2.34" and doc["target_release"]["kind"] == "default"
    [finding] = doc["findings"]
    assert finding["rule"] == "NKI601"
    assert finding["name"] == "legacy-namespace"
    assert finding["family"] == "migration"
    assert finding["level"] == "error"
    assert finding["path"] == "k.py"
    assert "neuronxcc.nki.language" in finding["message"]
    assert finding["range"] == {"start": {"line": 1, "column": 1}, "end": {"line": 1, "column": len(IMPORT_LINE) + 1}}
    assert finding["hint"].startswith("use 'import nki.language as nl'")
    assert finding["suppressed"] is False
    assert doc["summary"]["findings"] == 1 and doc["summary"]["errors"] == 1


def test_github_format(cli, project):
    write(project / "k.py", LEGACY_KERNEL)
    write(project / "w.py", LEGACY_IMPORT_ONLY)  # only a warning before SDK 2.34
    out = cli("check", "--sdk", "2.33", "--format", "github", "k.py", "w.py").stdout.splitlines()
    assert len(out) == 2
    assert out[0].startswith(
        f"::error file=k.py,line=1,col=1,endLine=1,endColumn={len(IMPORT_LINE) + 1},title=NKI601 (legacy-namespace)::"
    )
    assert "%0Ahint: use 'import nki.language as nl'" in out[0]
    assert out[1].startswith("::warning file=w.py,line=1,col=1,")


def test_sarif_format(cli, project, sarif_log):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "--format", "sarif", "k.py")
    assert result.exit_code == 1
    log = sarif_log(result.stdout)
    [res] = log["runs"][0]["results"]
    assert res["ruleId"] == "NKI601"


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_output_file(cli, project, fmt, sarif_log):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "--format", fmt, "--output", "report.out", "k.py")
    assert result.exit_code == 1
    assert result.stdout == ""
    report = (project / "report.out").read_text(encoding="utf-8")
    if fmt == "json":
        assert json.loads(report)["findings"][0]["rule"] == "NKI601"
    elif fmt == "sarif":
        assert sarif_log(report)["runs"][0]["results"][0]["ruleId"] == "NKI601"
    else:
        assert "k.py:1:1: NKI601" in report


def test_statistics(cli, project):
    write(project / "a.py", LEGACY_KERNEL)
    write(project / "b.py", LEGACY_KERNEL)
    out = cli("check", "--statistics", "a.py", "b.py").stdout
    row = next(line for line in out.splitlines() if "legacy-namespace" in line and "NKI601" in line)
    assert row.split()[:2] == ["2", "NKI601"]
    assert row.split()[-1] == "error"
    assert "Found 2 findings (2 errors) in 2 of 2 files." in out


# -- selection -------------------------------------------------------------------
@pytest.mark.parametrize(
    "args,reported",
    [
        ([], True),
        (["--select", "NKI601"], True),
        (["--select", "NKI6"], True),
        (["--select", "migration"], True),
        (["--select", "legacy-namespace"], True),
        (["--select", "ALL"], True),
        (["--select", "NKI004,NKI601"], True),
        (["--select", "tool"], False),
        (["--select", "NKI004"], False),
        (["--select", "tool", "--extend-select", "NKI601"], True),
        (["--select", "tool", "--extend-select", "migration"], True),
        (["--ignore", "NKI601"], False),
        (["--ignore", "NKI6"], False),
        (["--ignore", "migration"], False),
        (["--ignore", "legacy-namespace"], False),
        (["--ignore", "ALL"], False),
        # The more specific selector wins.
        (["--select", "NKI601", "--ignore", "migration"], True),
        (["--select", "NKI601", "--ignore", "NKI6"], True),
        (["--select", "migration", "--ignore", "NKI601"], False),
        (["--select", "ALL", "--ignore", "migration"], False),
    ],
)
def test_selection(cli, project, args, reported):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "--format", "json", *args, "k.py")
    assert ("NKI601" in _rules_reported(result)) is reported
    assert result.exit_code == (1 if reported else 0)


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
def test_selector_matching_no_rule_exits_2(cli, project, option):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", option, "NKI9999", "k.py")
    assert result.exit_code == 2
    assert "'NKI9999' matches no rule" in result.stderr


# -- target and NKI version --------------------------------------------------------
@pytest.mark.parametrize("given,canonical", [("trn1", "trn1"), ("inf2", "trn1"), ("trn2", "trn2"), ("trn3", "trn3")])
def test_target(cli, project, given, canonical):
    write(project / "k.py", LEGACY_KERNEL)
    assert _json(cli("check", "--format", "json", "--target", given, "k.py"))["target"] == canonical


@pytest.mark.parametrize(
    "version,level",
    [("0.1", None), ("0.2", "warning"), ("0.3", "warning"), ("0.4", "error"), ("0.6", "error")],
)
def test_nki_version_sets_legacy_namespace_level(cli, project, version, level):
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "--format", "json", "--nki-version", version, "k.py")
    doc = _json(result)
    assert doc["nki_version"] == version
    levels = [f["level"] for f in doc["findings"] if f["rule"] == "NKI601"]
    assert levels == ([] if level is None else [level])
    assert result.exit_code == (0 if level is None else 1)


def test_legacy_import_outside_kernels_is_only_a_warning_at_06(cli, project):
    write(project / "k.py", LEGACY_IMPORT_ONLY)
    doc = _json(cli("check", "--format", "json", "--nki-version", "0.6", "k.py"))
    assert [(f["rule"], f["level"]) for f in doc["findings"]] == [("NKI601", "warning")]


# -- stdin -------------------------------------------------------------------------
def test_stdin(cli, project):
    result = cli("check", "--format", "concise", "-", input=LEGACY_KERNEL)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1].startswith("-:1:1: NKI601 [error]")


def test_stdin_filename_is_shown(cli, project):
    result = cli("check", "-", "--stdin-filename", "kernels/softmax.py", input=LEGACY_KERNEL)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1].startswith("kernels/softmax.py:1:1: NKI601 [error]")
    assert "1 | import neuronxcc.nki.language as nl" in result.stdout


def test_stdin_clean(cli, project):
    result = cli("check", "-", "--stdin-filename", "k.py", input=CLEAN_KERNEL)
    assert result.exit_code == 0
    assert "All checks passed!" in result.stdout


def test_stdin_with_files(cli, project):
    write(project / "a.py", LEGACY_KERNEL)
    doc = _json(cli("check", "--format", "json", "-", "a.py", "--stdin-filename", "piped.py", input=LEGACY_KERNEL))
    assert sorted(f["path"] for f in doc["findings"]) == ["a.py", "piped.py"]


def test_stdin_through_a_real_pipe(project):
    proc = run_nkilint("check", "-", "--stdin-filename", "x/k.py", "--format", "concise", cwd=project, input=LEGACY_KERNEL)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines()[1].startswith("x/k.py:1:1: NKI601")


# -- paths -------------------------------------------------------------------------
def test_default_path_is_the_current_directory(cli, project):
    write(project / "pkg" / "deep" / "k.py", LEGACY_KERNEL)
    write(project / "pkg" / "stub.pyi", LEGACY_IMPORT_ONLY)
    write(project / "pkg" / "notes.txt", LEGACY_KERNEL)
    doc = _json(cli("check", "--format", "json"))
    assert sorted(f["path"] for f in doc["findings"]) == ["pkg/deep/k.py", "pkg/stub.pyi"]
    assert doc["summary"]["files"] == 2


def test_default_excludes_when_walking(cli, project):
    for d in ("build", ".venv", "node_modules", "__pycache__", "src"):
        write(project / d / "k.py", LEGACY_KERNEL)
    doc = _json(cli("check", "--format", "json", "."))
    assert [f["path"] for f in doc["findings"]] == ["src/k.py"]


# -- rules and rule ----------------------------------------------------------------
def test_rules_lists_every_rule(cli):
    from nkilint.plugins import installed_rules

    result = cli("rules")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["ID", "NAME", "FAMILY", "LEVEL", "FIX"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    ruleset = installed_rules()
    assert set(rows) == {r.id for r in ruleset}
    for rule in ruleset:
        assert rows[rule.id][1:5] == [rule.name, rule.family, rule.level.label, "yes" if rule.fixable else "-"]
    assert rows["NKI601"][1:4] == ["legacy-namespace", "migration", "error"]
    assert rows["NKI004"][1:4] == ["unused-noqa", "tool", "warning"]


def test_rules_json(cli):
    doc = json.loads(cli("rules", "--format", "json").stdout)
    by_id = {r["id"]: r for r in doc}
    assert by_id["NKI601"]["name"] == "legacy-namespace"
    assert by_id["NKI601"]["family"] == "migration"
    assert by_id["NKI601"]["level"] == "error"
    assert by_id["NKI601"]["fixable"] is True  # unsafe import rewrite (issue 8)
    assert {"NKI001", "NKI002", "NKI003", "NKI004"} <= set(by_id)


@pytest.mark.parametrize("key", ["NKI601", "nki601", "legacy-namespace"])
def test_rule_explains(cli, key):
    result = cli("rule", key)
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("# NKI601 legacy-namespace\n")
    assert "Family: `migration`" in out and "Default level: error" in out
    assert "**Fix:**" in out
    assert "## Examples" in out
    assert "**Reported**" in out and "**Not reported**" in out
    assert "```python\nimport neuronxcc.nki as nki\n" in out


def test_rule_by_id_and_name_agree(cli):
    assert cli("rule", "NKI601").stdout == cli("rule", "legacy-namespace").stdout


@pytest.mark.parametrize("key,suggestion", [("NOPE", "nkilint rules"), ("legacy-namespac", "legacy-namespace"), ("NKI6011", "NKI601")])
def test_unknown_rule_exits_2_with_suggestion(cli, key, suggestion):
    result = cli("rule", key)
    assert result.exit_code == 2
    assert f"no rule '{key}'" in result.stderr
    assert suggestion in result.stderr


# -- bundled example ----------------------------------------------------------------
def test_check_example(cli):
    result = cli("check", "--example")
    assert result.exit_code == 1
    assert "nkilint/examples/softmax_port.py:8:1: NKI601" in result.stdout
    assert "nkilint/examples/softmax_port.py:9:1: NKI601" in result.stdout


def test_check_example_exit_zero(cli):
    result = cli("check", "--example", "--exit-zero", "--format", "json")
    assert result.exit_code == 0
    assert "NKI601" in _rules_reported(result)


def test_check_example_with_paths_is_a_usage_error(cli, project):
    write(project / "k.py", CLEAN_KERNEL)
    result = cli("check", "--example", "k.py")
    assert result.exit_code == 2
    assert "--example" in result.stderr


def test_version(cli):
    from nkilint import __version__

    result = cli("--version")
    assert result.exit_code == 0
    assert __version__ in result.stdout


def test_python_dash_m(project):
    write(project / "k.py", LEGACY_KERNEL)
    proc = run_nkilint("check", "--format", "concise", "k.py", cwd=project)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[1].startswith("k.py:1:1: NKI601")
