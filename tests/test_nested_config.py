"""Nested [tool.nkilint] tables: each file uses the nearest configuration."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import CLEAN_KERNEL, LEGACY_KERNEL, write
from nkilint.server.session import Session

# At SDK 2.34 the legacy kernel is an NKI601 error; at 2.26 it is clean.
ROOT = '[tool.nkilint]\nsdk = "2.34"\n'
LEGACY = '[tool.nkilint]\nsdk = "2.26"\n'


def _tree(root: Path, nested: str = LEGACY) -> None:
    write(root / "pyproject.toml", ROOT)
    write(root / "new.py", CLEAN_KERNEL)
    write(root / "top_legacy.py", LEGACY_KERNEL)
    write(root / "legacy" / "pyproject.toml", nested)
    write(root / "legacy" / "old.py", LEGACY_KERNEL)
    write(root / "legacy" / "deep" / "older.py", LEGACY_KERNEL)


def _findings(cli, *args: str) -> tuple[int, list[tuple[str, str]], str]:
    result = cli("check", "--format", "json", "--no-cache", *args)
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    data = json.loads(result.stdout)
    return (result.exit_code, sorted((f["path"], f["rule"]) for f in data["findings"] if not f["suppressed"]),
            result.stderr)


def test_nested_sdk_applies_to_its_directory_only(cli, project):
    _tree(project)
    code, found, _ = _findings(cli)
    # The root's legacy file is checked at 2.34; the nested ones at 2.26.
    assert code == 1
    assert found == [("top_legacy.py", "NKI601")]


def test_without_the_nested_table_everything_is_checked_at_the_root_release(cli, project):
    _tree(project, "[project]\nname = 'legacy'\n")
    _, found, _ = _findings(cli)
    assert found == [("legacy/deep/older.py", "NKI601"), ("legacy/old.py", "NKI601"), ("top_legacy.py", "NKI601")]


def test_same_settings_whether_the_run_starts_at_the_root_or_in_the_subtree(cli, project):
    _tree(project)
    write(project / "legacy" / "ported.py", CLEAN_KERNEL)  # nki.* does not exist at 2.26: NKI614
    _, from_root, _ = _findings(cli)
    _, from_sub, _ = _findings(cli, "legacy")
    assert [r for p, r in from_root if p.startswith("legacy/")] == [r for _, r in from_sub] == ["NKI614"]


def test_command_line_beats_the_nested_table(cli, project):
    _tree(project)
    _, found, _ = _findings(cli, "--sdk", "2.34")
    assert found == [("legacy/deep/older.py", "NKI601"), ("legacy/old.py", "NKI601"), ("top_legacy.py", "NKI601")]


def test_nested_select_and_per_file_ignores(cli, project):
    _tree(project, '[tool.nkilint]\nselect = ["NKI7"]\n')
    # The nested table replaces the root's: no sdk there means the newest
    # release, but only NKI7 rules run, so the legacy import is not reported.
    _, found, _ = _findings(cli)
    assert found == [("top_legacy.py", "NKI601")]
    _tree(project, '[tool.nkilint]\nsdk = "2.34"\n[tool.nkilint.per-file-ignores]\n"deep/*.py" = ["NKI601"]\n')
    _, found, _ = _findings(cli)
    # The glob is relative to the nested directory: deep/older.py only.
    assert found == [("legacy/old.py", "NKI601"), ("top_legacy.py", "NKI601")]


def test_nested_overrides_are_relative_to_their_directory(cli, project):
    nested = '[tool.nkilint]\nsdk = "2.34"\n\n[[tool.nkilint.overrides]]\nfiles = ["deep/**"]\nsdk = "2.26"\n'
    _tree(project, nested)
    _, found, _ = _findings(cli)
    assert found == [("legacy/old.py", "NKI601"), ("top_legacy.py", "NKI601")]


def test_a_nested_selection_is_layered_under_the_command_line(cli, project):
    _tree(project, '[tool.nkilint]\nsdk = "2.34"\nignore = ["NKI601"]\n')
    _, found, _ = _findings(cli)
    assert found == [("top_legacy.py", "NKI601")]
    _tree(project, '[tool.nkilint]\nsdk = "2.34"\nselect = ["NKI601"]\n')
    assert len(_findings(cli)[1]) == 3
    # --ignore applies to every file, over the nested table's selection.
    assert _findings(cli, "--ignore", "NKI601")[1] == []


def test_run_wide_keys_in_a_nested_table_are_ignored_with_a_warning(cli, project):
    _tree(project, LEGACY + 'fail-level = "error"\nfile-time-limit = 5\n')
    code, found, stderr = _findings(cli)
    assert code == 1 and found == [("top_legacy.py", "NKI601")]
    assert "'fail-level', 'file-time-limit' ignored in a nested configuration" in stderr
    assert str(project / "legacy" / "pyproject.toml") in stderr


def test_a_bad_nested_table_is_a_configuration_error_naming_the_file(cli, project):
    _tree(project, '[tool.nkilint]\nsdk = "2.99"\n')
    result = cli("check", "--no-cache")
    assert result.exit_code == 2
    assert str(project / "legacy" / "pyproject.toml") in result.stderr
    _tree(project, '[tool.nkilint]\nselect = ["NKI9999"]\n')
    result = cli("check", "--no-cache")
    assert result.exit_code == 2
    assert "legacy" in result.stderr and "NKI9999" in result.stderr


def test_config_and_isolated_read_no_nested_table(cli, project):
    _tree(project)
    _, found, _ = _findings(cli, "--config", "pyproject.toml")
    assert ("legacy/old.py", "NKI601") in found
    result = cli("check", "-v", "--no-cache", "--isolated", "--sdk", "2.34")
    assert "nested configurations not read" in result.stderr
    assert "legacy/old.py" in result.stdout


def test_verbose_names_each_configuration_and_its_files(cli, project):
    _tree(project)
    result = cli("check", "-v", "--no-cache")
    assert f"configuration {project / 'pyproject.toml'} for 2 files" in result.stderr
    assert f"configuration {project / 'legacy' / 'pyproject.toml'} (nested) for 2 files under legacy/" in result.stderr
    assert "target SDK 2.26 (NKI 0.1) from legacy/pyproject.toml:2" in result.stderr
    assert "1 nested configuration (-v lists them)" in result.stdout


def test_results_do_not_depend_on_jobs_or_path_order(cli, project):
    _tree(project)
    write(project / "legacy" / "ported.py", CLEAN_KERNEL)
    serial = _findings(cli, "-j", "1")[1]
    assert _findings(cli, "-j", "2", "legacy", "new.py", "top_legacy.py")[1] == serial
    assert _findings(cli, "-j", "2", "top_legacy.py", "new.py", "legacy")[1] == serial


def test_cache_key_changes_with_the_nested_table(cli, project):
    _tree(project)
    assert cli("check", "--format", "json").exit_code == 1
    cached = json.loads(cli("check", "--format", "json").stdout)["findings"]
    assert sorted(f["path"] for f in cached) == ["top_legacy.py"]
    write(project / "legacy" / "pyproject.toml", '[tool.nkilint]\nsdk = "2.34"\n')
    again = json.loads(cli("check", "--format", "json").stdout)["findings"]
    assert sorted(f["path"] for f in again) == ["legacy/deep/older.py", "legacy/old.py", "top_legacy.py"]


def test_server_uses_the_nested_configuration(project):
    _tree(project)
    session = Session(project)
    old = project / "legacy" / "old.py"
    checked = session.lint(old, LEGACY_KERNEL)
    assert checked.display == "legacy/old.py"
    assert [f.rule_id for f in checked.result.findings] == []
    top = session.lint(project / "top_legacy.py", LEGACY_KERNEL)
    assert [f.rule_id for f in top.result.findings] == ["NKI601"]
    write(project / "legacy" / "pyproject.toml", '[tool.nkilint]\nsdk = "2.99"\n')
    session.files_changed([project / "legacy" / "pyproject.toml"])
    broken = session.lint(old, LEGACY_KERNEL)
    assert [f.rule_id for f in broken.result.findings] == ["NKI601"]  # the root's settings
    assert any("legacy" in p and "2.99" in p for p in session.problems)


def test_review_uses_the_nested_configuration(cli, project):
    kernel = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n\n@nki.jit\ndef k(a):\n    return nl.load(a)\n"
    _tree(project)
    write(project / "top_legacy.py", kernel)
    write(project / "legacy" / "old.py", kernel)
    result = cli("review", "--format", "json", ".")
    data = json.loads(result.stdout)
    sdks = {f["path"]: {k["card"]["sdk"] for k in f["kernels"]} for f in data["files"] if f["kernels"]}
    assert sdks["top_legacy.py"] == sdks["new.py"] == {"2.34"}
    assert sdks["legacy/old.py"] == sdks["legacy/deep/older.py"] == {"2.26"}


def test_a_nested_table_without_a_release_takes_its_directorys_pins(cli, project):
    _tree(project, '[tool.nkilint]\nselect = ["NKI601"]\n')
    # Not the root's sdk = "2.34": the nested table replaces the root's.
    assert ("legacy/old.py", "NKI601") in _findings(cli)[1]
    write(project / "legacy" / "requirements.txt", "neuronx-cc==2.19.8089.0\n")  # SDK 2.24: legacy imports work
    _, found, _ = _findings(cli)
    assert found == [("top_legacy.py", "NKI601")]
    result = cli("check", "-v", "--no-cache")
    assert "target SDK 2.24" in result.stderr and "legacy/requirements.txt:1" in result.stderr


def test_a_broken_nested_pyproject_that_names_nkilint_is_an_error(cli, project):
    _tree(project, '[tool.nkilint]\nsdk = "2.26\n')
    result = cli("check", "--no-cache")
    assert result.exit_code == 2
    assert "invalid TOML" in result.stderr and str(project / "legacy" / "pyproject.toml") in result.stderr
    # One that does not mention nkilint is not ours: the root's settings apply.
    _tree(project, '[project\nname = "x"\n')
    assert ("legacy/old.py", "NKI601") in _findings(cli)[1]


def test_a_root_override_that_reaches_into_a_nested_directory_is_warned_about(cli, project):
    _tree(project)
    write(project / "pyproject.toml", ROOT + '\n[[tool.nkilint.overrides]]\nfiles = ["legacy/deep/**"]\nsdk = "2.34"\n')
    code, found, stderr = _findings(cli)
    # The nested table decides for legacy/: the root's table does not apply there.
    assert found == [("top_legacy.py", "NKI601")]
    assert "[[tool.nkilint.overrides]] #1 matches files under legacy/" in stderr
    write(project / "pyproject.toml", ROOT + '\n[[tool.nkilint.overrides]]\nfiles = ["top_*.py"]\nsdk = "2.26"\n')
    code, found, stderr = _findings(cli)
    assert found == [] and "matches files under" not in stderr
