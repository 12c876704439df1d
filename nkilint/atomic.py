"""Writing a report or a baseline all at once (source files are rewritten
by ``nkilint.fixes.write_atomically``, which also keeps symlinks, hard links,
mode and owner)."""

from __future__ import annotations

import os
from pathlib import Path

from .tempfiles import make_temp, sweep_stale

REPORT_SUFFIX = ".nkilint-tmp"


def write_report(path: Path, text: str) -> None:
    """Write a report (or a baseline) all at once: a reader never sees half
    of it, and an interrupted run leaves the previous file in place."""
    directory = path.parent if str(path.parent) else Path(".")
    sweep_stale(directory, path.name, REPORT_SUFFIX)  # left by a killed run
    fd, tmp = make_temp(directory, path.name, REPORT_SUFFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        try:
            mode = path.stat().st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
