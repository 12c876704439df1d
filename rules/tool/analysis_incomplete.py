"""NKI005 analysis-incomplete: a budget ran out, so part of a file was not analysed (reported by the engine)."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.deadline import FileTimeLimit
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid


class _OutOfTimeOnMarker(Rule):
    """Not registered: stands for a rule that is still running when the
    file's time limit ends it (raising what the alarm raises keeps the
    example fast)."""

    id = "NKI098"
    name = "example-slow-rule"
    family = "tool"
    level = Level.WARNING
    summary = "A rule that runs out of time (for the example only)"
    explanation = "Runs out of the file's time when the file calls `spin_here()`."

    def check(self, ctx: RuleContext) -> None:
        if "spin_here()" in (ctx.source.text if ctx.source else ""):
            raise FileTimeLimit(60)


class AnalysisIncomplete(Rule):
    id = "NKI005"
    name = "analysis-incomplete"
    family = "tool"
    level = Level.NOTE
    precision = "very-high"
    emitted_by_engine = True
    summary = "A budget of the analysis ran out on this file: part of it was not checked"
    explanation = """
nkilint bounds the work it does on any input, so that a generated
100,000-line module or a rule stuck in a loop cannot hang a pre-commit hook
or CI. When a bound is reached the file still gets every finding made
before it, and this note says which bound it was and what was skipped:

- **the CPU-time limit per file** (60 s by default): the rule that was running
  is stopped and the rules not yet run are skipped on this file; the
  note names them. Real kernels take well under a second per file;
- **the interpreter's step budget** of a kernel (400,000 steps), and of a
  file (1,200,000 steps over all its kernels, so that a module of many
  kernels fanning out into deep helpers stays bounded too): rules that
  read the kernel's graph (shapes, memory, pipeline) saw the part of it
  built before the budget ran out and may miss findings after it;
- **nesting too deep** for the kernel interpreter: the same.

Because checks were skipped, a file with this note is not known to be
clean. The note does not change the exit code.

**Fix:** none in your kernel in most cases. Raise the time limit with
`--file-time-limit SECONDS` or `file-time-limit` in `[tool.nkilint]`
(0 turns it off), or split a very large generated module. If a rule is
named as the one that ran out of time on an ordinary file, that is a bug
in nkilint (or the plugin that provides the rule): report it with the
file.
"""
    examples = (
        invalid(
            """
            x = spin_here()
            """,
            lines=[1],
            title="a rule still running when the file's time ran out",
            with_rules=(_OutOfTimeOnMarker,),
        ),
        valid(
            """
            x = 1
            """,
            with_rules=(_OutOfTimeOnMarker,),
        ),
    )

    def check(self, ctx: RuleContext) -> None:  # the engine reports these
        return None
