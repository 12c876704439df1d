"""Hostile files and checkouts: special files, non-text coding cookies, rule
packs planted in the current directory. Each gives a clear per-file result,
the other files of the run are still checked, and nothing hangs or runs."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

from conftest import LEGACY_KERNEL, make_pack, run_nkilint, write
from nkilint.safefs import FileTooLargeError, NotRegularFileError, read_bytes_capped

posix_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and /dev/zero")


def _findings(result) -> dict[str, list[tuple[str, str]]]:
    doc = json.loads(result.stdout)
    out: dict[str, list[tuple[str, str]]] = {}
    for f in doc["findings"]:
        out.setdefault(f["path"], []).append((f["rule"], f["message"]))
    return out


# -- special files ------------------------------------------------------------
@posix_only
def test_fifo_named_explicitly_is_not_opened_for_a_blocking_read(cli, project):
    os.mkfifo(project / "pipe.py")
    write(project / "ok.py", LEGACY_KERNEL)
    result = cli("check", "--format", "json", "pipe.py", "ok.py")
    found = _findings(result)
    [(rule, message)] = found["pipe.py"]
    assert rule == "NKI002" and "FIFO" in message and "not a regular file" in message
    assert [r for r, _ in found["ok.py"]] == ["NKI601"]


@posix_only
def test_symlink_to_dev_zero_is_not_read(cli, project):
    os.symlink("/dev/zero", project / "zero.py")
    write(project / "ok.py", LEGACY_KERNEL)
    result = cli("check", "--format", "json", "zero.py", "ok.py")
    found = _findings(result)
    [(rule, message)] = found["zero.py"]
    assert rule == "NKI002" and "character device" in message
    assert [r for r, _ in found["ok.py"]] == ["NKI601"]


@posix_only
def test_special_files_found_by_walking_and_as_project_files(project):
    """A walked tree with a FIFO and a device among its modules, a FIFO as
    pyproject.toml and requirements.txt, and a kernel importing the FIFO
    module: the run ends (in a subprocess with a timeout) and checks ok.py."""
    os.mkfifo(project / "pipe.py")
    os.mkfifo(project / "pyproject.toml")
    os.mkfifo(project / "requirements.txt")
    os.symlink("/dev/zero", project / "zero.py")
    write(project / "ok.py", "import pipe\nimport zero\n" + LEGACY_KERNEL)
    (project / ".git").mkdir()  # the project root: callers are scanned there
    proc = run_nkilint("check", "--format", "json", ".", cwd=project)
    assert proc.returncode == 1, proc.stderr
    found = _findings(proc)
    assert [r for r, _ in found["ok.py"]] == ["NKI601"]
    assert [r for r, _ in found["pipe.py"]] == ["NKI002"]
    assert [r for r, _ in found["zero.py"]] == ["NKI002"]
    assert "Traceback" not in proc.stderr


def test_read_bytes_capped_stops_at_the_cap(tmp_path):
    path = tmp_path / "big.py"
    path.write_bytes(b"x" * 101)
    with pytest.raises(FileTooLargeError):
        read_bytes_capped(path, 100)
    assert read_bytes_capped(path, 101) == b"x" * 101
    with pytest.raises(NotRegularFileError):
        read_bytes_capped(tmp_path, 100)


@posix_only
def test_read_bytes_capped_refuses_a_growing_device_without_reading_it():
    # /dev/zero has st_size 0: the size check alone would not stop the read.
    assert os.stat("/dev/zero").st_size == 0 and stat.S_ISCHR(os.stat("/dev/zero").st_mode)
    with pytest.raises(NotRegularFileError):
        read_bytes_capped("/dev/zero", 10)


# -- coding cookies -------------------------------------------------------------
@pytest.mark.parametrize("codec", ["rot13", "rot_13", "base64", "zlib", "hex", "bz2", "uu", "quopri"])
def test_non_text_codec_cookie_is_nki002_for_that_file_only(cli, project, codec):
    write(project / "odd.py", f"# -*- coding: {codec} -*-\nx = 1\n")
    write(project / "ok.py", LEGACY_KERNEL)
    result = cli("check", "--format", "json", "odd.py", "ok.py")
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 1
    found = _findings(result)
    [(rule, message)] = found["odd.py"]
    assert rule == "NKI002" and "not a text encoding" in message and codec in message
    assert [r for r, _ in found["ok.py"]] == ["NKI601"]


def test_codec_that_fails_its_own_way_is_nki002(cli, project):
    write(project / "puny.py", "# coding: punycode\nx = 1\n")
    write(project / "ok.py", LEGACY_KERNEL)
    found = _findings(cli("check", "--format", "json", "puny.py", "ok.py"))
    [(rule, message)] = found["puny.py"]
    assert rule == "NKI002" and "punycode" in message
    assert [r for r, _ in found["ok.py"]] == ["NKI601"]


def test_non_text_codec_in_an_imported_sibling_does_not_abort(cli, project):
    write(project / "helper.py", "# coding: rot13\nx = 1\n")
    write(project / "ok.py", "import helper\n" + LEGACY_KERNEL)
    result = cli("check", "--format", "json", "ok.py")
    assert [r for r, _ in _findings(result)["ok.py"]] == ["NKI601"]


# -- python -m nkilint inside an untrusted checkout ---------------------------------
def test_python_m_does_not_load_rule_packs_from_the_cwd(tmp_path):
    """A checkout holding a *.dist-info that registers a rule pack: `python -m
    nkilint` (which puts the cwd first on sys.path) must not import it."""
    checkout = tmp_path / "checkout"
    canary = checkout / "CANARY"
    make_pack(checkout, "evilpack", "evil_rules",
              f"import pathlib\npathlib.Path({str(canary)!r}).write_text('ran')\nRULES = []\n", "evil_rules:RULES")
    write(checkout / "ok.py", LEGACY_KERNEL)
    for args in (("rules",), ("check", "ok.py")):
        proc = run_nkilint(*args, cwd=checkout)
        assert not canary.exists(), f"`python -m nkilint {' '.join(args)}` ran code from the checkout"
        assert proc.returncode in (0, 1), proc.stderr
    # The same pack on PYTHONPATH is the user's choice and is loaded.
    proc = run_nkilint("rules", cwd=tmp_path, env_extra={"PYTHONPATH": str(checkout)})
    assert canary.exists(), proc.stderr


def test_python_m_does_not_import_shadowing_modules_from_the_cwd(tmp_path):
    checkout = tmp_path / "checkout"
    canary = checkout / "CANARY"
    for name in ("click", "libcst", "networkx", "nkilint_rules", "tomllib", "packaging"):
        write(checkout / f"{name}.py", f"import pathlib\npathlib.Path({str(canary)!r}).write_text({name!r})\n")
    write(checkout / "ok.py", LEGACY_KERNEL)
    proc = run_nkilint("check", "--fix", "--sdk", "2.34", "ok.py", cwd=checkout)
    assert not canary.exists(), canary.read_text()
    assert proc.returncode in (0, 1), proc.stderr


def test_main_module_drops_only_the_entry_python_m_inserted(monkeypatch, tmp_path):
    import importlib

    import nkilint.__main__ as entry

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), "/somewhere/else", str(tmp_path)])
    importlib.reload(entry)
    assert sys.path == ["/somewhere/else", str(tmp_path)]
