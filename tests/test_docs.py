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


def test_release_tag_is_defined_by_the_changelog_and_used_everywhere():
    """The pre-commit rev and every helpUri name a tag CHANGELOG.md defines
    for this version, under the project URL of pyproject.toml."""
    import re

    import nkilint
    from nkilint.plugins import installed_rules
    from nkilint.rule import PROJECT_URL

    root = Path(__file__).resolve().parent.parent
    tag = f"v{nkilint.__version__}"
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(tag)}\b", changelog, re.M), f"CHANGELOG.md has no '## {tag}' section"
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    assert f'Homepage = "{PROJECT_URL}"' in pyproject
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert f"repo: {PROJECT_URL}\n    rev: {tag}\n" in readme
    for rule in installed_rules():
        assert rule.help_uri().startswith(f"{PROJECT_URL}/blob/{tag}/docs/rules.md#")
    assert "placeholder" not in readme.lower()
