"""Findings grouped by the reviewer's rubric, each with its code excerpt,
hint and (where the rule has one) the fix as a diff.

Rubrics by rule family: migration fidelity (cuda, migration), performance
(pipeline, and memory advice below error level), numerics (numerics),
correctness (partition, semantics, memory errors, tool findings).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..findings import Edit, Finding
from ..fixes import apply_edits, unified_diff
from ..rule import RuleSet

RUBRICS = ("fidelity", "performance", "numerics", "correctness")
RUBRIC_TITLES = {
    "fidelity": "Migration fidelity",
    "performance": "Performance on Trainium",
    "numerics": "Numerics vs the GPU",
    "correctness": "Correctness",
}
_BY_FAMILY = {
    "cuda": "fidelity", "migration": "fidelity", "pipeline": "performance", "numerics": "numerics",
    "partition": "correctness", "semantics": "correctness", "tool": "correctness",
}
EXCERPT_CONTEXT = 1  # lines of context around the reported lines


@dataclass(frozen=True)
class ReviewFinding:
    rule_id: str
    rule_name: str
    family: str
    rubric: str
    level: str
    line: int
    column: int
    message: str
    hint: str | None
    excerpt: tuple[tuple[int, str], ...]  # (line number, text)
    fix_diff: str | None
    fix_safe: bool | None

    def to_json(self) -> dict:
        return {
            "rule": self.rule_id, "name": self.rule_name, "family": self.family, "rubric": self.rubric,
            "level": self.level, "line": self.line, "column": self.column, "message": self.message,
            "hint": self.hint, "excerpt": [{"line": n, "text": t} for n, t in self.excerpt],
            "fix": None if self.fix_diff is None else {"safe": self.fix_safe, "diff": self.fix_diff},
        }


def rubric_of(family: str, level: str) -> str:
    if family == "memory":
        return "correctness" if level == "error" else "performance"
    return _BY_FAMILY.get(family, "correctness")


def _excerpt(lines: list[str], start: int, end: int) -> tuple[tuple[int, str], ...]:
    lo = max(1, start - EXCERPT_CONTEXT)
    hi = min(len(lines), end + EXCERPT_CONTEXT)
    return tuple((n, lines[n - 1].rstrip("\n")) for n in range(lo, hi + 1))


def splice(text: str, edits: list[Edit]) -> str | None:
    """The text with one fix's edits spliced in (they do not overlap), for
    showing the fix as a diff. ``--fix`` applies fixes through libcst; a
    report shows hundreds of them, so it splices text (None when an edit
    points outside the text)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out = text
    for e in sorted(edits, key=lambda e: (e.span.start_line, e.span.start_col), reverse=True):
        try:
            a = starts[e.span.start_line - 1] + e.span.start_col - 1
            b = starts[e.span.end_line - 1] + e.span.end_col - 1
        except IndexError:
            return None
        if not 0 <= a <= b <= len(out):
            return None
        out = out[:a] + e.replacement + out[b:]
    return out


def review_finding(f: Finding, ruleset: RuleSet, text: str, display: str) -> ReviewFinding:
    rule = ruleset.rules.get(f.rule_id)
    family = rule.family if rule is not None else "tool"
    name = rule.name if rule is not None else f.rule_id
    lines = text.splitlines()
    diff = None
    if f.fix is not None:
        edits = list(f.fix.edits)
        if any(not e.replacement for e in edits):
            # A deletion (an argument, a bare `*`) takes its comma with it: libcst knows how.
            try:
                after = apply_edits(text, edits)
            except Exception:  # a fix that cannot be shown is left out, not fatal to the report
                after = None
        else:
            after = splice(text, edits)
        diff = unified_diff(display, text, after) if after is not None else None
        diff = diff or None
    end = min(f.span.end_line, f.span.start_line + 6)
    return ReviewFinding(
        f.rule_id, name, family, rubric_of(family, f.level.label), f.level.label, f.span.start_line,
        f.span.start_col, f.message, f.hint, _excerpt(lines, f.span.start_line, end), diff,
        None if f.fix is None else f.fix.safe,
    )


def group(findings: list[ReviewFinding]) -> dict[str, list[ReviewFinding]]:
    out: dict[str, list[ReviewFinding]] = {r: [] for r in RUBRICS}
    for f in findings:
        out[f.rubric].append(f)
    return out


__all__ = ["RUBRICS", "RUBRIC_TITLES", "ReviewFinding", "review_finding", "group", "rubric_of"]
