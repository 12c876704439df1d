"""--fix on hostile trees (issue 20): symlinks stay symlinks (the target is
fixed), hard links stay linked, mode and owner are kept, read-only files are
reported and left alone, and a file too deep for libcst's native parser is
skipped with a message instead of crashing the process."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from conftest import write
from test_fixes import KERNEL_02, KERNEL_02_FIXED

from nkilint.cstguard import MAX_CST_DEPTH, cst_depth, libcst_refusal
from nkilint.fixes import FixError, fix_source

import ast


def _fix(cli, *paths):
    return cli("check", "--fix", "--sdk", "2.34", "--format", "concise", *paths)


def test_symlink_is_fixed_at_its_target_and_stays_a_link(cli, project):
    target = write(project / "src" / "real.py", KERNEL_02)
    link = project / "link.py"
    os.symlink("src/real.py", link)
    result = _fix(cli, "link.py")
    assert link.is_symlink() and os.readlink(link) == "src/real.py", "the symlink was replaced by a file"
    assert target.read_text() == KERNEL_02_FIXED, result.stderr
    assert "Fixed 6." in result.stdout


def test_symlink_out_of_the_tree_is_refused(cli, project, tmp_path):
    outside = write(tmp_path / "elsewhere" / "real.py", KERNEL_02)
    os.symlink(outside, project / "link.py")
    result = _fix(cli, "link.py")
    assert outside.read_text() == KERNEL_02
    assert (project / "link.py").is_symlink()
    assert "outside the checked tree" in result.stderr and "link.py" in result.stderr


def test_hard_links_keep_sharing_the_fixed_file(cli, project):
    first = write(project / "a.py", KERNEL_02)
    second = project / "b.py"
    os.link(first, second)
    inode = first.stat().st_ino
    _fix(cli, "a.py")
    assert first.stat().st_ino == inode == second.stat().st_ino and first.stat().st_nlink == 2
    assert second.read_text() == KERNEL_02_FIXED


def test_mode_is_kept(cli, project):
    path = write(project / "k.py", KERNEL_02)
    path.chmod(0o751)
    _fix(cli, "k.py")
    assert path.read_text() == KERNEL_02_FIXED
    assert stat.S_IMODE(path.stat().st_mode) == 0o751


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing a file's owner needs root")
def test_owner_and_group_are_kept(cli, project):
    path = write(project / "k.py", KERNEL_02)
    os.chown(path, 4321, 8765)
    _fix(cli, "k.py")
    assert path.read_text() == KERNEL_02_FIXED
    assert (path.stat().st_uid, path.stat().st_gid) == (4321, 8765)


def test_read_only_file_is_reported_not_rewritten(cli, project):
    path = write(project / "k.py", KERNEL_02)
    other = write(project / "other.py", KERNEL_02)
    path.chmod(0o444)
    try:
        result = _fix(cli, "k.py", "other.py")
        assert path.read_text() == KERNEL_02
        assert stat.S_IMODE(path.stat().st_mode) == 0o444
        assert "k.py is read-only; not rewritten" in result.stderr
        assert len(result.stderr) < 400  # one clear line, not a dump
        assert other.read_text() == KERNEL_02_FIXED  # the other file is still fixed
    finally:
        path.chmod(0o644)


def test_fix_leaves_no_temporary_files(cli, project):
    write(project / "k.py", KERNEL_02)
    _fix(cli, "k.py")
    assert sorted(p.name for p in project.iterdir()) == ["k.py"]


def _deep_and_chain(n: int) -> str:
    return KERNEL_02 + "\nflag = " + " and ".join(["a"] * n) + "\n"


def test_libcst_guard_measures_boolean_chains_and_nesting():
    assert cst_depth(ast.parse("x = a and b and c\n")) < 10
    assert cst_depth(ast.parse(_deep_and_chain(20_000))) > 20_000
    nested = "y = " + "(" * 90 + "x" + ")" * 90 + "\n"  # parentheses add no node
    assert cst_depth(ast.parse(nested)) < 10
    assert libcst_refusal(KERNEL_02) is None
    assert "20005 levels" in libcst_refusal(_deep_and_chain(20_000))
    assert libcst_refusal(_deep_and_chain(MAX_CST_DEPTH // 2)) is None


def test_fix_source_refuses_a_file_libcst_would_crash_on():
    from fixture_markers import lint_file  # noqa: F401 - the rules are installed

    text = _deep_and_chain(20_000)
    from nkilint.findings import Edit, Finding, Fix, Level, Span

    finding = Finding("NKI601", Level.ERROR, "m", "k.py", Span(1, 1, 1, 2),
                      fix=Fix("d", (Edit(Span(1, 1, 1, 2), "#"),), safe=True))
    with pytest.raises(FixError, match="fixes skipped"):
        fix_source(text, [finding])


def test_deep_and_chain_does_not_crash_the_fix_run(project):
    """The issue's reproducer: a valid 20,000-operand `and` chain that CPython
    parses made libcst segfault (exit 139) after earlier files were already
    rewritten. Now: the file is skipped with a message, the others are fixed."""
    deep = write(project / "deep.py", _deep_and_chain(20_000))
    other = write(project / "other.py", KERNEL_02)
    proc = subprocess.run([sys.executable, "-m", "nkilint", "check", "--fix", "--unsafe-fixes", "--sdk", "2.34", "deep.py", "other.py"],
                          cwd=project, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-2000:])
    assert deep.read_text() == _deep_and_chain(20_000)
    assert "deep.py: fixes skipped" in proc.stderr and "libcst" in proc.stderr
    assert other.read_text() == KERNEL_02_FIXED.replace("if flag is True:", "if flag == True:")
    assert "Traceback" not in proc.stderr
