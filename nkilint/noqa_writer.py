"""``--add-noqa``: suppress every current finding with a ``# noqa: ID``
comment on its line, so that adopting nkilint starts from a clean run.

A finding is suppressed by a ``# noqa`` on the line it starts on (see
nkilint.suppression). The comment is merged into an existing ``# noqa:``
list, appended after another comment, or added at the end of the code. A
line whose end is inside a string (a multi-line string or f-string) or
that continues with a backslash cannot carry a comment: it is left alone
and counted, never edited.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from .findings import Finding
from .source import split_lines

# Tool findings that a noqa must not silence: a broken file, a crashed
# rule, a stale noqa (which the new comment would only make staler).
NOT_SUPPRESSIBLE = frozenset({"NKI001", "NKI002", "NKI003", "NKI004"})
_NOQA_CODES = re.compile(r"#\s*noqa\s*:\s*(?P<codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*)", re.IGNORECASE)
_BARE_NOQA = re.compile(r"#\s*noqa(?!\s*:)", re.IGNORECASE)


@dataclass
class NoqaEdit:
    text: str  # the new file text
    added: int = 0  # findings that got a code on their line
    skipped: list[Finding] = field(default_factory=list)  # lines that cannot take a comment


def _comment_and_blocked_lines(text: str) -> tuple[dict[int, tuple[int, str]], set[int]]:
    """Comments by line (0-based column, text), and the lines whose end is
    inside a token (a multi-line string) or a backslash continuation."""
    comments: dict[int, tuple[int, str]] = {}
    blocked: set[int] = set()
    fstring_start: list[int] = []
    start_type = getattr(tokenize, "FSTRING_START", None)
    end_type = getattr(tokenize, "FSTRING_END", None)
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = (tok.start[1], tok.string)
        elif start_type is not None and tok.type == start_type:
            fstring_start.append(tok.start[0])
        elif end_type is not None and tok.type == end_type and fstring_start:
            blocked.update(range(fstring_start.pop(), tok.end[0]))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE) and tok.end[0] > tok.start[0]:
            blocked.update(range(tok.start[0], tok.end[0]))
    for number, line in enumerate(split_lines(text), 1):
        if number not in blocked and number not in comments and line.rstrip("\r\n").endswith("\\"):
            blocked.add(number)
    return comments, blocked


def add_noqa(text: str, findings: list[Finding]) -> NoqaEdit:
    """``text`` with a ``# noqa: ID`` for every active finding."""
    wanted: dict[int, set[str]] = {}
    by_line: dict[int, list[Finding]] = {}
    for f in findings:
        if f.suppressed or f.rule_id in NOT_SUPPRESSIBLE:
            continue
        wanted.setdefault(f.span.start_line, set()).add(f.rule_id)
        by_line.setdefault(f.span.start_line, []).append(f)
    result = NoqaEdit(text)
    if not wanted:
        return result
    try:
        comments, blocked = _comment_and_blocked_lines(text)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        result.skipped = [f for fs in by_line.values() for f in fs]
        return result
    lines = split_lines(text)
    for number, codes in sorted(wanted.items()):
        if number < 1 or number > len(lines) or number in blocked:
            result.skipped.extend(by_line[number])
            continue
        line = lines[number - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        comment = comments.get(number)
        if comment is not None:
            col, comment_text = comment
            existing = _NOQA_CODES.search(comment_text)
            if existing is not None:
                have = [c.strip() for c in existing.group("codes").split(",") if c.strip()]
                merged = have + sorted(c for c in codes if c.upper() not in {h.upper() for h in have})
                new_comment = comment_text[: existing.start()] + "# noqa: " + ", ".join(merged) + comment_text[existing.end():]
            elif _BARE_NOQA.search(comment_text):
                continue  # suppresses everything already
            else:
                new_comment = comment_text.rstrip() + "  # noqa: " + ", ".join(sorted(codes))
            body = body[:col] + new_comment + body[col + len(comment_text):]
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(sorted(codes))
        lines[number - 1] = body + ending
        result.added += len(by_line[number])
    result.text = "".join(lines)
    return result
