"""Third-party rule packs through the `nkilint.rules` entry-point group,
broken packs, and crash isolation. Each test registers a throwaway pack
(a module and a *.dist-info) on PYTHONPATH and runs `python -m nkilint`."""

from __future__ import annotations

import json

import pytest

from conftest import ACME_RULES, CRASHING_RULES, LEGACY_KERNEL, make_pack, run_nkilint, write

PRINTING_KERNEL = LEGACY_KERNEL + "\n\ndef helper():\n    print(1)\n"


@pytest.fixture
def acme(pack_env):
    site, env = pack_env
    make_pack(site, "acme_pack", "acme_rules", ACME_RULES, "acme_rules")
    return env


def _json(proc) -> dict:
    return json.loads(proc.stdout)


@pytest.mark.parametrize("entry", ["acme_rules", "acme_rules:PrintInKernel", "acme_rules:RULES", "acme_rules:rules"])
def test_third_party_rule_runs(tmp_path, pack_env, entry):
    site, env = pack_env
    source = ACME_RULES + "\nRULES = (PrintInKernel,)\n\ndef rules():\n    return [PrintInKernel]\n"
    make_pack(site, "acme_pack", "acme_rules", source, entry)
    write(tmp_path / "k.py", PRINTING_KERNEL)
    proc = run_nkilint("check", "--format", "json", "k.py", cwd=tmp_path, env_extra=env)
    assert proc.returncode == 1, proc.stderr
    found = sorted((f["rule"], f["range"]["start"]["line"], f["level"]) for f in _json(proc)["findings"])
    assert found == [("ACME101", 9, "warning"), ("NKI601", 1, "error")]
    acme = next(f for f in _json(proc)["findings"] if f["rule"] == "ACME101")
    assert acme["family"] == "semantics" and acme["name"] == "print-in-kernel"
    assert acme["hint"] == "use nl.device_print"


def test_third_party_rule_is_listed_and_explained(tmp_path, acme):
    proc = run_nkilint("rules", cwd=tmp_path, env_extra=acme)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines()[1:]}
    assert rows["ACME101"][1:5] == ["print-in-kernel", "semantics", "warning", "-"]
    assert "NKI601" in rows  # the built-in pack is still there
    listing = json.loads(run_nkilint("rules", "--format", "json", cwd=tmp_path, env_extra=acme).stdout)
    origin = {r["id"]: r["origin"] for r in listing}
    assert origin["ACME101"] == "acme_pack = acme_rules"
    assert origin["NKI601"].startswith("builtin = ")
    explained = run_nkilint("rule", "print-in-kernel", cwd=tmp_path, env_extra=acme)
    assert explained.returncode == 0
    assert explained.stdout.startswith("# ACME101 print-in-kernel")
    assert "```python\nprint(1)\n```" in explained.stdout


def test_third_party_rule_selection_and_noqa(tmp_path, acme):
    write(tmp_path / "k.py", PRINTING_KERNEL)
    only = run_nkilint("check", "--format", "json", "--select", "ACME", "k.py", cwd=tmp_path, env_extra=acme)
    assert [f["rule"] for f in _json(only)["findings"]] == ["ACME101"]
    ignored = run_nkilint("check", "--format", "json", "--ignore", "semantics", "k.py", cwd=tmp_path, env_extra=acme)
    assert [f["rule"] for f in _json(ignored)["findings"]] == ["NKI601"]
    write(tmp_path / "k.py", PRINTING_KERNEL.replace("print(1)", "print(1)  # noqa: print-in-kernel"))
    noqa = run_nkilint("check", "--format", "json", "k.py", cwd=tmp_path, env_extra=acme)
    assert [(f["rule"], f["suppressed"]) for f in _json(noqa)["findings"]] == [("NKI601", False), ("ACME101", True)]


def test_broken_pack_exits_2_naming_the_entry_point(tmp_path, pack_env):
    site, env = pack_env
    make_pack(site, "broken_pack", "broken_rules", "import no_such_module_for_nkilint_tests\n", "broken_rules")
    write(tmp_path / "k.py", LEGACY_KERNEL)
    for args in (["check", "k.py"], ["rules"], ["rule", "NKI601"]):
        proc = run_nkilint(*args, cwd=tmp_path, env_extra=env)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "cannot load rule pack 'broken_pack = broken_rules'" in proc.stderr
        assert "no_such_module_for_nkilint_tests" in proc.stderr
        assert "Traceback" not in proc.stderr


def test_pack_pointing_at_a_missing_attribute_exits_2(tmp_path, pack_env):
    site, env = pack_env
    make_pack(site, "typo_pack", "typo_rules", ACME_RULES, "typo_rules:RULEZ")
    proc = run_nkilint("rules", cwd=tmp_path, env_extra=env)
    assert proc.returncode == 2
    assert "typo_pack = typo_rules:RULEZ" in proc.stderr


def test_pack_with_a_duplicate_rule_id_exits_2(tmp_path, pack_env):
    site, env = pack_env
    dup = ACME_RULES.replace('"ACME101"', '"NKI601"').replace('"semantics"', '"migration"').replace("print-in-kernel", "print-again")
    make_pack(site, "dup_pack", "dup_rules", dup, "dup_rules")
    write(tmp_path / "k.py", LEGACY_KERNEL)
    proc = run_nkilint("check", "k.py", cwd=tmp_path, env_extra=env)
    assert proc.returncode == 2
    assert "rule id NKI601 is defined twice" in proc.stderr
    assert "dup_pack = dup_rules" in proc.stderr


def test_two_packs_with_the_same_rule_id_exit_2(tmp_path, pack_env):
    site, env = pack_env
    make_pack(site, "acme_pack", "acme_rules", ACME_RULES, "acme_rules")
    make_pack(site, "other_pack", "other_rules", ACME_RULES.replace("print-in-kernel", "print-other"), "other_rules")
    proc = run_nkilint("rules", cwd=tmp_path, env_extra=env)
    assert proc.returncode == 2
    assert "rule id ACME101 is defined twice" in proc.stderr


def test_pack_with_an_invalid_rule_exits_2(tmp_path, pack_env):
    site, env = pack_env
    make_pack(site, "bad_pack", "bad_rules", ACME_RULES.replace('"semantics"', '"style"'), "bad_rules")
    proc = run_nkilint("rules", cwd=tmp_path, env_extra=env)
    assert proc.returncode == 2
    assert "family 'style' is not one of" in proc.stderr


# -- a rule that crashes ------------------------------------------------------------
@pytest.fixture
def crashing(pack_env):
    site, env = pack_env
    make_pack(site, "boom_pack", "boom_rules", CRASHING_RULES, "boom_rules")
    return env


def test_crash_is_isolated_and_exits_2(tmp_path, crashing):
    write(tmp_path / "a.py", LEGACY_KERNEL)
    write(tmp_path / "b.py", LEGACY_KERNEL)
    proc = run_nkilint("check", "--format", "json", "a.py", "b.py", cwd=tmp_path, env_extra=crashing)
    assert proc.returncode == 2
    doc = _json(proc)
    # The other rules still ran on every file.
    assert sorted(f["path"] for f in doc["findings"] if f["rule"] == "NKI601") == ["a.py", "b.py"]
    crashes = [f for f in doc["findings"] if f["rule"] == "NKI003"]
    assert sorted(f["path"] for f in crashes) == ["a.py", "b.py"]
    for f in crashes:
        assert "ACME666" in f["message"] and "always-crashes" in f["message"]
        assert "ZeroDivisionError: boom in the plugin" in f["message"]
        assert f["level"] == "error"
    assert doc["summary"]["crashed"] is True
    assert "ZeroDivisionError" in proc.stderr  # the traceback, for the bug report


def test_crash_exits_2_even_with_exit_zero_and_without_nki003(tmp_path, crashing):
    write(tmp_path / "a.py", "x = 1\n")
    assert run_nkilint("check", "--exit-zero", "a.py", cwd=tmp_path, env_extra=crashing).returncode == 2
    proc = run_nkilint("check", "--ignore", "NKI003", "--format", "json", "a.py", cwd=tmp_path, env_extra=crashing)
    assert proc.returncode == 2
    doc = _json(proc)
    assert doc["findings"] == []
    assert any(n["rule"] == "ACME666" for n in doc["notifications"])


def test_crash_text_output(tmp_path, crashing):
    write(tmp_path / "a.py", LEGACY_KERNEL)
    proc = run_nkilint("check", "a.py", cwd=tmp_path, env_extra=crashing)
    assert proc.returncode == 2
    assert "a.py:1:1: NKI003 [error] rule ACME666 (always-crashes) crashed on this file" in proc.stdout
    assert "a.py:1:1: NKI601 [error]" in proc.stdout


def test_crash_in_sarif(tmp_path, crashing, sarif_log):
    write(tmp_path / "a.py", LEGACY_KERNEL)
    proc = run_nkilint("check", "--format", "sarif", "a.py", cwd=tmp_path, env_extra=crashing)
    assert proc.returncode == 2
    run = sarif_log(proc.stdout)["runs"][0]
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    [note] = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert "ACME666" in note["message"]["text"]
    rules = run["tool"]["driver"]["rules"]
    assert note["associatedRule"]["id"] == "ACME666"
    assert rules[note["associatedRule"]["index"]]["id"] == "ACME666"
    location = note["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "a.py", "uriBaseId": "%SRCROOT%"}
    assert "ZeroDivisionError" in note["exception"]["message"]
    assert sorted(r["ruleId"] for r in run["results"]) == ["NKI003", "NKI601"]


def test_clean_run_is_successful_in_sarif(tmp_path, acme, sarif_log):
    write(tmp_path / "a.py", LEGACY_KERNEL)
    proc = run_nkilint("check", "--format", "sarif", "a.py", cwd=tmp_path, env_extra=acme)
    run = sarif_log(proc.stdout)["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is True
    assert "toolExecutionNotifications" not in run["invocations"][0]
    assert "ACME101" in [r["id"] for r in run["tool"]["driver"]["rules"]]
