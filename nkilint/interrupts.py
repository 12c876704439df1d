"""Ctrl-C that surfaces as another exception.

A KeyboardInterrupt raised inside a library's ``with`` block can be replaced
by the error its clean-up then raises: libcst's position provider, stopped
half-way through code generation, raises ``KeyError`` from its ``finally``,
and the interrupt survives only as that error's ``__context__``. Such an
error is the user's Ctrl-C, not a crashed rule or a bug in nkilint.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator


def caused_by_interrupt(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt is in the exception's cause/context chain."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Hold Ctrl-C until the block is done, then raise it.

    For short sections that must not stop half-way: a SIGINT that arrives
    while ``os.open`` creates a temporary file raises KeyboardInterrupt the
    moment the call returns, before the caller holds the name it would clean
    up, and the file is left behind. Only in the main thread (the only one
    Python delivers signals to), and only when the handler can be set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    except (ValueError, OSError, TypeError):  # pragma: no cover - no signal support here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            raise KeyboardInterrupt


__all__ = ["caused_by_interrupt", "interrupts_deferred"]
