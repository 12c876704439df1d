"""Human output: ruff-like ``path:line:col: ID [level] message`` lines, each
with the source line, a caret under the span and the fix hint."""

from __future__ import annotations

from collections import Counter

import click

from ..findings import Finding, Level
from ..run import Run
from ..terminal import printable

_LEVEL_COLOR = {Level.ERROR: "red", Level.WARNING: "yellow", Level.NOTE: "cyan"}


def _header(f: Finding, color: bool) -> str:
    loc = f"{printable(f.path)}:{f.span.start_line}:{f.span.start_col}:"
    level = f"[{f.level.label}]"
    if color:
        loc = click.style(loc, bold=True)
        level = click.style(level, fg=_LEVEL_COLOR[f.level])
        rid = click.style(f.rule_id, fg=_LEVEL_COLOR[f.level], bold=True)
    else:
        rid = f.rule_id
    return f"{loc} {rid} {level} {printable(f.message)}"


def _snippet(f: Finding, lines: dict[int, str]) -> list[str]:
    line = f.span.start_line
    text = lines.get(line)
    if text is None:
        return []
    text = printable(text.expandtabs(1))
    gutter = str(line)
    pad = " " * len(gutter)
    start = max(f.span.start_col - 1, 0)
    if f.span.end_line == line:
        width = max(f.span.end_col - f.span.start_col, 1)
    else:
        width = max(len(text) - start, 1)
    width = min(width, max(len(text) - start, 1))
    return [
        f"{pad} |",
        f"{gutter} | {text}",
        f"{pad} | {' ' * start}{'^' * width}",
    ]


def target_header(run: Run) -> str:
    """``target: SDK 2.29 (NKI 0.3) from requirements.txt:4; trn2``."""
    s = run.settings
    text = f"target: {s.release.label} {s.target_origin.text}; {s.target.name}"
    if s.overrides:
        # Some files may be checked at another release: say so where the
        # reader looks for the target (-v lists the tables).
        count = len(s.overrides)
        text += f"; {count} [[tool.nkilint.overrides]] table{'s' if count != 1 else ''} (-v lists them)"
    if s.scopes:
        count = len(s.scopes)
        text += f"; {count} nested configuration{'s' if count != 1 else ''} (-v lists them)"
    return text


def render_text(run: Run, color: bool = False, show_source: bool = True, statistics: bool = False) -> str:
    out: list[str] = [target_header(run)]
    for result in run.files:
        for f in result.findings:
            if f.suppressed:
                continue
            out.append(_header(f, color))
            if show_source:
                snippet = _snippet(f, result.lines)
                out.extend(snippet)
                pad = " " * (len(str(f.span.start_line)) if snippet else 1)
                for rel in f.related:
                    out.append(f"{pad} = note: {printable(rel.path or f.path)}:{rel.span.start_line}:"
                               f"{rel.span.start_col}: {printable(rel.message)}")
                if f.hint:
                    out.append(f"{pad} = hint: {printable(f.hint)}")
                if f.fix:
                    kind = "fix" if f.fix.safe else "unsafe fix"
                    out.append(f"{pad} = {kind} available: {printable(f.fix.description)}")
                out.append("")
    if statistics:
        out.extend(render_statistics(run))
    out.append(run.summary())
    return "\n".join(out) + "\n"


def render_statistics(run: Run) -> list[str]:
    counts = Counter(f.rule_id for f in run.active)
    lines = []
    for rule_id, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        rule = run.ruleset.rules.get(rule_id)
        name = rule.name if rule else ""
        level = rule.level.label if rule else ""
        fixable = "[*]" if rule is not None and rule.fixable else "   "
        lines.append(f"{count:>6}  {rule_id:<7} {fixable} {name:<40} {level}")
    if lines:
        lines.append("")
    return lines


def render_concise(run: Run) -> str:
    out = [target_header(run)] + [
        f"{printable(f.path)}:{f.span.start_line}:{f.span.start_col}: {f.rule_id} [{f.level.label}] "
        f"{printable(f.message)}"
        for f in run.active
    ]
    out.append(run.summary())
    return "\n".join(out) + "\n"
