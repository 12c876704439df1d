"""NKI001 syntax-error: the file is not valid Python."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level, Span
from nkilint.rule import Rule, invalid, valid


class SyntaxErrorRule(Rule):
    id = "NKI001"
    name = "syntax-error"
    family = "tool"
    level = Level.ERROR
    precision = "very-high"
    runs_on_broken_files = True
    summary = "The file is not valid Python, so nothing else can be checked"
    explanation = """
A kernel file that Python cannot parse can neither be compiled by the Neuron
compiler (which traces the kernel's Python source) nor analysed by nkilint.
The position is the one CPython's own parser reports.

**Fix:** correct the syntax at the reported line. Every other rule is
skipped for this file until it parses.
"""
    examples = (
        invalid(
            """
            import nki.language as nl

            def kernel(a_tensor:
                return a_tensor
            """,
            lines=[3],
            title="unclosed parenthesis",
        ),
        valid(
            """
            import nki.language as nl

            def kernel(a_tensor):
                return a_tensor
            """
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        err = ctx.error
        if err is None or err.kind != "syntax":
            return
        end_line = err.end_line or err.line
        end_col = err.end_col or err.col + 1
        if (end_line, end_col) <= (err.line, err.col):
            end_line, end_col = err.line, err.col + 1
        ctx.report(Span(err.line, err.col, end_line, end_col), err.message)
