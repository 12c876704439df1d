"""Findings and spans as LSP types.

A ``Span`` counts lines from 1 and columns from 1 in code points, end
exclusive; LSP positions count from 0 in the negotiated encoding (UTF-16
unless the client offers another). The pygls position codec does the
encoding, given the document's lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from lsprotocol import types
from pygls.uris import from_fs_path

from ..findings import Finding, Level, Span
from ..rule import RuleSet

SOURCE = "nkilint"
UNUSED_NOQA = "NKI004"

SEVERITY = {
    Level.ERROR: types.DiagnosticSeverity.Error,
    Level.WARNING: types.DiagnosticSeverity.Warning,
    Level.NOTE: types.DiagnosticSeverity.Information,
}


def span_to_range(span: Span, lines: Sequence[str], codec) -> types.Range:
    """The LSP range of a span, clamped to the document."""
    last = max(len(lines) - 1, 0)
    start_line = min(max(span.start_line - 1, 0), last)
    end_line = min(max(span.end_line - 1, start_line), last)
    start = types.Position(start_line, max(span.start_col - 1, 0))
    end = types.Position(end_line, max(span.end_col - 1, 0))
    if (end.line, end.character) < (start.line, start.character):
        end = start
    return codec.range_to_client_units(list(lines), types.Range(start, end))


def range_to_span(rng: types.Range, lines: Sequence[str], codec) -> Span:
    """The span (code points) of an LSP range."""
    inner = codec.range_from_client_units(list(lines), rng)
    return Span(inner.start.line + 1, inner.start.character + 1, inner.end.line + 1, inner.end.character + 1)


def is_deprecation(finding: Finding, ruleset: RuleSet) -> bool:
    """Findings about an API the target release deprecated or renamed."""
    rule = ruleset.rules.get(finding.rule_id)
    if rule is None or rule.family != "migration":
        return False
    return "deprecat" in finding.message.lower() or "deprecated" in rule.name or rule.name == "renamed-api"


def to_diagnostic(finding: Finding, uri: str, lines: Sequence[str], codec, ruleset: RuleSet,
                  root: Path | None = None) -> types.Diagnostic:
    """``root``: the project root that a related location's path is relative to."""
    rule = ruleset.rules.get(finding.rule_id)
    message = finding.message + (f"\nhint: {finding.hint}" if finding.hint else "")
    tags = []
    if finding.rule_id == UNUSED_NOQA:
        tags.append(types.DiagnosticTag.Unnecessary)
    if is_deprecation(finding, ruleset):
        tags.append(types.DiagnosticTag.Deprecated)
    related = []
    for r in finding.related:
        if r.path is None or root is None:
            location = types.Location(uri, span_to_range(r.span, lines, codec))
        else:  # another module (a helper the kernel calls): its text is not at hand
            start = types.Position(max(r.span.start_line - 1, 0), max(r.span.start_col - 1, 0))
            end = types.Position(max(r.span.end_line - 1, 0), max(r.span.end_col - 1, 0))
            location = types.Location(from_fs_path(str(root / r.path)), types.Range(start, end))
        related.append(types.DiagnosticRelatedInformation(location, r.message))
    return types.Diagnostic(
        range=span_to_range(finding.span, lines, codec),
        message=message,
        severity=SEVERITY[finding.level],
        code=finding.rule_id,
        code_description=types.CodeDescription(href=rule.help_uri()) if rule is not None else None,
        source=SOURCE,
        related_information=related or None,
        tags=tags or None,
        data={"rule": finding.rule_id, "fixable": finding.fix is not None,
              "safe": bool(finding.fix and finding.fix.safe)},
    )
