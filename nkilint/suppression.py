"""``# noqa`` comments: parsing, applying, and finding the stale ones.

``# noqa: NKI201, NKI304`` on a line suppresses those rules' findings that
start on that line; a bare ``# noqa`` suppresses every finding there. Codes
may be rule ids or rule names. Comments are found with the tokenizer, and
only in files whose text contains "noqa" at all (the common case costs one
substring search).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .findings import Finding, Span
from .source import SourceFile

_NOQA_RE = re.compile(r"#\s*noqa(?P<sep>\s*:\s*(?P<codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*))?", re.IGNORECASE)
_SPLIT_RE = re.compile(r"\s*,\s*")


@dataclass
class Noqa:
    line: int
    span: Span  # the comment's text
    codes: tuple[str, ...]  # upper-cased ids / lower-cased names; () = blanket
    used: set[str] = field(default_factory=set)
    blanket_used: bool = False

    @property
    def is_blanket(self) -> bool:
        return not self.codes


def parse_noqa(source: SourceFile) -> dict[int, Noqa]:
    """noqa directives by line."""
    if "noqa" not in source.text.lower():
        return {}
    out: dict[int, Noqa] = {}
    for line, col, text in source.comments():
        match = _NOQA_RE.search(text)
        if not match:
            continue
        codes: tuple[str, ...] = ()
        if match.group("codes"):
            codes = tuple(c.strip() for c in _SPLIT_RE.split(match.group("codes")) if c.strip())
        start = col + match.start()
        out[line] = Noqa(line, Span(line, start, line, col + match.end()), codes)
    return out


def _code_matches(code: str, rule_id: str, rule_name: str) -> bool:
    return code.upper() == rule_id or code.lower() == rule_name


def apply_noqa(findings: list[Finding], noqas: dict[int, Noqa], names: dict[str, str]) -> list[Finding]:
    """Mark suppressed findings; record which codes each noqa used."""
    out = []
    for finding in findings:
        noqa = noqas.get(finding.span.start_line)
        if noqa is None:
            out.append(finding)
            continue
        name = names.get(finding.rule_id, "")
        if noqa.is_blanket:
            noqa.blanket_used = True
            out.append(finding.with_suppressed())
            continue
        hit = next((c for c in noqa.codes if _code_matches(c, finding.rule_id, name)), None)
        if hit is None:
            out.append(finding)
        else:
            noqa.used.add(hit)
            out.append(finding.with_suppressed())
    return out
