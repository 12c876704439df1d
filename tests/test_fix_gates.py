"""The gates of --fix beyond parsing (nkilint.fix_gates): fixes that follow
the target are withheld when no release is named, and a fix after which
another family reports a new error is not written."""

from __future__ import annotations

from pathlib import Path

from nkilint.config import Settings
from nkilint.discovery import InputFile
from nkilint.engine import Checker, RunOptions
from nkilint.findings import Level
from nkilint.fix_gates import syntax_problem
from nkilint.fixes import apply_fixes_to_run
from nkilint.plugins import installed_rules
from nkilint.releases import parse_release
from nkilint.rule import Rule
from nkilint.run import Run

from conftest import write
from test_fixes import KERNEL_02, KERNEL_02_FIXED


def test_without_a_named_release_target_fixes_are_withheld(project, cli):
    path = write(project / "k.py", KERNEL_02)
    result = cli("check", "--isolated", "--select", "migration", "--fix", "k.py")
    assert path.read_text() == KERNEL_02  # nothing rewritten for an assumed release
    # the safe fixes only: the unsafe ones would not be applied without --unsafe-fixes
    assert "nkilint: warning: 6 fixes were not applied (NKI605, NKI606, NKI611, NKI612, NKI613): they rewrite" in result.stderr, \
        result.stderr
    assert "nkilint assumed SDK 2.34" in result.stderr and "--sdk 2.NN" in result.stderr
    assert result.stderr.count("not applied") == 1  # one message for the run, not per finding
    diff = cli("check", "--isolated", "--select", "migration", "--diff", "k.py")
    assert diff.stdout == "" and "not applied" in diff.stderr


def test_a_release_in_the_configuration_lets_them_apply(project, cli):
    write(project / "pyproject.toml", '[tool.nkilint]\nsdk = "2.34"\nselect = ["migration"]\n')
    path = write(project / "k.py", KERNEL_02)
    result = cli("check", "--fix", "k.py")
    assert path.read_text() == KERNEL_02_FIXED
    assert "not applied" not in result.stderr


class RejectsSharedHbm(Rule):
    """Stands for a rule of another family that rejects what a fix wrote."""

    id = "ZZZ950"
    name = "rejects-shared-hbm"
    family = "memory"
    level = Level.ERROR
    summary = "test only"
    explanation = "test only"

    def check(self, ctx):
        for number, line in enumerate(ctx.source.text.splitlines(), 1):
            if "nl.shared_hbm" in line:
                ctx.report(ctx.tree.body[0], f"shared_hbm is not allowed here (line {number}). More text")


def _run_with_fixes(tmp_path: Path, extra: tuple) -> tuple[Run, object]:
    path = write(tmp_path / "k.py", KERNEL_02)
    ruleset = installed_rules()
    settings = Settings(root=tmp_path, release=parse_release("2.34"), nki_version_explicit=True)
    enabled = frozenset(r for r in ruleset.rules if r.startswith("NKI6"))
    checker = Checker(settings, ruleset, enabled, RunOptions(keep_text=True, extra_rules=extra))
    run = Run(settings, ruleset, enabled)
    run.files.append(checker.check_path(InputFile(path, "k.py", True)))
    return run, apply_fixes_to_run(run, checker, write=True, unsafe=False)


def test_a_fix_that_brings_a_new_error_of_another_family_is_not_written(tmp_path):
    run, report = _run_with_fixes(tmp_path, (RejectsSharedHbm,))
    assert (tmp_path / "k.py").read_text() == KERNEL_02
    assert report.failed == 1 and report.files == 0
    (note,) = [n for n in run.notifications if "fixes not applied" in n.message]
    assert "a new error, ZZZ950 at line 1 (shared_hbm is not allowed here (line 8))" in note.message
    assert note.message.endswith("nothing was written")
    assert "More text" not in note.message  # the first sentence only


def test_without_the_new_error_the_same_fixes_are_written(tmp_path):
    run, report = _run_with_fixes(tmp_path, ())
    assert (tmp_path / "k.py").read_text() == KERNEL_02_FIXED
    assert report.files == 1 and report.failed == 0


def test_a_parse_failure_is_one_line():
    try:
        compile("x = (1,\n", "k.py", "exec")
    except SyntaxError as exc:
        text = syntax_problem(exc)
    assert "\n" not in text and text.startswith("line 1")


def test_an_override_table_that_names_a_release_lets_its_files_be_fixed(project, cli):
    write(project / "pyproject.toml", '[tool.nkilint]\nselect = ["migration"]\n\n'
          '[[tool.nkilint.overrides]]\nfiles = ["pinned/*.py"]\nsdk = "2.34"\n')
    pinned = write(project / "pinned" / "k.py", KERNEL_02)
    loose = write(project / "loose" / "k.py", KERNEL_02)
    result = cli("check", "--fix", "pinned", "loose")
    assert pinned.read_text() == KERNEL_02_FIXED
    assert loose.read_text() == KERNEL_02
    assert "6 fixes were not applied" in result.stderr, result.stderr
