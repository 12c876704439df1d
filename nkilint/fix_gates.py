"""What decides that a fix is not applied, beyond "the result must parse".

Two gates (issue: fixes that never break a kernel):

- **The target.** Every bundled fix rewrites code toward an API of the
  target release (the legacy namespace, renamed calls, loop iterators).
  When no release is named (no ``--sdk``/``--nki-version``, no ``sdk`` in
  the configuration, no pinned package), nkilint checks against the newest
  release, which is a fine default for findings but not for rewriting a
  kernel that may ship on an older SDK. Those fixes are withheld, and one
  message says how to name the release.
- **New errors.** A fixed file is checked again; a fix after which a rule
  outside the migration family reports more errors than before made the
  kernel worse, and none of that file's fixes are written. Migration errors
  that appear are the next step of a staged port (the old namespace hid
  them) and are reported, not refused.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

import libcst as cst

from .findings import Finding, Level

if TYPE_CHECKING:
    from .config import Settings
    from .rule import RuleSet

# Rules whose errors a fix may bring up: the next migration step.
_STAGED_FAMILY = "migration"


def target_is_assumed(settings: "Settings") -> bool:
    """No release was named anywhere: the newest one was assumed."""
    return settings.target_origin.kind == "default" and not settings.nki_version_explicit


def withhold_target_fixes(findings: list[Finding], ruleset: "RuleSet",
                          unsafe: bool) -> tuple[list[Finding], list[Finding]]:
    """(findings with the fixes that follow the target removed, the findings
    whose fix would have been applied: safe ones, unsafe ones with
    ``unsafe``)."""
    kept: list[Finding] = []
    withheld: list[Finding] = []
    for f in findings:
        rule = ruleset.rules.get(f.rule_id)
        if f.fix is not None and not f.suppressed and rule is not None and rule.fix_follows_target:
            if f.fix.safe or unsafe:
                withheld.append(f)
            kept.append(replace(f, fix=None))
        else:
            kept.append(f)
    return kept, withheld


def withheld_message(withheld: list[Finding], settings: "Settings") -> str:
    rules = sorted({f.rule_id for f in withheld})
    n = len(withheld)
    return (f"{n} fix{'es were' if n != 1 else ' was'} not applied ({', '.join(rules)}): "
            f"{'they rewrite' if n != 1 else 'it rewrites'} code for the target release, and none is named "
            f"(nkilint assumed {settings.release.label}, the newest). Name the release the kernels ship on with "
            "--sdk 2.NN, sdk = \"2.NN\" in [tool.nkilint], or a pinned neuronx-cc / nki version, then run --fix again")


def introduced_errors(before: list[Finding], after: list[Finding], ruleset: "RuleSet") -> list[Finding]:
    """Error findings after a fix, outside the migration family, beyond the
    number of the same rule's errors before (matched per rule: lines move)."""
    def errors(findings: list[Finding]) -> list[Finding]:
        out = []
        for f in findings:
            rule = ruleset.rules.get(f.rule_id)
            family = rule.family if rule is not None else ""
            if f.level >= Level.ERROR and not f.suppressed and family != _STAGED_FAMILY:
                out.append(f)
        return out

    room = Counter(f.rule_id for f in errors(before))
    added: list[Finding] = []
    for f in errors(after):
        if room[f.rule_id]:
            room[f.rule_id] -= 1
        else:
            added.append(f)
    return added


def introduced_message(added: list[Finding]) -> str:
    first = added[0]
    more = f" and {len(added) - 1} more" if len(added) > 1 else ""
    return (f"fixes not applied: the fixed code would get a new error, {first.rule_id} at line "
            f"{first.span.start_line} ({_first_sentence(first.message)}){more}; nothing was written")


def _first_sentence(message: str, limit: int = 160) -> str:
    text = message.split(". ")[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def syntax_problem(exc: BaseException) -> str:
    """One line for a parse failure of fixed text (libcst's own message
    quotes the code and spans many lines)."""
    if isinstance(exc, SyntaxError):
        return f"line {exc.lineno}: {exc.msg}"
    if isinstance(exc, cst.ParserSyntaxError):
        return f"line {exc.raw_line}: {exc.message.splitlines()[0] if exc.message else 'invalid syntax'}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


__all__ = ["introduced_errors", "introduced_message", "syntax_problem", "target_is_assumed",
           "withhold_target_fixes", "withheld_message"]
