"""NKI003 rule-crashed: a rule raised on this file (reported by the engine)."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid


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
