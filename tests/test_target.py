"""The target release on the command line, in [tool.nkilint] and from the
project's pins, and how every report says which target it used and why."""

from __future__ import annotations

import json

import pytest

from conftest import CLEAN_KERNEL, LEGACY_KERNEL, write


def _doc(result) -> dict:
    return json.loads(result.stdout)


def _header(result) -> str:
    return result.stdout.splitlines()[0]


# -- --sdk and --nki-version ----------------------------------------------------------
def test_sdk_flag_sets_the_release_and_its_nki_version(cli, project):
    write(project / "k.py", CLEAN_KERNEL)
    result = cli("check", "--sdk", "2.29", "k.py")
    assert result.exit_code == 0
    assert _header(result) == "target: SDK 2.29 (NKI 0.3) from --sdk 2.29; trn2"
    doc = _doc(cli("check", "--sdk", "2.29.1", "--format", "json", "k.py"))
    assert (doc["sdk"], doc["nki_version"]) == ("2.29", "0.3")
    assert doc["target_release"] == {"sdk": "2.29", "nki_version": "0.3", "kind": "cli", "reason": "from --sdk 2.29.1"}


def test_nki_version_is_the_newest_release_of_that_version(cli, project):
    write(project / "k.py", CLEAN_KERNEL)
    result = cli("check", "--nki-version", "0.1", "--format", "concise", "--target", "trn1", "k.py")
    assert _header(result) == "target: SDK 2.26 (NKI 0.1) from --nki-version 0.1; trn1"


def test_disagreeing_sdk_and_nki_version_is_a_usage_error_naming_both(cli, project):
    write(project / "k.py", CLEAN_KERNEL)
    result = cli("check", "--sdk", "2.24", "--nki-version", "0.3", "k.py")
    assert result.exit_code == 2
    assert "--sdk 2.24 (NKI 0.1) and --nki-version 0.3 disagree" in result.stderr
    agreeing = cli("check", "--sdk", "2.31.1", "--nki-version", "0.5", "--format", "json", "k.py")
    assert agreeing.exit_code == 0 and _doc(agreeing)["sdk"] == "2.31"
    # 2.27 and 2.28 both ship NKI 0.2: the release given wins over the alias.
    assert _doc(cli("check", "--sdk", "2.27", "--nki-version", "0.2", "--format", "json", "k.py"))["sdk"] == "2.27"


@pytest.mark.parametrize("value", ["2.19", "2.35", "latest", "0.6"])
def test_unknown_sdk_is_a_usage_error(cli, project, value):
    write(project / "k.py", CLEAN_KERNEL)
    result = cli("check", "--sdk", value, "k.py")
    assert result.exit_code == 2 and "2.20 ... 2.34" in result.stderr


def test_default_is_the_newest_release(cli, project):
    write(project / "k.py", CLEAN_KERNEL)
    result = cli("check", "k.py")
    assert _header(result) == "target: SDK 2.34 (NKI 0.8) by default (the newest release; no pin, --sdk or config); trn2"
    assert result.stdout.splitlines()[-1] == "All checks passed!"


# -- [tool.nkilint] -----------------------------------------------------------------------
def test_sdk_in_the_configuration(cli, project):
    write(project / "pyproject.toml", '[project]\nname = "x"\n\n[tool.nkilint]\ntarget = "trn3"\nsdk = "2.24"\n')
    write(project / "k.py", LEGACY_KERNEL)
    result = cli("check", "--format", "concise", "k.py")
    assert _header(result) == "target: SDK 2.24 (NKI 0.1) from pyproject.toml:6 ([tool.nkilint] sdk); trn3"
    assert result.exit_code == 0  # legacy code is fine at 2.24
    assert _doc(cli("check", "--sdk", "2.30", "--format", "json", "k.py"))["sdk"] == "2.30"  # the CLI wins


def test_config_nki_version_is_an_alias_too(cli, project):
    write(project / "pyproject.toml", '[tool.nkilint]\nnki-version = "0.7"\n')
    write(project / "k.py", CLEAN_KERNEL)
    doc = _doc(cli("check", "--format", "json", "k.py"))
    assert (doc["sdk"], doc["target_release"]["kind"]) == ("2.33", "config")


@pytest.mark.parametrize("body, message", [
    ('sdk = 2.30\n', "'sdk' must be a string such as \"2.30\""),
    ('sdk = "2.19"\n', "unknown Neuron SDK release '2.19'"),
    ('sdk = "2.24"\nnki-version = "0.6"\n', "'sdk' = \"2.24\" (NKI 0.1) and 'nki-version' = \"0.6\" disagree"),
])
def test_bad_sdk_in_the_configuration(cli, project, body, message):
    write(project / "pyproject.toml", "[tool.nkilint]\n" + body)
    write(project / "k.py", CLEAN_KERNEL)
    result = cli("check", "k.py")
    assert result.exit_code == 2 and message in result.stderr


# -- the project's pins ----------------------------------------------------------------------
def test_a_project_pinning_the_sdk_2_24_compiler_is_checked_as_2_24(cli, project):
    write(project / "requirements.txt", "numpy\nneuronx-cc==2.19.8089.0\n")
    write(project / "kernels" / "k.py", LEGACY_KERNEL)
    result = cli("check", "kernels")
    assert _header(result) == "target: SDK 2.24 (NKI 0.1) from requirements.txt:2; trn2"
    assert result.exit_code == 0, result.stdout  # the legacy namespace is the language of 2.24
    doc = _doc(cli("check", "--format", "json", "kernels"))
    assert doc["target_release"] == {
        "sdk": "2.24", "nki_version": "0.1", "kind": "pin", "reason": "from requirements.txt:2",
        "file": "requirements.txt", "line": 2, "package": "neuronx-cc", "requirement": "neuronx-cc==2.19.8089.0",
        "how": "exact"}
    # Without the pin the same file is checked at 2.34, where the namespace is rejected in kernels.
    assert cli("check", "--isolated", "kernels").exit_code == 1


def test_flags_and_configuration_beat_the_pins(cli, project):
    write(project / "requirements.txt", "neuronx-cc==2.19.8089.0\n")
    write(project / "k.py", CLEAN_KERNEL)
    assert _doc(cli("check", "--sdk", "2.31", "--format", "json", "k.py"))["sdk"] == "2.31"
    write(project / "pyproject.toml", '[tool.nkilint]\nsdk = "2.30"\n')
    assert _doc(cli("check", "--format", "json", "k.py"))["sdk"] == "2.30"


def test_isolated_ignores_the_pins(cli, project):
    write(project / "requirements.txt", "neuronx-cc==2.19.8089.0\n")
    write(project / "k.py", CLEAN_KERNEL)
    doc = _doc(cli("check", "--isolated", "--format", "json", "k.py"))
    assert (doc["sdk"], doc["target_release"]["kind"]) == ("2.34", "default")


def test_a_range_takes_its_newest_release(cli, project):
    write(project / "pyproject.toml", '[project]\nname = "k"\ndependencies = ["neuronx-cc>=2.24,<2.25"]\n')
    write(project / "k.py", CLEAN_KERNEL)
    result = cli("check", "k.py")
    assert _header(result) == "target: SDK 2.29 (NKI 0.3) from pyproject.toml:3; trn2"


def test_sarif_run_properties_name_the_target(cli, project, sarif_log):
    write(project / "requirements.txt", "nki==0.6.0\n")
    write(project / "k.py", CLEAN_KERNEL)
    log = sarif_log(cli("check", "--format", "sarif", "k.py").stdout)
    props = log["runs"][0]["properties"]
    assert props["nkilint.sdk"] == "2.32" and props["nkilint.nkiVersion"] == "0.6"
    assert props["nkilint.hardwareTarget"] == "trn2"
    assert props["nkilint.targetOrigin"]["reason"] == "from requirements.txt:1"


def test_graph_and_stats_take_sdk(cli, project):
    write(project / "k.py", CLEAN_KERNEL)
    graph = json.loads(cli("graph", "--sdk", "2.27", "k.py").stdout)
    assert (graph["sdk"], graph["nki_version"]) == ("2.27", "0.2")
    stats = json.loads(cli("stats", "--sdk", "2.33", "--format", "json", ".").stdout)
    assert (stats["sdk"], stats["nki_version"]) == ("2.33", "0.7")
    write(project / "requirements.txt", "neuronx-cc==2.22.12471.0\n")
    assert json.loads(cli("graph", "k.py").stdout)["sdk"] == "2.27"
    assert cli("graph", "--sdk", "2.24", "--nki-version", "0.6", "k.py").exit_code == 2


def test_rules_see_the_release(project):
    from nkilint.config import Settings
    from nkilint.context import RuleContext
    from nkilint.releases import parse_release
    from nkilint.versions import V0_3

    settings = Settings(release=parse_release("2.29"))
    ctx = RuleContext(None, settings, settings.target, settings.nki_version)
    assert ctx.release.minor == "2.29" and ctx.nki_version == V0_3
