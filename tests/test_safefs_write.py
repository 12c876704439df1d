"""Writing reports and baselines (safefs.write_report) through the same
temporary-file-and-rename path as --fix (safefs.replace_bytes)."""

from __future__ import annotations

import os
import stat

import pytest

from nkilint import safefs
from nkilint.safefs import WriteRefused, replace_bytes, write_report


def leftovers(directory):
    return [p.name for p in directory.iterdir() if p.name.startswith(".")]


def test_write_report_creates_a_file_with_the_umask_mode(tmp_path):
    path = tmp_path / "report.json"
    old = os.umask(0o027)
    try:
        write_report(path, "{\"a\": \"\u00e9\"}\r\n")
    finally:
        os.umask(old)
    assert path.read_bytes() == "{\"a\": \"\u00e9\"}\r\n".encode("utf-8")  # no newline translation
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


def test_write_report_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text("old", encoding="utf-8")
    path.chmod(0o600)
    inode = path.stat().st_ino
    write_report(path, "new")
    assert path.read_text(encoding="utf-8") == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.stat().st_ino != inode  # replaced by rename, never written in place


def test_write_report_goes_through_fsync_and_leaves_the_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "report.txt"
    path.write_text("previous", encoding="utf-8")
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(safefs.os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    write_report(path, "second")
    assert len(synced) == 2  # the data, then the directory holding the rename

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safefs.os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_report(path, "third")
    assert path.read_text(encoding="utf-8") == "second"
    assert leftovers(tmp_path) == []


def test_replace_bytes_still_refuses_a_file_changed_while_writing(tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(b"a = 1\n")

    def someone_edits(tmp):
        path.write_bytes(b"a = 3\n")

    with pytest.raises(WriteRefused):
        replace_bytes(path, b"a = 2\n", b"a = 1\n", validate=someone_edits)
    assert path.read_bytes() == b"a = 3\n"
    assert leftovers(tmp_path) == []
