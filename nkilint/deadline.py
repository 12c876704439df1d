"""A wall-clock limit on the analysis of one file.

Every analysis in nkilint has its own budget (interpreter steps, nesting
depth, integer sizes), but a plugin rule, or a bug in a bundled one, can
still loop. The engine runs each file's rules under ``file_deadline``: when
the time is up, the rule being run is stopped by ``FileTimeLimit`` raised
from a SIGALRM handler, the rules not yet run are skipped, and the file
gets one NKI005 note that names the limit and what was skipped. The other
files of the run are checked as usual.

The alarm only exists on POSIX and only in a process's main thread (where
the CLI and the worker processes run the rules); elsewhere (a thread of the
language server, Windows) the limit is not enforced and the budgets of the
analyses are what bound the work.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# Seconds per file. The slowest file of the public corpora takes about two
# seconds; a minute is far beyond any real kernel and still ends a stuck run.
DEFAULT_FILE_TIME_LIMIT = 60.0


class FileTimeLimit(BaseException):
    """The file's time is up. A BaseException, so that a rule's or the model's
    ``except Exception`` cannot swallow it."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the time limit of {seconds:g} s per file ran out")
        self.seconds = seconds


def enforceable() -> bool:
    """Whether a limit can be set here (POSIX, main thread)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def file_deadline(seconds: float | None) -> Iterator[None]:
    """Raise FileTimeLimit in the body once ``seconds`` of wall time pass.

    No limit when ``seconds`` is None or 0, or where it cannot be enforced.
    An alarm the caller already set keeps working: if it is due first, its
    handler runs when it is due; afterwards it is set again with the time it
    had left."""
    if not seconds or seconds <= 0 or not enforceable():
        yield
        return

    armed = True
    outer_handler = signal.getsignal(signal.SIGALRM)
    outer_remaining = signal.getitimer(signal.ITIMER_REAL)[0]
    # An alarm the caller set that is due first stays the caller's.
    outer_first = bool(outer_remaining) and outer_remaining <= seconds and callable(outer_handler)

    def on_alarm(signum, frame):
        # Not once the body is done: the alarm may land in the finally below.
        if not armed:
            return
        if outer_first:
            outer_handler(signum, frame)
        raise FileTimeLimit(seconds)

    start = time.monotonic()
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, outer_remaining if outer_first else seconds)
    try:
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_remaining:
            # Give the caller's alarm the time it had left, at least a tick.
            elapsed = time.monotonic() - start
            signal.setitimer(signal.ITIMER_REAL, max(outer_remaining - elapsed, 0.001))
