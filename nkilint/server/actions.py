"""Code actions: a finding's fix, "fix all safe fixes", "disable for this line".

Fixes are applied with the CLI's fixer (``nkilint.fixes``: libcst node
replacements, re-checked rounds) and sent to the editor as one text edit
covering what changed, so an action does exactly what ``--fix`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from lsprotocol import types

from ..findings import Finding, Span
from ..fixes import FixError, fix_source
from ..source import SourceFile
from ..suppression import parse_noqa
from .convert import range_to_span, to_diagnostic

if TYPE_CHECKING:  # pragma: no cover
    from .app import NkilintServer
    from .session import Checked

FIX_ALL = "source.fixAll.nkilint"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL]


def register(server: "NkilintServer") -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=KINDS))
    async def code_action(ls: "NkilintServer", params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        checked = await ls.lint(uri)
        session = ls.ensure_session()
        codec = ls.workspace.position_codec
        lines = checked.text.splitlines(keepends=True) or [""]
        wanted = params.context.only
        out: list[types.CodeAction] = []
        if _wants(wanted, types.CodeActionKind.QuickFix):
            where = range_to_span(params.range, lines, codec)
            for finding in _active(checked):
                if not _touches(finding.span, where):
                    continue
                diagnostic = to_diagnostic(finding, uri, lines, codec, session.ruleset,
                                           checked.checker.settings.root if checked.checker else None)
                fixed = _fixed_text(checked.text, [finding], unsafe=True)
                if fixed is not None:
                    safe = finding.fix is not None and finding.fix.safe
                    out.append(types.CodeAction(
                        title=f"{finding.rule_id}: {finding.fix.description}" + ("" if safe else " (unsafe fix)"),
                        kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], is_preferred=safe,
                        edit=_workspace_edit(uri, checked, fixed, codec)))
                noqa = noqa_text(checked.text, finding)
                if noqa is not None:
                    out.append(types.CodeAction(
                        title=f"Disable {finding.rule_id} for this line", kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic], edit=_workspace_edit(uri, checked, noqa, codec)))
        if _wants(wanted, FIX_ALL) and any(f.fix is not None and f.fix.safe for f in _active(checked)):
            def recheck(text: str) -> list[Finding]:
                return session.relint(checked, text)

            fixed = _fixed_text(checked.text, list(_active(checked)), unsafe=False, recheck=recheck)
            if fixed is not None:
                out.append(types.CodeAction(title="nkilint: fix all safe fixes in this file", kind=FIX_ALL,
                                            edit=_workspace_edit(uri, checked, fixed, codec)))
        return out


def _wants(only: Sequence[str] | None, kind: str) -> bool:
    """LSP kinds are hierarchical: asking for ``source.fixAll`` includes ours."""
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def _active(checked: "Checked"):
    return (f for f in checked.result.findings if not f.suppressed)


def _touches(span: Span, where: Span) -> bool:
    return (span.start_line, span.start_col) <= (where.end_line, where.end_col) and \
        (where.start_line, where.start_col) <= (span.end_line, span.end_col)


def _fixed_text(text: str, findings: list[Finding], unsafe: bool, recheck=None) -> str | None:
    if not any(f.fix is not None and (unsafe or f.fix.safe) for f in findings):
        return None
    try:
        fixed = fix_source(text, findings, unsafe=unsafe, recheck=recheck)
    except FixError:
        return None
    return fixed if fixed != text else None


def noqa_text(text: str, finding: Finding) -> str | None:
    """The text with ``finding``'s rule added to the ``# noqa`` of its line
    (the line a suppression applies to is the finding's first line)."""
    source = SourceFile("<buffer>", text)
    line_no = finding.span.start_line
    lines = text.splitlines(keepends=True)
    if not 1 <= line_no <= len(lines):
        return None
    line = lines[line_no - 1]
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    existing = parse_noqa(source).get(line_no)
    if existing is not None:
        if existing.is_blanket or finding.rule_id in {c.upper() for c in existing.codes}:
            return None
        at = existing.span.end_col - 1
        new = body[:at] + f", {finding.rule_id}" + body[at:]
    else:
        comment = next((col for ln, col, _ in source.comments() if ln == line_no), None)
        if comment is not None:
            at = comment - 1
            new = body[:at] + f"# noqa: {finding.rule_id} " + body[at:]
        elif body.rstrip().endswith("\\"):
            return None  # a comment cannot follow a line continuation
        else:
            new = body.rstrip() + f"  # noqa: {finding.rule_id}"
    lines[line_no - 1] = new + ending
    return "".join(lines)


def _workspace_edit(uri: str, checked: "Checked", new_text: str, codec) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(changes={uri: [text_edit(checked.text, new_text, codec)]})


def text_edit(old: str, new: str, codec) -> types.TextEdit:
    """One edit replacing the part of ``old`` that differs from ``new``."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    lines = old.splitlines(keepends=True) or [""]
    rng = types.Range(_position(old, start), _position(old, end_old))
    return types.TextEdit(range=codec.range_to_client_units(lines, rng), new_text=new[start:end_new])


def _position(text: str, offset: int) -> types.Position:
    """Line and code-point column of an offset (LSP lines end at \\n, \\r\\n or \\r)."""
    line = 0
    line_start = 0
    i = 0
    while i < offset:
        ch = text[i]
        if ch == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
            if i + 1 >= offset:
                break
            i += 1
        if ch in "\r\n":
            line += 1
            line_start = i + 1
        i += 1
    return types.Position(line, offset - line_start)
