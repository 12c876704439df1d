"""Rewriting a source file safely: all or nothing, and only if nobody else
changed it since it was read.

Used by ``--fix`` and ``--add-noqa``. The new text is written to a
temporary file in the same directory (same file system, so the final
rename is atomic), encoded like the original (coding cookie or BOM kept),
read back, validated, given the original's permissions, and renamed over
the original only if the original's bytes did not change meanwhile. On any
failure (or Ctrl-C) the original is untouched and the temporary file is
removed.
"""

from __future__ import annotations

import io
import os
import tempfile
import tokenize
from pathlib import Path
from typing import Callable

from .source import decode_source


class WriteError(Exception):
    """The file was not rewritten (it changed on disk, cannot be encoded...)."""


def encoding_of(raw: bytes) -> str:
    """The codec Python reads ``raw`` with (PEP 263; 'utf-8-sig' keeps a BOM)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError:
        encoding = "utf-8"
    return encoding


def replace_text(path: Path, original: str, new_text: str, validate: Callable[[str], None] | None = None) -> None:
    """Replace ``path``'s text ``original`` by ``new_text``.

    ``validate(new_text)`` may raise to refuse the write (e.g. the text does
    not parse); its exception propagates unchanged. Raises ``WriteError``
    when the file changed meanwhile or the text cannot be encoded.
    """
    raw = path.read_bytes()
    try:
        current = decode_source(raw)
    except Exception:  # noqa: BLE001 - undecodable now: it changed
        current = None
    if current != original:
        raise WriteError(f"{path} changed on disk since it was read; not overwritten")
    encoding = encoding_of(raw)
    try:
        data = new_text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise WriteError(f"{path}: the new text cannot be encoded as {encoding} ({exc}); not overwritten") from None
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".nkilint-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if decode_source(Path(tmp).read_bytes()) != new_text:
            raise WriteError(f"{path}: the temporary file does not read back as written; not overwritten")
        if validate is not None:
            validate(new_text)
        try:
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        except OSError:  # pragma: no cover - e.g. a file system without modes
            pass
        if path.read_bytes() != raw:
            raise WriteError(f"{path} changed on disk while it was rewritten; not overwritten")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_report(path: Path, text: str) -> None:
    """Write a report (or a baseline) all at once: a reader never sees half
    of it, and an interrupted run leaves the previous file in place."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".nkilint-tmp", dir=directory)
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
