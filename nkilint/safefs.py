"""Reading files a hostile tree may hold without hanging or exhausting memory.

A path named ``*.py`` (or ``pyproject.toml``, ``requirements.txt``) may be a
FIFO, a device, a socket or a symlink to one: opening a FIFO for reading
blocks until a writer appears, and ``/dev/zero`` never ends. Every file
nkilint reads goes through ``read_bytes_capped``: the file is opened without
blocking, checked to be a regular file on the open descriptor (no race
between the check and the read) and read up to a size cap.

Every file nkilint writes is replaced through one temporary-file-and-rename
path (``_replace_through_temp``): source files rewritten by ``--fix``
(``replace_bytes``, behind ``nkilint.fixes.write_atomically``) and reports
and baselines (``write_report``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .interrupts import interrupts_deferred
from .tempfiles import make_temp, sweep_stale

# The suffixes of the temporary files a fix and a report are written to
# before the rename.
FIX_SUFFIX = ".nkilint-fix"
REPORT_SUFFIX = ".nkilint-tmp"

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


# -- rewriting a file in place of the user (--fix), writing reports --------------
class WriteRefused(OSError):
    """A file --fix must not rewrite (read-only, a symlink out of the tree...)."""


def _inside(path: Path, trees: tuple[Path, ...]) -> bool:
    for tree in trees:
        try:
            path.relative_to(tree)
            return True
        except ValueError:
            continue
    return False


def rewrite_target(path: Path, trees: tuple[Path, ...] = ()) -> Path:
    """The file that rewriting ``path`` must replace: ``path`` itself, or the
    final target of a symlink (so the link stays a link). Raises
    WriteRefused for a symlink that cannot be resolved or whose target lies
    outside ``trees`` (when given), for anything but a regular file, and for
    a read-only file (no write bit, or not writable by this user)."""
    target = path
    if path.is_symlink():
        try:
            target = path.resolve(strict=True)
        except (OSError, RuntimeError):
            raise WriteRefused(0, "is a symlink whose target cannot be resolved; not rewritten", str(path)) from None
        resolved_trees = tuple(Path(os.path.realpath(t)) for t in trees)
        if trees and not _inside(target, resolved_trees):
            raise WriteRefused(
                0, f"is a symlink to {target}, outside the checked tree; not rewritten (fix the target itself)", str(path)
            )
    info = os.stat(target)
    if not stat.S_ISREG(info.st_mode):
        raise WriteRefused(0, f"is {_kind(info.st_mode)}, not a regular file; not rewritten", str(path))
    if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
        raise WriteRefused(0, "is read-only; not rewritten (make it writable to apply fixes)", str(path))
    return target


def replace_bytes(target: Path, data: bytes, expected: bytes, validate=None) -> None:
    """Replace the content of the regular file ``target`` by ``data`` if it
    still holds ``expected``, keeping its mode, owner and group (where this
    user may set them) and its hard links.

    A file with one link is replaced atomically: a temporary file in the
    same directory, flushed to disk, then renamed over it (a reader, a crash
    or a kill sees the old or the new file, never half of one). A file with
    several hard links is rewritten in place, in one write after checking
    its content, so every link sees the fix. ``validate(tmp_path)`` may raise
    to refuse the write. Raises WriteRefused when the file changed.
    """
    info = os.stat(target)
    if info.st_nlink > 1:
        with open(target, "r+b") as handle:
            if handle.read() != expected:
                raise WriteRefused(0, "changed on disk since it was read; not overwritten", str(target))
            if validate is not None:
                validate(None)
            handle.seek(0)
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
        return
    def unchanged() -> None:
        if read_bytes_capped(target, max(len(expected), 1) * 4 + (1 << 20)) != expected:
            raise WriteRefused(0, "changed on disk while fixing; not overwritten", str(target))

    _replace_through_temp(target, data, info.st_mode & 0o7777, (info.st_uid, info.st_gid), FIX_SUFFIX,
                          validate, unchanged)


def write_report(path: Path, text: str) -> None:
    """Write a report or a baseline all at once: a reader never sees half of
    it, and an interrupted run leaves the previous file in place. An existing
    file keeps its mode, owner and group (where this user may set them); a
    new one gets the mode the umask allows. ``path`` itself is replaced (a
    symlink there becomes the report)."""
    try:
        info = os.stat(path)
        mode, owner = info.st_mode & 0o7777, (info.st_uid, info.st_gid)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode, owner = 0o666 & ~umask, None
    _replace_through_temp(path, text.encode("utf-8"), mode, owner, REPORT_SUFFIX)


def _replace_through_temp(path: Path, data: bytes, mode: int, owner: tuple[int, int] | None, suffix: str,
                          validate=None, before_rename=None) -> None:
    """Put ``data`` at ``path`` atomically: a temporary file in the same
    directory, flushed to disk, given ``mode`` (and ``owner`` when set),
    then renamed over ``path``, and the rename itself made durable. A
    reader, a crash or a kill sees the old or the new file, never half of
    one; on any failure the temporary file is removed. ``validate(tmp)``
    and ``before_rename()`` may raise to refuse the write."""
    directory = path.parent if str(path.parent) else Path(".")
    sweep_stale(directory, path.name, suffix)  # left by a killed run
    with interrupts_deferred():  # Ctrl-C waits until the temporary file is renamed or removed
        _write_through_temp(directory, path, data, mode, owner, suffix, validate, before_rename)
    try:  # make the rename itself durable
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(dir_fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(dir_fd)


def _write_through_temp(directory: Path, path: Path, data: bytes, mode: int, owner: tuple[int, int] | None,
                        suffix: str, validate, before_rename) -> None:
    """The temporary file's whole life: made, written, flushed, checked and
    renamed over ``path``, or removed on any failure."""
    fd, tmp = make_temp(directory, path.name, suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if validate is not None:
            validate(Path(tmp))
        try:
            os.chmod(tmp, mode)
        except OSError:  # pragma: no cover - a file system without modes
            pass
        if owner is not None and owner != (os.stat(tmp).st_uid, os.stat(tmp).st_gid) and hasattr(os, "chown"):
            try:
                os.chown(tmp, *owner)
                os.chmod(tmp, mode)  # chown clears set-id bits
            except OSError:
                pass  # not ours to give away: the file is now owned by this user
        if before_rename is not None:
            before_rename()
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
