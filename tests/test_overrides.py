"""[[tool.nkilint.overrides]]: per-file target release and rule selection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import CLEAN_KERNEL, LEGACY_KERNEL, write
from nkilint.config import ConfigError, load_config
from nkilint.overrides import Override, compile_globs

# At SDK 2.34 the legacy kernel is an NKI601 error; at 2.26 the current one
# is an NKI614 error (the nki.* namespace arrives with 2.27). Each is clean
# at its own release.
MIXED_CONFIG = """\
[tool.nkilint]
sdk = "2.34"

[[tool.nkilint.overrides]]
files = ["legacy/**/*.py"]
sdk = "2.26"
"""


def _mixed_tree(root: Path, config: str = MIXED_CONFIG) -> None:
    write(root / "pyproject.toml", config)
    write(root / "legacy" / "old.py", LEGACY_KERNEL)
    write(root / "legacy" / "deep" / "older.py", LEGACY_KERNEL)
    write(root / "current" / "new.py", CLEAN_KERNEL)


def _findings(cli, *args: str) -> tuple[int, list[tuple[str, str]]]:
    result = cli("check", "--format", "json", *args)
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    data = json.loads(result.stdout)
    return result.exit_code, sorted((f["path"], f["rule"]) for f in data["findings"] if not f["suppressed"])


def test_mixed_tree_is_clean_with_each_part_at_its_release(cli, project):
    _mixed_tree(project)
    assert _findings(cli) == (0, [])


def test_without_the_override_the_legacy_files_fail(cli, project):
    _mixed_tree(project, '[tool.nkilint]\nsdk = "2.34"\n')
    code, found = _findings(cli)
    assert code == 1
    assert found == [("legacy/deep/older.py", "NKI601"), ("legacy/old.py", "NKI601")]


def test_rules_see_the_per_file_release(cli, project):
    # The current kernel moved under legacy/: checked at 2.26, where the
    # nki.* namespace does not exist yet, so NKI614 says so.
    _mixed_tree(project)
    write(project / "legacy" / "ported.py", CLEAN_KERNEL)
    code, found = _findings(cli)
    assert found == [("legacy/ported.py", "NKI614")]
    result = cli("check", "--format", "json")
    message = next(f["message"] for f in json.loads(result.stdout)["findings"])
    assert "NKI 0.1" in message and "2.34" not in message


def test_the_command_line_release_applies_to_every_file(cli, project):
    _mixed_tree(project)
    code, found = _findings(cli, "--sdk", "2.34")
    assert found == [("legacy/deep/older.py", "NKI601"), ("legacy/old.py", "NKI601")]
    code, found = _findings(cli, "--nki-version", "0.1")
    assert found == [("current/new.py", "NKI614")]


def test_later_tables_win(cli, project):
    config = MIXED_CONFIG + '\n[[tool.nkilint.overrides]]\nfiles = ["legacy/deep"]\nnki-version = "0.8"\n'
    _mixed_tree(project, config)
    code, found = _findings(cli)
    assert found == [("legacy/deep/older.py", "NKI601")]
    # In the other order the broader table wins over the narrower one.
    config = ('[tool.nkilint]\nsdk = "2.34"\n\n[[tool.nkilint.overrides]]\nfiles = ["legacy/deep"]\nnki-version = "0.8"\n'
              '\n[[tool.nkilint.overrides]]\nfiles = ["legacy/**/*.py"]\nsdk = "2.26"\n')
    _mixed_tree(project, config)
    assert _findings(cli) == (0, [])


def test_override_ignore_and_select(cli, project):
    config = '[tool.nkilint]\nsdk = "2.34"\n\n[[tool.nkilint.overrides]]\nfiles = ["legacy"]\nignore = ["NKI601"]\n'
    _mixed_tree(project, config)
    assert _findings(cli) == (0, [])
    # select replaces the selection for those files: only NKI0 runs there,
    # the rest of the tree keeps the default rules.
    config = '[tool.nkilint]\nsdk = "2.26"\n\n[[tool.nkilint.overrides]]\nfiles = ["current/"]\nselect = ["NKI0"]\n'
    _mixed_tree(project, config)
    assert _findings(cli) == (0, [])
    code, found = _findings(cli, "--select", "NKI6")
    assert found == [("current/new.py", "NKI614")]  # the command line's selection applies over the table


def test_override_extend_select_turns_a_rule_back_on_only_there(cli, project):
    config = ('[tool.nkilint]\nsdk = "2.34"\nignore = ["NKI601"]\n\n'
              '[[tool.nkilint.overrides]]\nfiles = ["legacy/deep/*.py"]\nextend-select = ["legacy-namespace"]\n')
    _mixed_tree(project, config)
    code, found = _findings(cli)
    assert (code, found) == (1, [("legacy/deep/older.py", "NKI601")])


def test_override_noqa_of_a_rule_ignored_there_is_not_stale(cli, project):
    config = '[tool.nkilint]\nsdk = "2.34"\n\n[[tool.nkilint.overrides]]\nfiles = ["legacy/old.py"]\nignore = ["NKI601"]\n'
    _mixed_tree(project, config)
    write(project / "legacy" / "old.py", LEGACY_KERNEL.replace("as nl\n", "as nl  # noqa: NKI601\n", 1))
    code, found = _findings(cli)
    assert found == [("legacy/deep/older.py", "NKI601")]  # no NKI004 for old.py: NKI601 does not run there


@pytest.mark.parametrize(
    "table, message",
    [
        ('sdk = "2.26"', "'files' is required"),
        ('files = "legacy/*.py"', "'files' must be a non-empty list"),
        ("files = []", "'files' must be a non-empty list"),
        ('files = ["!legacy"]', "negation is not supported"),
        ('files = ["x"]\nexclude = ["y"]', "unknown key 'exclude' (set it in [tool.nkilint]"),
        ('files = ["x"]\nsdk = "1.0"', "[[tool.nkilint.overrides]] #1"),
        ('files = ["x"]\nsdk = "2.26"\nnki-version = "0.8"', "disagree"),
    ],
)
def test_bad_tables_are_configuration_errors(tmp_path, table, message):
    path = write(tmp_path / "pyproject.toml", f"[tool.nkilint]\n\n[[tool.nkilint.overrides]]\n{table}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert message in str(info.value)


def test_an_override_selector_that_matches_no_rule_is_a_usage_error(cli, project):
    _mixed_tree(project, '[tool.nkilint]\n\n[[tool.nkilint.overrides]]\nfiles = ["legacy"]\nignore = ["NKI99999"]\n')
    result = cli("check")
    assert result.exit_code == 2
    assert "[[tool.nkilint.overrides]] #1: ignore" in result.stderr and "NKI99999" in result.stderr


@pytest.mark.parametrize(
    "glob, rel, expected",
    [
        ("legacy/**/*.py", "legacy/a.py", True),
        ("legacy/**/*.py", "legacy/x/y/a.py", True),
        ("legacy/**/*.py", "src/legacy/a.py", False),
        ("legacy/*.py", "legacy/x/a.py", False),
        ("legacy", "legacy/x/a.py", True),
        ("legacy", "src/legacy/a.py", True),  # a name without a slash: any depth
        ("/legacy", "src/legacy/a.py", False),
        ("./legacy/", "legacy/a.py", True),
        ("*_v1.py", "k/attn_v1.py", True),
        ("*_v1.py", "k/attn_v2.py", False),
    ],
)
def test_file_globs(glob, rel, expected):
    override = Override(files=(glob,), where="test", patterns=compile_globs((glob,), "test"))
    assert override.matches(rel) is expected


def test_rules_see_the_per_file_target_release_and_hardware(tmp_path):
    from nkilint.engine import Checker, RunOptions
    from nkilint.findings import Level
    from nkilint.plugins import installed_rules
    from nkilint.rule import Rule, invalid, valid

    class Probe(Rule):
        id = "ZZZ901"
        name = "probe-target"
        family = "semantics"
        level = Level.NOTE
        summary = "Reports what the context says"
        explanation = "Test only."
        examples = (invalid("x = 1\n", lines=[1]), valid("x = 1\n"))

        def check(self, ctx):
            ctx.report(ctx.tree.body[0], f"{ctx.target.name} {ctx.release.minor} {ctx.nki_version} {ctx.settings.release.minor}")

    path = write(tmp_path / "pyproject.toml", '[tool.nkilint]\ntarget = "trn2"\nsdk = "2.34"\n\n'
                 '[[tool.nkilint.overrides]]\nfiles = ["legacy"]\nsdk = "2.26"\n\n'
                 '[[tool.nkilint.overrides]]\nfiles = ["legacy/inf2"]\ntarget = "trn1"\n')
    settings = load_config(path)
    ruleset = installed_rules()
    checker = Checker(settings, ruleset, frozenset(), RunOptions(extra_rules=(Probe,)))

    def probe(display: str) -> str:
        [finding] = [f for f in checker.check_text("x = 1\n", display).findings if f.rule_id == "ZZZ901"]
        return finding.message

    assert probe("current/k.py") == "trn2 2.34 0.8 2.34"
    assert probe("legacy/k.py") == "trn2 2.26 0.1 2.26"
    assert probe("legacy/inf2/k.py") == "trn1 2.26 0.1 2.26"
    # One profile per combination of tables, reused.
    assert checker.profile_for("legacy/a.py") is checker.profile_for("legacy/b/c.py")
    assert checker.profile_for("current/k.py") is checker.profile_for("other.py")


def test_verbose_lists_each_table_with_its_files(cli, project):
    _mixed_tree(project, MIXED_CONFIG + '\n[[tool.nkilint.overrides]]\nfiles = ["current"]\nignore = ["NKI6"]\n')
    result = cli("check", "-v")
    assert result.exit_code == 0, result.stderr
    assert "nkilint: override #1 (legacy/**/*.py, 2 files): SDK 2.26" in result.stderr
    assert "nkilint: override #2 (current, 1 file): ignore NKI6" in result.stderr
    result = cli("check", "-v", "--sdk", "2.30")
    assert "(not applied: the command line sets the release)" in result.stderr


def test_the_text_header_says_there_are_override_tables(cli, project):
    _mixed_tree(project)
    result = cli("check")
    assert result.stdout.splitlines()[0].endswith("; trn2; 1 [[tool.nkilint.overrides]] table (-v lists them)")
    _mixed_tree(project, '[tool.nkilint]\nsdk = "2.34"\n')
    assert cli("check").stdout.splitlines()[0].endswith("; trn2")


def test_the_documented_configuration_examples_load(tmp_path):
    """Every TOML block of docs/adopting.md and the README that configures
    nkilint is valid configuration."""
    import re

    root = Path(__file__).resolve().parents[1]
    blocks = []
    for doc in ("README.md", "docs/adopting.md"):
        text = (root / doc).read_text(encoding="utf-8")
        blocks += [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[tool.nkilint" in b]
    assert any("[[tool.nkilint.overrides]]" in b for b in blocks)
    for block in blocks:
        settings = load_config(write(tmp_path / "pyproject.toml", block))
        assert settings.config_file is not None
    assert any(s.overrides for s in (load_config(write(tmp_path / "pyproject.toml", b)) for b in blocks))


def test_fixes_follow_the_per_file_release(cli, project):
    _mixed_tree(project)
    cli("check", "--fix", "--unsafe-fixes")
    assert (project / "legacy" / "old.py").read_text() == LEGACY_KERNEL  # clean at 2.26: nothing to fix
    _mixed_tree(project, '[tool.nkilint]\nsdk = "2.34"\n')
    cli("check", "--fix", "--unsafe-fixes")
    assert (project / "legacy" / "old.py").read_text().startswith("import nki.language as nl")


def test_graph_and_review_use_the_file_release(cli, project):
    _mixed_tree(project)
    result = cli("graph", "legacy/old.py")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["sdk"] == "2.26"
    assert json.loads(cli("graph", "current/new.py").stdout)["sdk"] == "2.34"
    result = cli("review", "--format", "json", "legacy/old.py")
    cards = [k["card"] for f in json.loads(result.stdout)["files"] for k in f["kernels"]]
    assert cards and all(c["sdk"] == "2.26" and c["nki_version"] == "0.1" for c in cards)


def test_selection_layers():
    from nkilint.plugins import installed_rules
    from nkilint.selection import Selector, apply_layer

    ruleset = installed_rules()
    current = frozenset({"NKI601", "NKI604", "NKI101"})

    def layer(select=None, extend=(), ignore=()):
        sel = [Selector(s) for s in select] if select is not None else None
        return apply_layer(ruleset, current, sel, [Selector(s) for s in extend], [Selector(s) for s in ignore])

    assert layer() == current  # an empty layer changes nothing
    assert layer(ignore=["NKI6"]) == {"NKI101"}
    assert layer(extend=["NKI602"]) == current | {"NKI602"}
    assert layer(select=["NKI004"]) == {"NKI004"}  # select replaces what was on
    # Within a layer the more specific selector wins; on a tie, ignore.
    assert layer(ignore=["NKI6"], extend=["NKI601"]) == {"NKI101", "NKI601"}
    assert layer(ignore=["NKI601"], extend=["NKI601"]) == {"NKI101", "NKI604"}
    off = [r.id for r in ruleset if not r.default_enabled]
    if off:  # ALL does not turn on an off-by-default rule, its id does
        assert off[0] not in layer(select=["ALL"])
        assert off[0] in layer(extend=[off[0]])


def test_worker_processes_get_the_tables(cli, project):
    _mixed_tree(project)
    write(project / "legacy" / "ported.py", CLEAN_KERNEL)
    code, found = _findings(cli, "-j", "2", "--no-cache")
    assert found == [("legacy/ported.py", "NKI614")]
