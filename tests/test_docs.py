"""docs/rules.md is generated from the installed rules and must be current."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from nkilint.cli import cli
from nkilint.plugins import installed_rules

ROOT = Path(__file__).resolve().parent.parent


def test_rules_doc_is_up_to_date():
    result = CliRunner().invoke(cli, ["rules", "--format", "markdown"])
    assert result.exit_code == 0
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == result.output, "regenerate with: nkilint rules --format markdown > docs/rules.md"


def test_every_rule_has_an_anchor_its_help_uri_points_to():
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    for rule in installed_rules():
        if not rule.__module__.startswith("nkilint_rules"):
            continue
        anchor = rule.help_uri().rsplit("#", 1)[1]
        assert f"## {rule.id} {rule.name}\n" in text
        assert anchor == f"{rule.id.lower()}-{rule.name}"
