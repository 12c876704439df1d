"""GitHub Actions workflow commands (``::error file=...::message``)."""

from __future__ import annotations

from ..findings import Level
from ..run import Run
from ..terminal import printable

_COMMAND = {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "notice"}


def _escape_data(text: str) -> str:
    # Line breaks are the command syntax's own escapes; every other control
    # character (ESC of a colour sequence in a hostile file name, say) is
    # written visibly, as in the text output.
    lines = text.replace("\r\n", "\n").split("\n")
    return "%0A".join(printable(line).replace("%", "%25") for line in lines)


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(run: Run) -> str:
    out = []
    for f in run.active:
        rule = run.ruleset.rules.get(f.rule_id)
        title = f"{f.rule_id} ({rule.name})" if rule else f.rule_id
        props = ",".join(
            [
                f"file={_escape_property(f.path)}",
                f"line={f.span.start_line}",
                f"col={f.span.start_col}",
                f"endLine={f.span.end_line}",
                f"endColumn={f.span.end_col}",
                f"title={_escape_property(title)}",
            ]
        )
        message = f.message + (f"\nhint: {f.hint}" if f.hint else "")
        out.append(f"::{_COMMAND[f.level]} {props}::{_escape_data(message)}")
    for n in run.all_notifications:
        props = f"file={_escape_property(n.path)}" if n.path else ""
        sep = " " if props else ""
        out.append(f"::{_COMMAND[n.level]}{sep}{props}::{_escape_data(n.message)}")
    return "\n".join(out) + ("\n" if out else "")
