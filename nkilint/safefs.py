"""Reading files a hostile tree may hold without hanging or exhausting memory.

A path named ``*.py`` (or ``pyproject.toml``, ``requirements.txt``) may be a
FIFO, a device, a socket or a symlink to one: opening a FIFO for reading
blocks until a writer appears, and ``/dev/zero`` never ends. Every file
nkilint reads goes through ``read_bytes_capped``: the file is opened without
blocking, checked to be a regular file on the open descriptor (no race
between the check and the read) and read up to a size cap.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Configuration and pin files are small; a bigger one is not ours.
MAX_CONFIG_BYTES = 4 * 1024 * 1024


class NotRegularFileError(OSError):
    """The path is a FIFO, a device, a socket or a directory."""


class FileTooLargeError(OSError):
    """The file is larger than the cap for its kind."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes_capped(path: Path | str, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    Raises NotRegularFileError for anything but a regular file (symlinks are
    followed to their target), FileTooLargeError past ``limit`` (checked on
    the open file and again while reading, so a file that grows cannot
    overflow it), and OSError for the rest.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except IsADirectoryError:
        raise NotRegularFileError(21, "is a directory, not a regular file", str(path)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFileError(0, f"is {_kind(info.st_mode)}, not a regular file", str(path))
        if info.st_size > limit:
            raise FileTooLargeError(0, f"is larger than {_human(limit)}; not read", str(path))
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise FileTooLargeError(0, f"is larger than {_human(limit)}; not read", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text_capped(path: Path | str, limit: int = MAX_CONFIG_BYTES, errors: str = "strict") -> str:
    """UTF-8 text of a small regular file (configuration, pins)."""
    return read_bytes_capped(path, limit).decode("utf-8", errors)


def is_regular_file(path: Path | str) -> bool:
    """True for a regular file (or a symlink to one); never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _human(size: int) -> str:
    if size % (1024 * 1024) == 0:
        return f"{size // (1024 * 1024)} MiB"
    return f"{size} bytes"
