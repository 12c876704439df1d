"""The options of ``nkilint check`` for adopting it on an existing
repository: ``--write-baseline``, ``--baseline`` and ``--add-noqa``."""

from __future__ import annotations

from pathlib import Path

import click

from .. import baseline as baselines
from ..safefs import write_report
from ..fixes import FixError, write_atomically
from ..engine import Notification
from ..findings import Finding, Level
from ..noqa_writer import add_noqa
from ..run import Run
from .common import UsageFailure
from ..terminal import printable


def _with_lines(run: Run) -> list[tuple[int, Finding, str | None]]:
    return [(i, f, r.lines.get(f.span.start_line)) for i, r in enumerate(run.files) for f in r.findings]


def load_baseline(path: str) -> baselines.Baseline:
    """Read the baseline first, so a bad file fails before the run."""
    try:
        return baselines.load(Path(path))
    except baselines.BaselineError as exc:
        raise UsageFailure(str(exc)) from None


def write_baseline(run: Run, path: str) -> int:
    """Record the run's active findings; they are then in the baseline."""
    pairs = [(f, line) for _, f, line in _with_lines(run) if not f.suppressed]
    try:
        write_report(Path(path), baselines.render(pairs))
    except OSError as exc:
        raise UsageFailure(f"cannot write {path}: {exc.strerror or exc}") from None
    return len(pairs)


def apply_baseline(run: Run, baseline: baselines.Baseline) -> int:
    """Mark the findings the baseline lists; return how many of its entries
    matched nothing."""
    for result in run.files:
        pairs = [(f, result.lines.get(f.span.start_line)) for f in result.findings]
        result.findings, _ = baselines.apply(pairs, baseline)
    # Count unmatched entries over the whole run (apply() counts per call).
    matched = sum(1 for f in run.findings if f.baselined)
    return max(baseline.size - matched, 0)


def add_noqa_to_run(run: Run) -> tuple[int, int, list[Finding]]:
    """Write ``# noqa`` comments for the run's active findings: (findings
    suppressed, files changed, findings whose line cannot take a comment)."""
    added = files = 0
    skipped: list[Finding] = []
    for result in run.files:
        if result.text is None or result.disk_path is None:
            continue
        edit = add_noqa(result.text, result.findings)
        skipped.extend(edit.skipped)
        if edit.text == result.text:
            continue
        try:
            # The same safe rewrite --fix uses: symlinks, hard links, mode
            # and owner kept; a file changed meanwhile or read-only is left as is.
            write_atomically(Path(result.disk_path), result.text, edit.text)
        except (FixError, OSError) as exc:
            message = f"{result.path}: no noqa added: {exc}"
            run.notifications.append(Notification(Level.ERROR, message, result.path))
            click.echo(f"nkilint: error: {printable(message)}", err=True)
            continue
        added += edit.added
        files += 1
    return added, files, skipped
