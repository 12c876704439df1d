"""Helpers of the hostile-input tests: a hang guard and a one-file check.

The deadline is a hang guard, not a speed benchmark: bounds are generous,
and the alarm turns a regression into a failure instead of a stuck run.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from pathlib import Path

from nkilint.commands.common import _ruleset_and_enabled, build_settings
from nkilint.config import Settings
from nkilint.discovery import InputFile, discover
from nkilint.engine import Checker, FileResult, RunOptions, project_scan_roots
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


def findings_per_file(root: Path, order) -> dict[str, list]:
    """Every file under the current directory checked in ``order(files)`` by
    one checker, as the command line configures it: path -> sorted
    (rule, line, message)."""
    settings = build_settings((".",), None, False)
    ruleset, enabled = _ruleset_and_enabled(settings)
    files, _ = discover(["."], settings.root, settings.all_excludes)
    checker = Checker(settings, ruleset, enabled, RunOptions(project_roots=project_scan_roots(["."], settings)))
    out = {}
    for item in order(files):
        result = checker.check_path(item)
        out[result.path] = sorted((f.rule_id, f.span.start_line, f.message) for f in result.findings)
    return out
