"""Applying fixes: libcst transformations that keep formatting and comments.

A fix is a set of edits on exact node spans. Each edit is applied by a libcst
transformer that replaces the CST node occupying that span with the parsed
replacement (so whitespace, comments and everything else are untouched). An
edit whose span is not exactly one node (rare: e.g. part of a name) is
spliced as text. Fixes are applied in rounds until nothing changes, the
result must parse, and files are written atomically (temporary file in the
same directory, re-parsed, then renamed over the original) only if the file
on disk still holds what was read.
"""

from __future__ import annotations

import ast
import difflib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .findings import Edit, Finding, Fix, Span
from .source import split_lines

MAX_ROUNDS = 8


class FixError(Exception):
    pass


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in split_lines(text):
        starts.append(starts[-1] + len(line))
    return starts


def _to_offset(starts: list[int], line: int, col: int) -> int:
    return starts[line - 1] + col - 1


def select_fixes(findings: Iterable[Finding], unsafe: bool, only_rule: str | None = None) -> list[Fix]:
    """Fixes to apply this round: non-overlapping, in source order."""
    fixes: list[Fix] = []
    taken: list[Span] = []
    for f in sorted(findings, key=Finding.sort_key):
        if f.fix is None or f.suppressed or (only_rule and f.rule_id != only_rule):
            continue
        if not f.fix.safe and not unsafe:
            continue
        spans = [e.span for e in f.fix.edits]
        if any(_overlaps(a, b) for a in spans for b in taken):
            continue  # applied in a later round, after re-checking
        taken.extend(spans)
        fixes.append(f.fix)
    return fixes


def _overlaps(a: Span, b: Span) -> bool:
    a0, a1 = (a.start_line, a.start_col), (a.end_line, a.end_col)
    b0, b1 = (b.start_line, b.start_col), (b.end_line, b.end_col)
    return a0 < b1 and b0 < a1


class _SpanReplacer(cst.CSTTransformer):
    """Replace the CST node that occupies each edit's span exactly.

    An empty replacement on a call argument deletes the argument (and keeps
    the commas of the call well-formed); other replacements are parsed as
    the same syntactic category as the node they replace, so the node's own
    parentheses, the surrounding whitespace and comments stay untouched.
    """

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, edits: dict[tuple[int, int, int, int], str]) -> None:
        super().__init__()
        self.edits = edits
        self.applied: set[tuple[int, int, int, int]] = set()

    def _key(self, node: cst.CSTNode) -> tuple[int, int, int, int] | None:
        try:
            pos = self.get_metadata(PositionProvider, node)
        except KeyError:
            return None
        return (pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        if isinstance(original_node, cst.Call) and isinstance(updated_node, cst.Call):
            updated_node = self._delete_args(original_node, updated_node)
        key = self._key(original_node)
        if key is None or key not in self.edits or key in self.applied:
            return updated_node
        replacement = self.edits[key]
        if replacement == "":
            return updated_node  # deletions are applied by the enclosing call (or spliced)
        new = _parse_like(updated_node, replacement)
        if new is None:
            return updated_node
        self.applied.add(key)
        return new

    def _delete_args(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        doomed = []
        for index, arg in enumerate(original.args):
            key = self._key(arg)
            if key is not None and self.edits.get(key) == "" and key not in self.applied:
                doomed.append((index, key))
        if not doomed:
            return updated
        drop = {index for index, _ in doomed}
        kept = [arg for index, arg in enumerate(updated.args) if index not in drop]
        if kept and (len(updated.args) - 1) in drop:
            # The old last argument carried the call's trailing comma (or none).
            kept[-1] = kept[-1].with_changes(comma=updated.args[-1].comma)
        for _, key in doomed:
            self.applied.add(key)
        return updated.with_changes(args=kept)


def _parse_like(node: cst.CSTNode, text: str) -> cst.CSTNode | None:
    """Parse ``text`` as the same syntactic category as ``node``."""
    try:
        if isinstance(node, cst.Name) and text.isidentifier():
            return node.with_changes(value=text)
        if isinstance(node, cst.Arg):
            call = cst.parse_expression(f"f({text})")
            if isinstance(call, cst.Call) and len(call.args) == 1:
                return call.args[0].with_changes(comma=node.comma)
            return None
        if isinstance(node, cst.BaseExpression):
            expr = cst.parse_expression(text)
            # Keep the original node's parentheses (formatting).
            if hasattr(node, "lpar") and hasattr(expr, "lpar") and not expr.lpar:
                expr = expr.with_changes(lpar=node.lpar, rpar=node.rpar)
            return expr
        if isinstance(node, cst.BaseSmallStatement):
            stmt = cst.parse_statement(text)
            if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
                return stmt.body[0]
    except cst.ParserSyntaxError:
        return None
    return None


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply edits: node replacements through libcst, the rest as splices."""
    if not edits:
        return text
    keyed = {(e.span.start_line, e.span.start_col, e.span.end_line, e.span.end_col): e.replacement for e in edits}
    try:
        module = cst.parse_module(text)
        replacer = _SpanReplacer(keyed)
        wrapper = MetadataWrapper(module)
        new_module = wrapper.visit(replacer)
        result = new_module.code
        remaining = [e for e in edits if (e.span.start_line, e.span.start_col, e.span.end_line, e.span.end_col) not in replacer.applied]
    except (cst.ParserSyntaxError, RecursionError):
        result, remaining = text, list(edits)
    if remaining:
        # Splice what no node matched. Spans refer to the original text, and
        # node replacements may have shifted it, so splice the original and
        # re-apply node edits only when both kinds coexist (rare).
        if len(remaining) != len(edits):
            result = text
            remaining = list(edits)
        starts = _offsets(result)
        for e in sorted(remaining, key=lambda e: (e.span.start_line, e.span.start_col), reverse=True):
            a = _to_offset(starts, e.span.start_line, e.span.start_col)
            b = _to_offset(starts, e.span.end_line, e.span.end_col)
            result = result[:a] + e.replacement + result[b:]
    return result


def fix_source(text: str, findings: list[Finding], unsafe: bool = False, only_rule: str | None = None,
               recheck=None) -> str:
    """Apply fixes to ``text``. ``recheck(text) -> findings`` enables further
    rounds (fixes that overlapped, or that only appear after a fix)."""
    current = text
    for _ in range(MAX_ROUNDS):
        fixes = select_fixes(findings, unsafe, only_rule)
        if not fixes:
            break
        edits = [e for fx in fixes for e in fx.edits]
        updated = apply_edits(current, edits)
        _must_parse(updated)
        if updated == current or recheck is None:
            current = updated
            break
        current = updated
        findings = recheck(current)
    return current


def _must_parse(text: str) -> None:
    try:
        ast.parse(text)
        cst.parse_module(text)
    except (SyntaxError, cst.ParserSyntaxError) as exc:
        raise FixError(f"a fix produced invalid Python ({exc}); nothing was written") from None


@dataclass
class FileFix:
    path: str
    before: str
    after: str
    count: int


def write_atomically(path: Path, original: str, new_text: str, encoding: str = "utf-8", bom: bool = False) -> None:
    """Replace ``path`` by ``new_text`` if it still holds ``original``."""
    data = path.read_bytes()
    expected = (b"\xef\xbb\xbf" if bom else b"") + original.encode(encoding)
    if data != expected:
        raise FixError(f"{path} changed on disk since it was read; not overwritten")
    directory = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".nkilint-fix", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write((b"\xef\xbb\xbf" if bom else b"") + new_text.encode(encoding))
        _must_parse(Path(tmp).read_bytes().decode(encoding).lstrip("\ufeff"))
        try:
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        except OSError:  # pragma: no cover
            pass
        if path.read_bytes() != expected:
            raise FixError(f"{path} changed on disk while fixing; not overwritten")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
        )
    )


def apply_fixes_to_run(run, checker, write: bool, unsafe: bool, stdin: bool = False) -> str:
    """Fix every file of a finished run; return the unified diff.

    With ``write`` the files are rewritten (stdin input is printed instead).
    The run's findings are replaced by those that remain after fixing.
    """
    from .engine import Notification
    from .findings import Level
    from .source import decode_source

    diffs: list[str] = []
    for index, result in enumerate(run.files):
        if result.text is None or not any(f.fix for f in result.findings):
            continue
        disk_path = None if (stdin and index == 0 and result.path == (result.path)) else None
        candidate = Path(result.path)
        if candidate.exists() and not (stdin and index == 0):
            disk_path = candidate

        def recheck(text: str, _display=result.path, _disk=disk_path):
            return checker.check_text(text, _display, str(_disk) if _disk else None).findings

        try:
            after = fix_source(result.text, result.findings, unsafe=unsafe, recheck=recheck)
        except FixError as exc:
            run.notifications.append(Notification(Level.ERROR, f"{result.path}: {exc}", result.path))
            continue
        if after == result.text:
            continue
        diffs.append(unified_diff(result.path, result.text, after))
        before_count = len([f for f in result.findings if not f.suppressed])
        new_result = checker.check_text(after, result.path, str(disk_path) if disk_path else None)
        fixed_count = max(before_count - len([f for f in new_result.findings if not f.suppressed]), 0)
        if write:
            if disk_path is None:
                # stdin: print the fixed source instead of writing anything.
                diffs[-1] = after
            else:
                try:
                    raw = disk_path.read_bytes()
                    bom = raw.startswith(b"\xef\xbb\xbf")
                    decode_source(raw)  # same decoding as when checked
                    write_atomically(disk_path, result.text, after, bom=bom)
                except (FixError, OSError) as exc:
                    run.notifications.append(Notification(Level.ERROR, f"{result.path}: {exc}", result.path))
                    continue
            run.files[index] = new_result
            run.fixes_applied += fixed_count
    return "".join(diffs)
