"""Tool family (NKI0xx): problems with the input or with nkilint itself."""

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


class _CrashOnMarker(Rule):
    """Not registered: used by NKI003's example to show a crash report."""

    id = "NKI099"
    name = "example-crashing-rule"
    family = "tool"
    level = Level.ERROR
    summary = "A rule that raises (for the crash example only)"
    explanation = "Raises when the file calls `crash_here()`."

    def check(self, ctx: RuleContext) -> None:
        if "crash_here()" in (ctx.source.text if ctx.source else ""):
            raise RuntimeError("deliberate crash for the example")


class RuleCrashed(Rule):
    id = "NKI003"
    name = "rule-crashed"
    family = "tool"
    level = Level.ERROR
    precision = "very-high"
    emitted_by_engine = True
    summary = "A rule raised an exception on this file (a bug in nkilint or a plugin)"
    explanation = """
A rule crashed while checking this file. The crash is isolated: the other
rules still ran and their findings are reported, but this rule's findings
for the file are missing. The run exits with code 2 so that CI notices, and
the SARIF log records the crash in `toolExecutionNotifications`.

**Fix:** none in your kernel. Report the bug with the file that triggers it
(the traceback is printed on standard error); meanwhile `--ignore` the rule
or add `# noqa: <id>` where it crashes.
"""
    examples = (
        invalid(
            """
            x = crash_here()
            """,
            lines=[1],
            title="a plugin rule that raises",
            with_rules=(_CrashOnMarker,),
        ),
        valid(
            """
            x = 1
            """,
            with_rules=(_CrashOnMarker,),
        ),
    )

    def check(self, ctx: RuleContext) -> None:  # the engine reports crashes
        return None


class UnusedNoqa(Rule):
    id = "NKI004"
    name = "unused-noqa"
    family = "tool"
    level = Level.WARNING
    precision = "very-high"
    emitted_by_engine = True
    summary = "A '# noqa' comment suppresses nothing, or names an unknown rule"
    explanation = """
A `# noqa: NKI201` comment that no longer suppresses any finding on its line
is stale: the code was fixed or moved, and the comment now hides nothing
but could hide a future, real problem. A code that names no rule is a typo.
Codes of rules that did not run (not selected) are not reported, since
whether they are stale cannot be told; neither are other linters' codes
(`# noqa: F401`, `E501`) nor a bare `# noqa`, which usually silences
another tool.

**Fix:** remove the stale code from the comment, or the whole comment.
"""
    examples = (
        invalid(
            """
            import nki.language as nl

            x = 1  # noqa: NKI601
            """,
            lines=[3],
            title="nothing to suppress on this line",
        ),
        invalid(
            """
            x = 1  # noqa: NKI999X
            """,
            lines=[1],
            title="unknown rule code",
        ),
        valid(
            """
            import neuronxcc.nki.language as nl  # noqa: NKI601
            """,
            title="the comment suppresses a real finding",
            nki_version="0.6",
        ),
    )

    def check(self, ctx: RuleContext) -> None:  # the engine reports these
        return None
