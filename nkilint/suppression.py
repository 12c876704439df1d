"""``# noqa`` comments: parsing, applying, and finding the stale ones.

``# noqa: NKI201, NKI304`` on a line suppresses those rules' findings that
start on that line; a bare ``# noqa`` suppresses every finding there. Codes
may be rule ids or rule names. Comments are found with the tokenizer, and
only in files whose text contains "noqa" at all (the common case costs one
substring search).

``# nkilint: noqa`` (every rule) or ``# nkilint: noqa: NKI101, NKI203``
(those rules) on a line of its own in the comments at the top of a file,
before the first line of code, suppresses findings in the whole file, as
ruff's ``# ruff: noqa`` does. Anywhere else it has no effect and is
reported as such (NKI004), so a misplaced one is not mistaken for working.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .findings import Finding, Span
from .source import SourceFile

_NOQA_RE = re.compile(r"#\s*noqa(?P<sep>\s*:\s*(?P<codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*))?", re.IGNORECASE)
_SPLIT_RE = re.compile(r"\s*,\s*")
_FILE_NOQA_RE = re.compile(
    r"#\s*nkilint\s*:\s*noqa(?P<sep>\s*:\s*(?P<codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*))?", re.IGNORECASE
)


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


@dataclass
class FileNoqa(Noqa):
    """A ``# nkilint: noqa`` directive: the same codes, for the whole file."""


@dataclass
class FileDirectives:
    """The file-level directives of a file, and the misplaced ones (their
    comment spans), which suppress nothing."""

    directives: list[FileNoqa] = field(default_factory=list)
    misplaced: list[Span] = field(default_factory=list)


def _codes(match: re.Match) -> tuple[str, ...]:
    if not match.group("codes"):
        return ()
    return tuple(c.strip() for c in _SPLIT_RE.split(match.group("codes")) if c.strip())


def _leading_block_end(source: SourceFile) -> int:
    """The number of the first line of code: lines before it are blank or
    comments (a shebang and an encoding line are comments too)."""
    for number, line in enumerate(source.lines, 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return number
    return len(source.lines) + 1


def parse_file_noqa(source: SourceFile) -> FileDirectives:
    """``# nkilint: noqa`` directives: the ones that apply (own line, in the
    leading comment block) and the misplaced ones."""
    out = FileDirectives()
    if "nkilint" not in source.text.lower():
        return out
    first_code = _leading_block_end(source)
    for line, col, text in source.comments():
        match = _FILE_NOQA_RE.match(text)
        if not match:
            continue  # not a directive (a comment that mentions one is prose)
        span = Span(line, col + match.start(), line, col + match.end())
        own_line = source.line_text(line)[: col - 1].strip() == ""
        if line < first_code and own_line:
            out.directives.append(FileNoqa(line, span, _codes(match)))
        else:
            out.misplaced.append(span)
    return out


def parse_noqa(source: SourceFile) -> dict[int, Noqa]:
    """noqa directives by line."""
    if "noqa" not in source.text.lower():
        return {}
    out: dict[int, Noqa] = {}
    for line, col, text in source.comments():
        match = _NOQA_RE.search(text)
        if not match:
            continue
        codes = _codes(match)
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
        if noqa is None or finding.suppressed:  # a file-level directive took it
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


def apply_file_noqa(findings: list[Finding], directives: list[FileNoqa], names: dict[str, str]) -> list[Finding]:
    """Mark the findings the file-level directives suppress; record which
    codes each used."""
    if not directives:
        return findings
    out = []
    for finding in findings:
        if finding.suppressed:
            out.append(finding)
            continue
        name = names.get(finding.rule_id, "")
        for directive in directives:
            if directive.is_blanket:
                directive.blanket_used = True
                finding = finding.with_suppressed()
                break
            hit = next((c for c in directive.codes if _code_matches(c, finding.rule_id, name)), None)
            if hit is not None:
                directive.used.add(hit)
                finding = finding.with_suppressed()
                break
        out.append(finding)
    return out
