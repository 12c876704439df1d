"""Bad input: every file yields findings or a per-file error, the other
files of the run are still checked, and `check` never writes to a file."""

from __future__ import annotations

import ast
import io
import json
import os
import subprocess
import sys

import pytest

from conftest import LEGACY_KERNEL, run_nkilint, snapshot, write


@pytest.fixture
def check_bad(cli, project):
    """Check a bad file next to a good one (ok.py, one NKI601); return the
    exit code, the bad file's findings and the JSON report."""

    def run(name: str, content: str | bytes | None, *args: str):
        if content is not None:
            write(project / name, content)
        write(project / "ok.py", LEGACY_KERNEL)
        before = snapshot(project)
        result = cli("check", "--format", "json", *args, name, "ok.py")
        assert snapshot(project) == before, "check modified an input file"
        doc = json.loads(result.stdout)
        assert [(f["rule"], f["path"]) for f in doc["findings"] if f["path"] == "ok.py"] == [("NKI601", "ok.py")]
        mine = [f for f in doc["findings"] if f["path"] == name]
        return result, mine, doc

    return run


def _python_error(source: str) -> SyntaxError:
    with pytest.raises(SyntaxError) as exc:
        ast.parse(source)
    return exc.value


# -- syntax errors ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "source,line,col",
    [
        ("x = (1,\ny = 2\n", 1, 5),  # unclosed paren: reported where it opens
        ("import nki\n\ndef f(:\n    pass\n", 3, 7),
        ('s = "héllo" + (\n', 1, 15),  # non-ASCII line: columns in code points
        ('x = "éé" + )\n', 1, 12),
        ('t = "日本語😀"\nu = (]\n', 2, 6),
        ("def f():\n  x = 1\n    y = 2\n", 3, 4),  # unexpected indent
    ],
)
def test_syntax_error_at_the_true_position(check_bad, source, line, col):
    result, mine, _ = check_bad("broken.py", source)
    assert result.exit_code == 1
    [f] = mine
    assert f["rule"] == "NKI001" and f["level"] == "error"
    err = _python_error(source)
    assert (f["range"]["start"]["line"], f["range"]["start"]["column"]) == (err.lineno, err.offset) == (line, col)
    assert f["message"] == f"syntax error: {err.msg}"
    end = f["range"]["end"]
    assert (end["line"], end["column"]) > (line, col)


def test_syntax_error_text_output(cli, project):
    write(project / "broken.py", 'x = 1\ns = "héllo" + (\n')
    out = cli("check", "broken.py").stdout.splitlines()[1:]  # after the target header
    assert out[0] == "broken.py:2:15: NKI001 [error] syntax error: '(' was never closed"
    assert out[2] == '2 | s = "héllo" + ('
    assert out[3] == "  | " + " " * 14 + "^"


# -- encodings -------------------------------------------------------------------------
def test_not_utf8_names_the_byte(check_bad):
    result, mine, _ = check_bad("latin.py", b'x = 1\ny = "caf\xe9"\n')
    [f] = mine
    assert f["rule"] == "NKI002"
    assert f["range"]["start"]["line"] == 2
    assert "not valid utf-8" in f["message"] and "0xe9" in f["message"]
    assert result.exit_code == 1


def test_declared_latin1_decodes(check_bad):
    source = '# -*- coding: latin-1 -*-\ns = "caf\xe9"; import neuronxcc.nki.language as nl\n\n\ndef kernel(a):\n    return nl.load(a)\n'
    result, mine, _ = check_bad("latin.py", source.encode("latin-1"))
    assert [f["rule"] for f in mine] == ["NKI601"]  # decoded and analysed, no NKI002
    assert mine[0]["range"]["start"] == {"line": 2, "column": len('s = "café"; ') + 1}


def test_declared_latin1_clean_file(cli, project):
    write(project / "latin.py", '# vim: set fileencoding=latin-1 :\nname = "Jos\xe9"\n'.encode("latin-1"))
    result = cli("check", "latin.py")
    assert result.exit_code == 0, result.stdout


def test_unknown_coding_cookie(check_bad):
    _, mine, _ = check_bad("cookie.py", b"# -*- coding: klingon -*-\nx = 1\n")
    [f] = mine
    assert f["rule"] == "NKI002"
    assert "unknown encoding 'klingon'" in f["message"]


def test_utf8_bom(check_bad):
    source = "\ufeff" + LEGACY_KERNEL
    result, mine, _ = check_bad("bom.py", source.encode("utf-8"))
    assert [(f["rule"], f["range"]["start"]) for f in mine] == [("NKI601", {"line": 1, "column": 1})]
    assert mine[0]["range"]["end"]["column"] == len("import neuronxcc.nki.language as nl") + 1


def test_utf8_bom_with_noqa(cli, project):
    write(project / "bom.py", ("\ufeff" + LEGACY_KERNEL.replace(" as nl\n", " as nl  # noqa: NKI601\n", 1)).encode())
    assert cli("check", "bom.py").exit_code == 0


# -- not source at all -------------------------------------------------------------------
def test_binary_file_named_explicitly(check_bad):
    _, mine, _ = check_bad("blob.bin", bytes(range(256)) * 4)
    [f] = mine
    assert f["rule"] == "NKI002"
    assert "NUL bytes" in f["message"]


def test_binary_py_file_found_by_walking(cli, project):
    write(project / "pkg" / "weird.py", b"\x7fELF\x00\x00\x01")
    write(project / "pkg" / "ok.py", LEGACY_KERNEL)
    doc = json.loads(cli("check", "--format", "json", "pkg").stdout)
    assert sorted((f["path"], f["rule"]) for f in doc["findings"]) == [("pkg/ok.py", "NKI601"), ("pkg/weird.py", "NKI002")]


def test_empty_file(cli, project):
    write(project / "empty.py", b"")
    result = cli("check", "--format", "json", "empty.py")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["findings"] == [] and doc["summary"]["files"] == 1


def test_empty_file_with_others(check_bad):
    result, mine, doc = check_bad("empty.py", b"")
    assert mine == []
    assert doc["summary"]["files"] == 2


def test_too_large_file(check_bad):
    _, mine, _ = check_bad("huge.py", b"x = 1\n" * (9 * 1024 * 1024 // 6))
    [f] = mine
    assert f["rule"] == "NKI002" and "larger than 8 MiB" in f["message"]


def test_unreadable_file(check_bad, project):
    path = write(project / "secret.py", LEGACY_KERNEL)
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("running as a user who can read mode-000 files (root)")
        _, mine, _ = check_bad("secret.py", None)
    finally:
        path.chmod(0o644)
    [f] = mine
    assert f["rule"] == "NKI002" and "permission denied" in f["message"]


def test_permission_denied_even_as_root(check_bad, project, monkeypatch):
    """The same path as test_unreadable_file, for runs where root can read
    mode-000 files: reading the file fails with EACCES."""
    import nkilint.safefs

    write(project / "secret.py", LEGACY_KERNEL)
    real = os.open

    def guarded_open(path, *args, **kwargs):
        if os.path.basename(path) == "secret.py":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(nkilint.safefs.os, "open", guarded_open)
    _, mine, _ = check_bad("secret.py", None)
    [f] = mine
    assert f["rule"] == "NKI002" and "permission denied" in f["message"]


def test_symlink_loop(check_bad, project):
    os.symlink("loop.py", project / "loop.py")
    result, mine, _ = check_bad("loop.py", None)
    [f] = mine
    assert f["rule"] == "NKI002" and "cannot read file" in f["message"]


def test_symlink_loop_as_the_only_path(cli, project):
    os.symlink("loop.py", project / "loop.py")
    result = cli("check", "--format", "json", "loop.py")  # the config search starts here
    [f] = json.loads(result.stdout)["findings"]
    assert (f["path"], f["rule"]) == ("loop.py", "NKI002")
    assert result.exit_code == 1


def test_symlink_loop_found_by_walking(cli, project):
    os.symlink("loop.py", project / "loop.py")
    write(project / "ok.py", LEGACY_KERNEL)
    write(project / "pyproject.toml", '[tool.nkilint.per-file-ignores]\n"vendor/*" = ["NKI601"]\n')
    result = cli("check", "--format", "json", ".")
    doc = json.loads(result.stdout)
    assert sorted((f["path"], f["rule"]) for f in doc["findings"]) == [("loop.py", "NKI002"), ("ok.py", "NKI601")]
    assert result.exit_code == 1


def test_dangling_symlink(check_bad, project):
    os.symlink("gone.py", project / "dangling.py")
    _, mine, _ = check_bad("dangling.py", None)
    [f] = mine
    assert f["rule"] == "NKI002"


def test_nonexistent_path_exits_2_and_others_are_checked(cli, project):
    write(project / "ok.py", LEGACY_KERNEL)
    for args in ([], ["--exit-zero"]):
        result = cli("check", "--format", "json", *args, "missing.py", "ok.py")
        assert result.exit_code == 2
        assert "missing.py: no such file or directory" in result.stderr
        doc = json.loads(result.stdout)
        assert [(f["path"], f["rule"]) for f in doc["findings"]] == [("ok.py", "NKI601")]
        assert any("missing.py" in n["message"] for n in doc["notifications"])


def test_nonexistent_path_alone_exits_2(cli, project):
    result = cli("check", "missing_dir/")
    assert result.exit_code == 2


# -- stdin that is not a stream of source ---------------------------------------------------
class _DirectoryStdin(io.RawIOBase):
    """Standard input whose reads go to a directory's file descriptor, as
    `nkilint check - < somedir` gives: read(2) fails with EISDIR."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = os.read(self._fd, len(buffer))
        buffer[: len(data)] = data
        return len(data)


def test_directory_as_stdin(cli, project):
    write(project / "ok.py", LEGACY_KERNEL)
    fd = os.open(project, os.O_RDONLY)
    try:
        stdin = io.BufferedReader(_DirectoryStdin(fd))
        result = cli("check", "--format", "json", "-", "ok.py", input=stdin)
    finally:
        os.close(fd)
    doc = json.loads(result.stdout)
    by_path = {f["path"]: f for f in doc["findings"]}
    assert by_path["ok.py"]["rule"] == "NKI601"
    assert by_path["-"]["rule"] == "NKI002"
    assert "directory" in by_path["-"]["message"]
    assert result.exit_code == 1


def test_directory_as_stdin_subprocess(project):
    """CPython itself refuses to start when fd 0 is a directory, before any
    nkilint code runs; the user still gets a clear message and a failure."""
    write(project / "ok.py", LEGACY_KERNEL)
    before = snapshot(project)
    fd = os.open(project, os.O_RDONLY)
    try:
        proc = run_nkilint("check", "-", "ok.py", cwd=project, stdin=fd)
    finally:
        os.close(fd)
    assert proc.returncode != 0
    assert "is a directory" in proc.stderr
    assert snapshot(project) == before


def test_closed_stdin(project):
    write(project / "ok.py", LEGACY_KERNEL)
    proc = subprocess.run(
        [sys.executable, "-m", "nkilint", "check", "--format", "json", "-", "ok.py"],
        cwd=project,
        preexec_fn=lambda: os.close(0),
        capture_output=True,
        text=True,
        timeout=60,
    )
    doc = json.loads(proc.stdout)
    assert sorted((f["path"], f["rule"]) for f in doc["findings"]) == [("-", "NKI002"), ("ok.py", "NKI601")]
    assert "standard input is closed" in doc["findings"][0]["message"] + doc["findings"][1]["message"]
    assert proc.returncode == 1, proc.stderr


def test_binary_stdin(cli, project):
    result = cli("check", "--format", "json", "-", "--stdin-filename", "x.py", input=b"\x00\x01\x02")
    [f] = json.loads(result.stdout)["findings"]
    assert (f["path"], f["rule"]) == ("x.py", "NKI002")


# -- line breaks that are not Python line breaks ------------------------------------------
def test_form_feed_does_not_shift_lines(cli, project):
    source = "x = 1\n\x0c\nimport neuronxcc.nki.language as nl\n\n\ndef kernel(a):\n    return nl.load(a)\n"
    write(project / "ff.py", source)
    out = cli("check", "ff.py").stdout.splitlines()[1:]  # after the target header
    assert out[0].startswith("ff.py:3:1: NKI601")
    assert out[2] == "3 | import neuronxcc.nki.language as nl"


def test_unicode_line_separator_in_a_string(cli, project, sarif_log):
    source = 's = "a\u2028b"; import neuronxcc.nki.language as nl\n\n\ndef kernel(a):\n    return nl.load(a)\n'
    write(project / "ls.py", source)
    result = cli("check", "--format", "sarif", "ls.py")
    region = sarif_log(result.stdout)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (1, len('s = "a\u2028b"; ') + 1)


def test_text_splices_respect_python_line_breaks():
    from nkilint.findings import Edit, Span
    from nkilint.fixes import apply_edits

    text = "x = 1\n\x0c\nabc = 2\n"
    assert apply_edits(text, [Edit(Span(3, 2, 3, 3), "X")]) == "x = 1\n\x0c\naXc = 2\n"


# -- nothing is written -----------------------------------------------------------------------
def test_check_never_writes(cli, project, sarif_log):
    files = {
        "a.py": LEGACY_KERNEL,
        "b.py": "x = (\n",
        "c.py": b"\xff\xfe",
        "d.py": LEGACY_KERNEL.replace("\n", "\r\n"),
        "sub/e.py": "import neuronxcc.nki.language as nl  # noqa: NKI601\n",
    }
    for name, content in files.items():
        write(project / name, content)
    before = snapshot(project)
    for fmt in ("text", "json", "sarif", "github", "concise"):
        result = cli("check", "--format", fmt, "--statistics", ".")
        assert result.exit_code == 1
        if fmt in ("text", "concise", "json"):
            # --statistics replaces the findings by the table (as ruff does).
            assert "NKI601" in result.stdout and "NKI001" in result.stdout
        else:
            assert "a.py" in result.stdout and "b.py" in result.stdout
        if fmt == "sarif":
            sarif_log(result.stdout)
    assert snapshot(project) == before
    assert sorted(os.listdir(project)) == ["a.py", "b.py", "c.py", "d.py", "sub"]
