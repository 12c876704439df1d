"""A limit on the CPU time spent analysing one file.

Every analysis in nkilint has its own budget (interpreter steps, nesting
depth, integer sizes), but a plugin rule, or a bug in a bundled one, can
still loop. The engine runs each file's rules under ``file_deadline``: when
the file's time is up, the rule being run is stopped by ``FileTimeLimit``
raised from a signal handler, the rules not yet run are skipped, and the
file gets one NKI005 note that names the limit and what was skipped. The
other files of the run are checked as usual.

The limit counts the process's CPU time (``ITIMER_PROF``, SIGPROF), not wall
time: a machine loaded by other jobs, as CI machines are, makes every file
take longer by the clock but not in CPU, so a kernel that is fine on a
quiet machine is never cut short on a busy one. A rule that waits without
computing (sleeps, blocks) is not stopped; the rules nkilint ships never
wait.

The exception is never raised where it would leave the process broken:
inside the import machinery (a module half imported stays half imported)
or a garbage-collector callback (its exceptions are dropped, and CPython
3.11 can then fail the syntax tree it was building). There, and wherever an
exception might be dropped, the timer fires again shortly after, until the
exception reaches the rule.

The timer only exists on POSIX and only in a process's main thread (where
the CLI and the worker processes run the rules); elsewhere (a thread of the
language server, Windows) the limit is not enforced and the budgets of the
analyses are what bound the work. An alarm the caller set on another timer
(SIGALRM, ITIMER_REAL) is not touched.
"""

from __future__ import annotations

import gc
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# CPU seconds per file. The slowest file of the public corpora takes about
# two; a minute is far beyond any real kernel and still ends a stuck run.
DEFAULT_FILE_TIME_LIMIT = 60.0
# After a firing that may have been dropped, fire again this much later.
_RETRY_S = 0.05


def _unsafe_point(frame) -> bool:
    """Whether raising in ``frame`` could corrupt the process: an import in
    progress, or a garbage-collector callback."""
    callbacks = {getattr(cb, "__code__", None) for cb in gc.callbacks}
    depth = 0
    while frame is not None and depth < 200:
        code = frame.f_code
        if code.co_filename.startswith("<frozen importlib") or code in callbacks:
            return True
        frame = frame.f_back
        depth += 1
    return False


class FileTimeLimit(BaseException):
    """The file's time is up. A BaseException, so that a rule's or the model's
    ``except Exception`` cannot swallow it."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the time limit of {seconds:g} s per file ran out")
        self.seconds = seconds


def enforceable() -> bool:
    """Whether a limit can be set here (POSIX, main thread)."""
    return (hasattr(signal, "setitimer") and hasattr(signal, "SIGPROF")
            and threading.current_thread() is threading.main_thread())


@contextmanager
def file_deadline(seconds: float | None) -> Iterator[None]:
    """Raise FileTimeLimit in the body once it has used ``seconds`` of CPU.

    No limit when ``seconds`` is None or 0, or where it cannot be enforced.
    A profiling timer the caller already set is set again afterwards with
    the CPU time it had left (a nested use keeps the outer limit)."""
    if not seconds or seconds <= 0 or not enforceable():
        yield
        return
    armed = True

    def on_time_up(signum, frame):  # noqa: ARG001 - signal handler signature
        # Not once the body is done: the signal may land in the finally below.
        if not armed:
            return
        # If this lands where exceptions are dropped, the next firing retries.
        signal.setitimer(signal.ITIMER_PROF, _RETRY_S)
        if _unsafe_point(frame):
            return
        raise FileTimeLimit(seconds)

    outer_handler = signal.getsignal(signal.SIGPROF)
    outer_remaining = signal.getitimer(signal.ITIMER_PROF)[0]
    start = time.process_time()
    signal.signal(signal.SIGPROF, on_time_up)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, outer_handler if outer_handler is not None else signal.SIG_DFL)
        if outer_remaining:
            used = time.process_time() - start
            signal.setitimer(signal.ITIMER_PROF, max(outer_remaining - used, 0.001))
