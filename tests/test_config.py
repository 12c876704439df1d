"""[tool.nkilint] in pyproject.toml: discovery, validation, excludes,
per-file ignores, --config and --isolated."""

from __future__ import annotations

import json

import pytest

from conftest import LEGACY_KERNEL, write
from nkilint.config import KNOWN_KEYS, load_config


def _doc(result) -> dict:
    return json.loads(result.stdout)


def _paths(result) -> list[str]:
    return sorted(f["path"] for f in _doc(result)["findings"] if f["rule"] == "NKI601")


def _levels(result) -> list[str]:
    return [f["level"] for f in _doc(result)["findings"] if f["rule"] == "NKI601"]


def pyproject(directory, body: str):
    return write(directory / "pyproject.toml", body)


# -- finding the configuration ----------------------------------------------------
def test_nearest_pyproject_from_the_checked_path(cli, project):
    pyproject(project / "sub", '[tool.nkilint]\nnki-version = "0.3"\n')
    write(project / "sub" / "k.py", LEGACY_KERNEL)
    result = cli("check", "--format", "json", "sub/k.py")  # run from the parent
    assert _doc(result)["nki_version"] == "0.3"
    assert _levels(result) == ["warning"]


def test_pyproject_without_our_table_is_skipped(cli, project):
    pyproject(project, '[tool.nkilint]\ntarget = "inf2"\n')
    pyproject(project / "sub", '[project]\nname = "x"\n')
    write(project / "sub" / "k.py", LEGACY_KERNEL)
    assert _doc(cli("check", "--format", "json", "sub/k.py"))["target"] == "trn1"


def test_config_in_a_parent_of_the_current_directory(cli, project, monkeypatch):
    pyproject(project, '[tool.nkilint]\nnki-version = "0.1"\n')
    write(project / "a" / "b" / "k.py", LEGACY_KERNEL)
    monkeypatch.chdir(project / "a" / "b")
    result = cli("check", "--format", "json", "k.py")
    assert _doc(result)["nki_version"] == "0.1"
    assert result.exit_code == 0


def test_command_line_overrides_the_file(cli, project):
    pyproject(project, '[tool.nkilint]\nnki-version = "0.1"\nfail-level = "error"\n')
    write(project / "k.py", LEGACY_KERNEL)
    assert cli("check", "k.py").exit_code == 0
    result = cli("check", "--format", "json", "--nki-version", "0.3", "--fail-level", "warning", "k.py")
    assert _levels(result) == ["warning"]
    assert result.exit_code == 1


def test_fail_level_from_config(cli, project):
    pyproject(project, '[tool.nkilint]\nnki-version = "0.3"\nfail-level = "error"\n')
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "k.py")
    assert "NKI601 [warning]" in result.stdout
    assert result.exit_code == 0


def test_select_and_ignore_from_config(cli, project):
    pyproject(project, '[tool.nkilint]\nselect = ["ALL"]\nignore = ["migration"]\n')
    write(project / "k.py", LEGACY_KERNEL)
    assert _paths(cli("check", "--format", "json", "k.py")) == []
    # A more specific selector on the command line wins over the family.
    assert _paths(cli("check", "--format", "json", "--extend-select", "NKI601", "k.py")) == ["k.py"]


def test_hardware_overrides_are_applied():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = pyproject(Path(tmp), "[tool.nkilint]\ntarget = \"trn1\"\n[tool.nkilint.hardware]\nsbuf_usable_bytes_per_partition = 196608\n")
        settings = load_config(path)
    assert settings.target.name == "trn1"
    assert settings.target.sbuf_usable_bytes_per_partition == 196608
    assert settings.target.partitions == 128  # the rest of the table is kept


# -- invalid configuration --------------------------------------------------------
def test_unknown_key_names_it_and_lists_valid_keys(cli, project):
    pyproject(project, '[tool.nkilint]\nselct = ["ALL"]\n')
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "k.py")
    assert result.exit_code == 2
    assert "unknown key 'selct'" in result.stderr
    assert "pyproject.toml" in result.stderr
    for key in KNOWN_KEYS:
        assert key in result.stderr
    assert result.stdout == ""


def test_underscore_key_suggests_the_dashed_one(cli, project):
    pyproject(project, '[tool.nkilint]\nnki_version = "0.3"\n')
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "k.py")
    assert result.exit_code == 2
    assert "unknown key 'nki_version' (did you mean 'nki-version'?)" in result.stderr


@pytest.mark.parametrize(
    "body,expected",
    [
        ('target = "trn9"', ["unknown target 'trn9'", "trn1", "trn2", "trn3"]),
        ("target = 2", ["'target' must be a string"]),
        ('nki-version = "0.9"', ["unknown NKI version '0.9'", "0.1", "0.6"]),
        ('nki-version = "banana"', ["invalid NKI version 'banana'", "0.6"]),
        ("nki-version = true", ["'nki-version' must be a string"]),
        ('fail-level = "fatal"', ["unknown level 'fatal'", "note, warning, error"]),
        ('select = ["NOPE9"]', ["'NOPE9' matches no rule", "migration", "ALL"]),
        ('ignore = ["bogus-rule-name"]', ["'bogus-rule-name' matches no rule"]),
        ('select = "NKI601"', ["'select' must be a list of strings", 'select = ["NKI601"]']),
        ("exclude = [1, 2]", ["'exclude' must be a list of strings"]),
        ('per-file-ignores = ["x"]', ["'per-file-ignores' must be a table"]),
        ('[tool.nkilint.per-file-ignores]\n"tests/*" = ["ZZZ9"]', ["per-file-ignores['tests/*']", "'ZZZ9' matches no rule"]),
        ('[tool.nkilint.per-file-ignores]\n"tests/*" = "NKI601"', ["must be a list of strings"]),
        ('hardware = 3', ["'hardware' must be a table"]),
        ("[tool.nkilint.hardware]\nbogus = 1", ["unknown hardware key 'bogus'", "sbuf_usable_bytes_per_partition", "psum_banks"]),
        ("[tool.nkilint.hardware]\npsum_banks = -1", ["hardware.psum_banks must be a positive number, got -1"]),
        ('[tool.nkilint.hardware]\npsum_banks = "8"', ["hardware.psum_banks must be a positive number"]),
        ("select = [", ["invalid TOML"]),
    ],
)
def test_bad_values_exit_2_and_say_what_is_valid(cli, project, body, expected):
    pyproject(project, "[tool.nkilint]\n" + body + "\n")
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "k.py")
    assert result.exit_code == 2, result.stdout
    assert result.stderr.startswith("nkilint: error: ")
    for fragment in expected:
        assert fragment in result.stderr
    assert "Traceback" not in result.stderr


# -- per-file ignores ---------------------------------------------------------------
@pytest.fixture
def pfi_project(project):
    pyproject(project, '[tool.nkilint]\n[tool.nkilint.per-file-ignores]\n"tests/*" = ["migration"]\n"legacy_*.py" = ["NKI601"]\n')
    for rel in ("tests/k.py", "src/k.py", "src/legacy_k.py"):
        write(project / rel, LEGACY_KERNEL)
    return project


def test_per_file_ignores(cli, pfi_project):
    assert _paths(cli("check", "--format", "json")) == ["src/k.py"]


def test_per_file_ignores_from_a_subdirectory(cli, pfi_project, monkeypatch):
    monkeypatch.chdir(pfi_project / "src")
    # Paths are reported relative to the project root, not the cwd.
    assert _paths(cli("check", "--format", "json", "../tests/k.py", "k.py", "legacy_k.py")) == ["src/k.py"]


def test_per_file_ignores_from_outside_the_project(cli, pfi_project, monkeypatch):
    monkeypatch.chdir(pfi_project.parent)
    assert _paths(cli("check", "--format", "json", "proj/tests/k.py", "proj/src/k.py")) == ["src/k.py"]


def test_per_file_ignores_do_not_report_noqa_of_ignored_rules_as_unused(cli, pfi_project):
    write(pfi_project / "tests" / "n.py", "import neuronxcc.nki.language as nl  # noqa: NKI601\n")
    doc = _doc(cli("check", "--format", "json", "tests/n.py"))
    assert doc["findings"] == []


# -- excludes --------------------------------------------------------------------------
@pytest.fixture
def tree(project):
    for rel in ("src/k.py", "gen/k.py", "build/k.py", "src/gen_x/k.py"):
        write(project / rel, LEGACY_KERNEL)
    return project


def test_extend_exclude_keeps_the_defaults(cli, tree):
    pyproject(tree, '[tool.nkilint]\nextend-exclude = ["gen"]\n')
    assert _paths(cli("check", "--format", "json")) == ["src/gen_x/k.py", "src/k.py"]


def test_exclude_replaces_the_defaults(cli, tree):
    pyproject(tree, '[tool.nkilint]\nexclude = ["gen", "src/gen_*"]\n')
    assert _paths(cli("check", "--format", "json")) == ["build/k.py", "src/k.py"]


def test_exclude_on_the_command_line(cli, tree):
    assert _paths(cli("check", "--format", "json", "--extend-exclude", "src")) == ["gen/k.py"]
    assert _paths(cli("check", "--format", "json", "--exclude", "src")) == ["build/k.py", "gen/k.py"]


def test_explicit_files_are_checked_unless_force_exclude(cli, tree):
    pyproject(tree, '[tool.nkilint]\nextend-exclude = ["gen"]\n')
    assert _paths(cli("check", "--format", "json", "gen/k.py", "build/k.py", "src/k.py")) == ["build/k.py", "gen/k.py", "src/k.py"]
    result = cli("check", "--format", "json", "--force-exclude", "gen/k.py", "build/k.py", "src/k.py")
    assert _paths(result) == ["src/k.py"]
    assert _doc(result)["summary"]["files"] == 1


def test_force_exclude_with_only_excluded_files_is_clean(cli, tree):
    result = cli("check", "--force-exclude", "build/k.py")
    assert result.exit_code == 0
    assert "No Python files found." in result.stdout


# -- --config and --isolated ------------------------------------------------------------
def test_config_option_uses_that_file(cli, tree):
    pyproject(tree, '[tool.nkilint]\nnki-version = "0.1"\n')
    write(tree / "conf" / "other.toml", '[tool.nkilint]\nnki-version = "0.3"\nexclude = ["src"]\n')
    result = cli("check", "--format", "json", "--config", "conf/other.toml", ".")
    assert _doc(result)["nki_version"] == "0.3"
    assert _paths(result) == ["build/k.py", "gen/k.py"]


def test_config_option_with_a_bad_file_exits_2(cli, tree):
    write(tree / "bad.toml", '[tool.nkilint]\ntarget = "tpu"\n')
    result = cli("check", "--config", "bad.toml", ".")
    assert result.exit_code == 2
    assert "unknown target 'tpu'" in result.stderr


def test_config_option_missing_file_exits_2(cli, tree):
    assert cli("check", "--config", "nope.toml", ".").exit_code == 2


def test_isolated_ignores_configuration(cli, tree):
    pyproject(tree, '[tool.nkilint]\nnki-version = "0.1"\nselect = ["bogus"]\n')
    result = cli("check", "--format", "json", "--isolated", "src/k.py")
    assert result.exit_code == 1
    assert _doc(result)["nki_version"] == "0.8"  # the default: the newest release
    assert _levels(result) == ["error"]


def test_config_and_isolated_together_exit_2(cli, tree):
    write(tree / "c.toml", "[tool.nkilint]\n")
    result = cli("check", "--config", "c.toml", "--isolated", ".")
    assert result.exit_code == 2
    assert "--isolated" in result.stderr
