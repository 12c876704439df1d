"""NKI002 unreadable-file: the file cannot be read or decoded as Python source."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level, Span
from nkilint.rule import Rule, invalid, valid


class UnreadableFile(Rule):
    id = "NKI002"
    name = "unreadable-file"
    family = "tool"
    level = Level.ERROR
    precision = "very-high"
    runs_on_broken_files = True
    summary = "The file cannot be read or decoded as Python source"
    explanation = """
The file could not be turned into text: it is not valid in its declared
encoding (UTF-8 by default, PEP 263), declares an unknown encoding, looks
binary, is too large, or cannot be read at all. Python itself would refuse
to import it, so the kernel cannot be compiled.

**Fix:** save the file as UTF-8 (or declare its real encoding with a
`# -*- coding: ... -*-` line), or exclude non-source files from the run.
"""
    examples = (
        invalid(
            """
            # -*- coding: klingon -*-
            import nki.language as nl
            """,
            lines=[1],
            title="unknown encoding",
        ),
        valid(
            """
            # -*- coding: utf-8 -*-
            import nki.language as nl
            """
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        err = ctx.error
        if err is None or err.kind == "syntax":
            return
        ctx.report(Span(err.line, err.col, err.line, err.col + 1), err.message)
