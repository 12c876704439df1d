"""Temporary files a killed run left are removed by the next write (nkilint.tempfiles)."""

from __future__ import annotations

import os
import subprocess
import sys

from nkilint.safefs import FIX_SUFFIX, REPORT_SUFFIX, replace_bytes, write_report
from nkilint.tempfiles import _HOST, make_temp, sweep_stale


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_temp_file_names_its_host_and_process(tmp_path):
    fd, path = make_temp(tmp_path, "k.py", FIX_SUFFIX)
    os.close(fd)
    name = os.path.basename(path)
    assert name.startswith(f".k.py.{_HOST}-{os.getpid()}.") and name.endswith(FIX_SUFFIX)


def test_only_stale_temp_files_of_that_file_are_removed(tmp_path):
    dead = _dead_pid()
    stale = tmp_path / f".k.py.{_HOST}-{dead}.abc123{FIX_SUFFIX}"
    live = tmp_path / f".k.py.{_HOST}-{os.getpid()}.def456{FIX_SUFFIX}"
    other_host = tmp_path / f".k.py.otherhost-{dead}.ghi789{FIX_SUFFIX}"
    other_file = tmp_path / f".j.py.{_HOST}-{dead}.jkl012{FIX_SUFFIX}"
    unrelated = tmp_path / ".k.py.bak"
    for p in (stale, live, other_host, other_file, unrelated):
        p.write_text("x")
    removed = sweep_stale(tmp_path, "k.py", FIX_SUFFIX)
    assert removed == [str(stale)]
    assert not stale.exists()
    assert live.exists() and other_host.exists() and other_file.exists() and unrelated.exists()


def test_a_name_with_regex_characters_is_matched_literally(tmp_path):
    dead = _dead_pid()
    stale = tmp_path / f".a+b[1].py.{_HOST}-{dead}.x{FIX_SUFFIX}"
    near = tmp_path / f".aab1.py.{_HOST}-{dead}.x{FIX_SUFFIX}"
    stale.write_text("x")
    near.write_text("x")
    assert sweep_stale(tmp_path, "a+b[1].py", FIX_SUFFIX) == [str(stale)]
    assert near.exists()


def test_a_fix_write_sweeps_the_stale_temp_of_its_file(tmp_path):
    target = tmp_path / "k.py"
    target.write_bytes(b"old\n")
    stale = tmp_path / f".k.py.{_HOST}-{_dead_pid()}.zz{FIX_SUFFIX}"
    stale.write_text("half a fix")
    replace_bytes(target, b"new\n", b"old\n")
    assert target.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.py"]


def test_a_report_write_sweeps_the_stale_temp_of_its_report(tmp_path):
    report = tmp_path / "out.sarif"
    stale = tmp_path / f".out.sarif.{_HOST}-{_dead_pid()}.zz{REPORT_SUFFIX}"
    stale.write_text("{")
    write_report(report, "{}")
    assert report.read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.sarif"]


def test_a_directory_that_cannot_be_listed_is_left_alone(tmp_path):
    assert sweep_stale(tmp_path / "missing", "k.py", FIX_SUFFIX) == []
