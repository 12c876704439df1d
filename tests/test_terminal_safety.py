"""Hostile names and source text reach the terminal escaped (nkilint.terminal)."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from nkilint.cli import cli
from nkilint.terminal import printable

BAD_KERNEL = """\
import nki
import nki.language as nl


@nki.jit
def k(a):
    t = nl.ndarray((256, 64), dtype=nl.float32, buffer=nl.sbuf)  # \x1b[2J\u202e
    return t
"""


@pytest.mark.parametrize("raw, shown", [
    ("plain/path.py", "plain/path.py"),
    ("caf\u00e9/\u4e2d.py", "caf\u00e9/\u4e2d.py"),
    ("a\nb.py", "a\\nb.py"),
    ("a\rb", "a\\rb"),
    ("\x1b]0;title\x07.py", "\\x1b]0;title\\x07.py"),
    ("evil\u202egnp.py", "evil\\u202egnp.py"),
    ("tab\there", "tab\\there"),
    ("\x7f\x85", "\\x7f\\x85"),
])
def test_printable_escapes_only_what_moves_or_hides_text(raw, shown):
    assert printable(raw) == shown


def test_printable_can_keep_tabs():
    assert printable("\tx = 1\x1b", keep_tabs=True) == "\tx = 1\\x1b"


def _hostile_tree(tmp_path):
    name = "k\x1b[31m\nx.py"
    (tmp_path / "pyproject.toml").write_text('[tool.nkilint]\nsdk = "2.34"\n')
    try:
        (tmp_path / name).write_text(BAD_KERNEL)
    except (OSError, ValueError):
        pytest.skip("the file system refuses control characters in names")
    return name


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names")
@pytest.mark.parametrize("fmt", ["text", "concise", "github"])
def test_human_formats_print_no_control_character(tmp_path, monkeypatch, fmt):
    _hostile_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["check", "--no-cache", "--format", fmt, "."])
    assert res.exit_code == 1, res.output
    out = res.output
    assert "\x1b" not in out and "\u202e" not in out
    # GitHub's command syntax has its own escape for a line break.
    assert ("k\\x1b[31m%0Ax.py" if fmt == "github" else "k\\x1b[31m\\nx.py") in out
    if fmt == "text":
        assert "# \\x1b[2J\\u202e" in out  # the source line shown, escaped


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file names")
def test_json_keeps_the_real_name(tmp_path, monkeypatch):
    name = _hostile_tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", "."])
    paths = {f["path"] for f in json.loads(res.output)["findings"]}
    assert paths == {name}


def test_an_error_about_a_hostile_path_is_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["check", "--no-cache", "missing\x1b[2J.py"])
    assert res.exit_code == 2
    assert "\x1b" not in res.output
    assert "missing\\x1b[2J.py" in res.output
