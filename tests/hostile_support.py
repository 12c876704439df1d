"""Helpers of the hostile-input tests: a hang guard and a one-file check.

The deadline is a hang guard, not a speed benchmark: bounds are generous,
and the alarm turns a regression into a failure instead of a stuck run.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from pathlib import Path

from nkilint.config import Settings
from nkilint.discovery import InputFile
from nkilint.engine import Checker, FileResult, RunOptions
from nkilint.plugins import installed_rules
from nkilint.versions import LATEST


class Expired(BaseException):
    """Raised by the alarm; a BaseException so that the engine, which isolates
    rules that raise an Exception, lets it through."""


@contextmanager
def deadline(seconds: float):
    def expire(signum, frame):
        raise Expired(f"still running after {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_one(path: Path, extra_rules: tuple = ()) -> FileResult:
    """Every installed rule (and ``extra_rules``) on one file."""
    path = Path(path).resolve()
    ruleset = installed_rules()
    settings = Settings(root=path.parent, target_name="trn2", nki_version=LATEST, nki_version_explicit=False)
    checker = Checker(settings, ruleset, frozenset(ruleset.rules), RunOptions(extra_rules=extra_rules))
    return checker.check_path(InputFile(path, path.name, True))
