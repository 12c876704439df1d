"""What the engine says when a budget cut a file's analysis short (NKI005).

Two kinds of budget end an analysis early: the wall-clock limit per file
(``nkilint.deadline``), which stops the running rule and skips the rest,
and the kernel interpreter's own bounds (steps, nesting), which leave a
kernel's graph partial. Either way the findings made so far are kept and
the file gets a note naming the budget and what was skipped, so that a
file that was only partly checked never looks clean.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .findings import Finding, Level, Span

if TYPE_CHECKING:
    from .model.semantic import FileModel
    from .rule import Rule

ANALYSIS_INCOMPLETE = "NKI005"
_HINT_TIME = "raise it with --file-time-limit SECONDS or file-time-limit in [tool.nkilint] (0: no limit)"
_LISTED = 8  # rule ids named in the message; the rest are counted


def _rule_label(rule: "Rule") -> str:
    return f"{rule.id} ({rule.name})"


def time_limit_finding(path: str, seconds: float, stopped: "Rule | None",
                       skipped: Sequence["Rule"]) -> Finding:
    """The note for a file whose time ran out while ``stopped`` ran."""
    where = f" while rule {_rule_label(stopped)} was running" if stopped is not None else ""
    ids = [r.id for r in skipped]
    if ids:
        named = ", ".join(ids[:_LISTED]) + (f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else "")
        rest = f"; it was stopped and {len(ids)} rule{'s were' if len(ids) != 1 else ' was'} not run: {named}"
    else:
        rest = "; it was stopped" if stopped is not None else ""
    message = (f"analysis incomplete: the time limit of {seconds:g} s per file ran out{where}{rest}. "
               "Findings of the skipped rules are missing for this file")
    return Finding(ANALYSIS_INCOMPLETE, Level.NOTE, message, path, Span(1, 1, 1, 2), hint=_HINT_TIME)


def partial_kernel_findings(model: "FileModel", path: str) -> list[Finding]:
    """One note per kernel whose interpretation stopped early (a kernel and
    its launch-site specializations share one note, at the ``def``)."""
    out: list[Finding] = []
    seen: set[int] = set()
    for kernel in model.kernels:
        if not kernel.error or id(kernel.node) in seen:
            continue
        seen.add(id(kernel.node))
        node = kernel.node
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0) + 1
        span = Span(line, col, line, col + 3)
        message = (f"analysis incomplete in kernel '{node.name}': {kernel.error}. Rules that read the kernel's "
                   "graph (shapes, memory, pipeline) checked only the part built before that, and may miss "
                   "findings after it")
        out.append(Finding(ANALYSIS_INCOMPLETE, Level.NOTE, message, path, span,
                           hint="split the kernel, or loops that unroll into very many instructions"))
    return out
