"""Temporary files next to the file they will replace, and their clean-up.

An atomic rewrite needs its temporary file in the target's directory (a
rename across file systems is not atomic). A process killed with SIGKILL
between creating and renaming it cannot remove it, so the name says who
made it: ``.<name>.<host>-<pid>.<random><suffix>``. Before writing next to
a file, ``sweep_stale`` removes the temporary files of that same file whose
creator, on this host, is gone; a file of a live process, of another host
(a shared file system) or of another name is left alone.
"""

from __future__ import annotations

import os
import re
import socket
import tempfile
from pathlib import Path

_HOST = re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname())[:40] or "host"


def make_temp(directory: Path, name: str, suffix: str) -> tuple[int, str]:
    """A new temporary file for ``name`` in ``directory`` (fd, path), named
    so that a later run can tell when it is stale."""
    return tempfile.mkstemp(prefix=f".{name}.{_HOST}-{os.getpid()}.", suffix=suffix, dir=directory)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process, or cannot tell: keep the file
    return True


def sweep_stale(directory: Path, name: str, suffix: str) -> list[str]:
    """Remove the temporary files of ``name`` (made by ``make_temp`` with
    ``suffix``) whose process on this host no longer runs; the removed
    paths. Never raises: a sweep that cannot list or remove leaves things."""
    pattern = re.compile(rf"\.{re.escape(name)}\.{re.escape(_HOST)}-(\d+)\.[^/]*{re.escape(suffix)}\Z")
    removed: list[str] = []
    try:
        entries = os.listdir(directory)
    except OSError:
        return removed
    for entry in entries:
        match = pattern.fullmatch(entry)
        if match is None or _alive(int(match.group(1))):
            continue
        path = os.path.join(directory, entry)
        try:
            if os.path.isfile(path) and not os.path.islink(path):
                os.unlink(path)
                removed.append(path)
        except OSError:
            pass
    return removed
