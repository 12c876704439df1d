"""NKI004 unused-noqa: a '# noqa' comment suppresses nothing (reported by the engine)."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid


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

The same holds for a file-level `# nkilint: noqa: NKI201` (on a line of its
own in the comments at the top of the file): a code that suppresses nothing
in the whole file is reported, and so is a bare `# nkilint: noqa` that
suppresses nothing (it names nkilint, so it is not another tool's). A
`# nkilint: noqa` below the first line of code, or at the end of a code
line, suppresses nothing and is reported too.

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
        invalid(
            """
            import neuronxcc.nki.language as nl
            # nkilint: noqa: NKI601
            """,
            lines=[2],
            title="a file-level suppression below the first line of code",
            nki_version="0.6",
        ),
        valid(
            """
            # nkilint: noqa: NKI601
            import neuronxcc.nki.language as nl
            """,
            title="a file-level suppression at the top of the file",
            nki_version="0.6",
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
