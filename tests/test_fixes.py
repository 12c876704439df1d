"""Fix application (nkilint/fixes.py) and the --fix / --unsafe-fixes / --diff
command line: libcst edits that keep formatting and comments, atomic and
idempotent writes, no overwrite of a file that changed on disk, encodings
kept, fixes in JSON and SARIF output."""

from __future__ import annotations

import json
import os
import stat

import pytest

from nkilint.findings import Edit, Finding, Fix, Level, Span
from nkilint.fixes import FixError, apply_edits, fix_source, select_fixes, write_atomically

from conftest import write

# A current-namespace kernel written for NKI 0.2, with safe and unsafe fixes.
KERNEL_02 = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit(mode="jax")  # framework hint
def copy_kernel(a, *, flag=False):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.hbm)  # the output
    for i in nl.affine_range(1):
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer='sbuf')
        nisa.dma_copy(dst=t, src=a, dge_mode=2)
        nisa.dma_copy(dst=out, src=t)
    if flag is True:
        pass
    return out
"""

KERNEL_02_FIXED = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit  # framework hint
def copy_kernel(a, flag=False):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)  # the output
    for i in range(1):
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdge)
        nisa.dma_copy(dst=out, src=t)
    if flag is True:
        pass
    return out
"""


def _check(cli, *args, **kwargs):
    return cli("check", "--isolated", "--select", "migration", *args, **kwargs)


# -- edits --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "source,edits,expected",
    [
        # a keyword name renamed in place, value and comment untouched
        ("f(a, is_moving_zero=x)  # c\n", [Edit(Span(1, 6, 1, 20), "is_moving_onezero")],
         "f(a, is_moving_onezero=x)  # c\n"),
        # deleting the last argument drops its separating comma
        ("f(a, flag=1)\n", [Edit(Span(1, 6, 1, 12), "")], "f(a)\n"),
        # deleting a middle argument keeps the others as written
        ("f(a,  k=1,   b=2)\n", [Edit(Span(1, 7, 1, 10), "")], "f(a,  b=2)\n"),
        # multi-line call with a trailing comma keeps its layout
        ("f(\n    a,\n    k=1,\n)\n", [Edit(Span(3, 5, 3, 8), "")], "f(\n    a,\n)\n"),
        # a decorator whose only argument is deleted becomes the bare decorator
        ("@jit(mode='x')\ndef k():\n    pass\n", [Edit(Span(1, 6, 1, 14), "")], "@jit\ndef k():\n    pass\n"),
        # the bare * separator of a signature
        ("def k(a, *, b=1):\n    pass\n", [Edit(Span(1, 10, 1, 13), "")], "def k(a, b=1):\n    pass\n"),
        # a keyword argument replaced by another keyword argument
        ("g(x, use=True,\n  y=2)\n", [Edit(Span(1, 6, 1, 14), "engine=e.gpsimd")], "g(x, engine=e.gpsimd,\n  y=2)\n"),
        # an attribute chain inside parentheses keeps them
        ("w = (nl.tile_size.psum_fmax)  # 512\n", [Edit(Span(1, 6, 1, 28), "nl.tile_size.psum_bank_fmax")],
         "w = (nl.tile_size.psum_bank_fmax)  # 512\n"),
    ],
)
def test_apply_edits_keeps_formatting(source, edits, expected):
    assert apply_edits(source, edits) == expected


def test_span_that_matches_no_node_is_spliced():
    # Part of a name: no CST node has this span.
    assert apply_edits("value = 1\n", [Edit(Span(1, 1, 1, 3), "VA")]) == "VAlue = 1\n"


def _finding(line: int, col: int, end: int, repl: str, safe: bool = True, rule: str = "NKI604") -> Finding:
    return Finding(rule, Level.WARNING, "m", "k.py", Span(line, col, line, end),
                   fix=Fix("d", (Edit(Span(line, col, line, end), repl),), safe))


def test_unsafe_fixes_need_the_flag():
    findings = [_finding(1, 1, 2, "b"), _finding(2, 1, 2, "d", safe=False)]
    assert [f.description for f in select_fixes(findings, unsafe=False)] == ["d"]
    assert len(select_fixes(findings, unsafe=True)) == 2
    assert fix_source("a\nc\n", findings) == "b\nc\n"
    assert fix_source("a\nc\n", findings, unsafe=True) == "b\nd\n"


def test_overlapping_fixes_wait_for_the_next_round():
    outer = _finding(1, 1, 6, "xyz")
    inner = _finding(1, 2, 3, "Q")
    assert len(select_fixes([outer, inner], unsafe=False)) == 1


def test_a_fix_producing_invalid_python_is_refused():
    bad = _finding(1, 1, 2, "(")
    with pytest.raises(FixError):
        fix_source("a = 1\n", [bad])


# -- writing ---------------------------------------------------------------------------
def test_write_atomically_replaces_and_keeps_mode(tmp_path):
    path = write(tmp_path / "k.py", "a = 1\n")
    os.chmod(path, 0o640)
    write_atomically(path, "a = 1\n", "a = 2\n")
    assert path.read_text() == "a = 2\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["k.py"]  # no temporary file left


def test_write_atomically_refuses_a_file_changed_on_disk(tmp_path):
    path = write(tmp_path / "k.py", "a = 1  # edited by someone else\n")
    with pytest.raises(FixError, match="changed on disk"):
        write_atomically(path, "a = 1\n", "a = 2\n")
    assert path.read_text() == "a = 1  # edited by someone else\n"
    assert [p.name for p in tmp_path.iterdir()] == ["k.py"]


def test_write_atomically_refuses_invalid_python_and_cleans_up(tmp_path):
    path = write(tmp_path / "k.py", "a = 1\n")
    with pytest.raises(FixError):
        write_atomically(path, "a = 1\n", "a = (\n")
    assert path.read_text() == "a = 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["k.py"]


def test_write_keeps_coding_cookie_and_bom(tmp_path):
    latin = "# -*- coding: latin-1 -*-\n# café\na = 1\n"
    path = write(tmp_path / "l.py", latin.encode("latin-1"))
    write_atomically(path, latin, latin.replace("a = 1", "a = 2"))
    assert path.read_bytes() == latin.replace("a = 1", "a = 2").encode("latin-1")
    bom = write(tmp_path / "b.py", b"\xef\xbb\xbfa = 1\n")
    write_atomically(bom, "a = 1\n", "a = 2\n")
    assert bom.read_bytes() == b"\xef\xbb\xbfa = 2\n"


# -- command line ------------------------------------------------------------------------
def test_fix_applies_safe_fixes_only_and_is_idempotent(cli, project):
    path = write(project / "k.py", KERNEL_02)
    result = _check(cli, "--fix", "--sdk", "2.34", "k.py")
    assert path.read_text() == KERNEL_02_FIXED, result.stdout
    assert "Fixed 6." in result.stdout
    assert "1 more fix available with --unsafe-fixes" in result.stderr  # `flag is True`
    assert result.exit_code == 1  # the remaining finding
    again = _check(cli, "--fix", "--sdk", "2.34", "k.py")
    assert path.read_text() == KERNEL_02_FIXED
    assert "Fixed" not in again.stdout


def test_unsafe_fixes(cli, project):
    path = write(project / "k.py", KERNEL_02)
    result = _check(cli, "--fix", "--unsafe-fixes", "--sdk", "2.34", "k.py")
    assert result.exit_code == 0, result.stdout
    assert path.read_text() == KERNEL_02_FIXED.replace("if flag is True:", "if flag == True:")


def test_diff_shows_without_writing(cli, project):
    path = write(project / "k.py", KERNEL_02)
    result = _check(cli, "--diff", "--sdk", "2.34", "k.py")
    assert path.read_text() == KERNEL_02
    assert result.stdout.startswith("--- a/k.py\n+++ b/k.py\n@@")
    assert '\n-@nki.jit(mode="jax")  # framework hint\n' in result.stdout
    assert "\n+@nki.jit  # framework hint\n" in result.stdout
    assert "Would fix" not in result.stdout  # stdout is only the diff (git apply can read it)
    assert "Would fix 6 findings in 1 file" in result.stderr
    assert result.exit_code == 1  # the findings are still there


def test_fix_from_stdin_prints_the_fixed_source(cli):
    result = _check(cli, "--fix", "--sdk", "2.34", "--stdin-filename", "k.py", "-", input=KERNEL_02)
    assert result.stdout == KERNEL_02_FIXED
    assert "Fixed 6." in result.stderr


def test_fix_and_diff_are_exclusive(cli, project):
    write(project / "k.py", KERNEL_02)
    assert _check(cli, "--fix", "--diff", "k.py").exit_code == 2


def test_fixes_in_json_output(cli, project):
    write(project / "k.py", KERNEL_02)
    doc = json.loads(_check(cli, "--format", "json", "k.py").stdout)
    findings = doc["findings"] if isinstance(doc, dict) else doc
    fixes = [f["fix"] for f in findings if f.get("fix")]
    assert len(fixes) == 7
    rename = next(f for f in fixes if f["edits"][0]["replacement"] == "nisa.dge_mode.hwdge")
    assert rename["safe"] is True
    assert rename["edits"][0]["range"]["start"]["line"] == 11
    assert any(f["safe"] is False for f in fixes)


def test_fixes_in_sarif_output(cli, project, sarif_log):
    write(project / "k.py", KERNEL_02)
    log = sarif_log(_check(cli, "--format", "sarif", "k.py").stdout)
    results = log["runs"][0]["results"]
    with_fix = [r for r in results if r.get("fixes")]
    assert len(with_fix) == 7
    replacement = with_fix[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert "deletedRegion" in replacement and "insertedContent" in replacement
