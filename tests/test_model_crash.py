"""A crash inside the semantic model is reported once per file, not per rule."""

from __future__ import annotations

from pathlib import Path

from nkilint.config import Settings
from nkilint.engine import Checker, RunOptions
from nkilint.findings import Level
from nkilint.plugins import installed_rules
from nkilint.selection import resolve_enabled

SOURCE = "import nki\nimport nki.language as nl\n\n@nki.jit\ndef k(a):\n    t = nl.ndarray((256, 4), dtype=nl.float32)\n    return t\n"


def test_model_crash_reported_once_and_other_rules_run(monkeypatch, tmp_path: Path):
    import nkilint.model.semantic as semantic

    def boom(*args, **kwargs):
        raise ZeroDivisionError("model bug")

    monkeypatch.setattr(semantic, "analyze_file", boom)
    ruleset = installed_rules()
    enabled = resolve_enabled(ruleset, None, [], [])
    checker = Checker(Settings(root=tmp_path), ruleset, enabled, RunOptions())
    result = checker.check_text(SOURCE + "x = 1  # noqa: NKI999Z\n", "k.py")
    crashes = [f for f in result.findings if f.rule_id == "NKI003"]
    assert len(crashes) == 1 and "semantic model" in crashes[0].message and "ZeroDivisionError" in crashes[0].message
    assert result.crashed
    # Rules that do not need the model still report (the unknown noqa code).
    assert any(f.rule_id == "NKI004" for f in result.findings)
    assert [n for n in result.notifications if n.rule_id == "model"][0].level is Level.ERROR


def test_without_crash_the_model_is_shared(monkeypatch, tmp_path: Path):
    import nkilint.model.semantic as semantic

    calls = []
    real = semantic.analyze_file

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(semantic, "analyze_file", counting)
    ruleset = installed_rules()
    checker = Checker(Settings(root=tmp_path), ruleset, resolve_enabled(ruleset, None, [], []), RunOptions())
    result = checker.check_text(SOURCE, "k.py")
    assert len(calls) == 1
    assert any(f.rule_id == "NKI101" for f in result.findings)
