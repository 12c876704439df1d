"""A one-line progress display on stderr for long runs on a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from .engine import FileResult

MIN_FILES = 8  # shorter runs finish before a progress line helps


class Progress:
    """``[ 120/350] 42 findings, 12.3 s`` redrawn in place; nothing at all
    when the stream is not a terminal or the run is short."""

    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = total >= MIN_FILES and _is_terminal(self.stream)
        self.enabled = enabled
        self.total = total
        self.done = 0
        self.findings = 0
        self.started = time.monotonic()
        self._last_draw = 0.0

    def update(self, result: FileResult) -> None:
        self.done += 1
        self.findings += sum(1 for f in result.findings if not f.suppressed)
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last_draw < 0.1 and self.done < self.total:
            return  # redraw at most ten times a second
        self._last_draw = now
        width = len(str(self.total))
        line = (f"[{self.done:>{width}}/{self.total}] {self.findings} finding{'s' if self.findings != 1 else ''}, "
                f"{now - self.started:.1f} s")
        self.stream.write("\r" + line + "\x1b[K")
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled and self.done:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
