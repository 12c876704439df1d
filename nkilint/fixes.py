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
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from .cstguard import libcst_refusal
from .fix_gates import (introduced_errors, introduced_message, syntax_problem, target_is_assumed,
                        withhold_target_fixes, withheld_message)
from .findings import Edit, Finding, Fix, Span
from .safefs import WriteRefused, read_bytes_capped, replace_bytes, rewrite_target
from .source import MAX_FILE_BYTES, decode_source, split_lines

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
        self.emptied: set[int] = set()  # calls whose every argument was deleted

    def _key(self, node: cst.CSTNode) -> tuple[int, int, int, int] | None:
        try:
            pos = self.get_metadata(PositionProvider, node)
        except KeyError:
            return None
        return (pos.start.line, pos.start.column + 1, pos.end.line, pos.end.column + 1)

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[override]
        if isinstance(original_node, cst.Call) and isinstance(updated_node, cst.Call):
            updated_node = self._delete_args(original_node, updated_node)
        elif isinstance(original_node, cst.Parameters) and isinstance(updated_node, cst.Parameters):
            updated_node = self._delete_bare_star(original_node, updated_node)
        elif isinstance(updated_node, cst.Decorator) and id(updated_node.decorator) in self.emptied:
            # `@nki.jit(mode="x")` with its only argument deleted reads `@nki.jit`.
            call = updated_node.decorator
            assert isinstance(call, cst.Call)
            updated_node = updated_node.with_changes(decorator=call.func)
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

    def _delete_bare_star(self, original: cst.Parameters, updated: cst.Parameters) -> cst.Parameters:
        """Deleting the bare ``*`` of a signature makes its keyword-only
        parameters ordinary ones (the caller checked the result is valid)."""
        star = original.star_arg
        if not isinstance(star, cst.ParamStar):
            return updated
        key = self._key(star)
        if key is None or self.edits.get(key) != "" or key in self.applied:
            return updated
        self.applied.add(key)
        return updated.with_changes(
            params=tuple(updated.params) + tuple(updated.kwonly_params),
            star_arg=cst.MaybeSentinel.DEFAULT,
            kwonly_params=(),
        )

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
        new = updated.with_changes(args=kept)
        if not kept:
            self.emptied.add(id(new))
        return new


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
        # Splice what no node matched. Spans refer to the original text: when
        # node replacements were applied too, the spliced edits wait for the
        # next round (fix_source re-checks the new text and finds them again).
        if len(remaining) != len(edits):
            return result
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
        refusal = libcst_refusal(current)
        if refusal is not None:
            # libcst would crash the process (not raise) on this text.
            raise FixError(f"fixes skipped: {refusal}; nothing was written")
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
    refusal = libcst_refusal(text)
    if refusal is not None:
        raise FixError(f"a fix produced text the fixer cannot verify ({refusal}); nothing was written")
    try:
        ast.parse(text)
        cst.parse_module(text)
    except (SyntaxError, cst.ParserSyntaxError) as exc:
        raise FixError(f"fixes not applied: the fixed code would not parse ({syntax_problem(exc)}); "
                       "nothing was written") from None


@dataclass
class FixReport:
    """What ``apply_fixes_to_run`` did (or, with --diff, would do)."""

    diff: str = ""  # unified diffs (or, for stdin with --fix, the fixed source)
    fixed: int = 0  # findings that the fixes removed
    files: int = 0  # files changed
    unsafe_available: int = 0  # findings whose fix needs --unsafe-fixes
    failed: int = 0  # files not written (changed on disk, invalid result, I/O error)


def _encoding_of(raw: bytes) -> str:
    """The codec Python reads ``raw`` with (PEP 263; 'utf-8-sig' keeps a BOM)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError:
        encoding = "utf-8"
    return encoding


def write_atomically(path: Path, original: str, new_text: str, trees: tuple[Path, ...] = ()) -> None:
    """Replace ``path``'s text by ``new_text`` if it still holds ``original``.

    A symlink is rewritten at its target (the link stays; a target outside
    ``trees`` is refused), a read-only file is refused, a file with several
    hard links is rewritten in place (every link sees the fix), any other
    file is replaced atomically (temporary file in the same directory,
    renamed over it). The new text is encoded like the original (coding
    cookie or BOM kept), must decode back to itself and parse, and keeps the
    original's mode, owner and group. On any failure the original is
    untouched.
    """
    try:
        target = rewrite_target(path, trees)
        raw = read_bytes_capped(target, MAX_FILE_BYTES)
    except OSError as exc:
        raise FixError(f"{path} {exc.strerror}" if isinstance(exc, WriteRefused) else f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        current = decode_source(raw)
    except Exception:  # noqa: BLE001 - undecodable now: it changed
        current = None
    if current != original:
        raise FixError(f"{path} changed on disk since it was read; not overwritten")
    encoding = _encoding_of(raw)
    try:
        data = new_text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise FixError(f"{path}: the fixed text cannot be encoded as {encoding} ({exc}); not overwritten") from None
    if decode_source(data) != new_text:
        raise FixError(f"{path}: the fixed text does not decode back to itself as {encoding}; not overwritten")
    _must_parse(new_text)

    def read_back(tmp: Path | None) -> None:
        if tmp is not None and decode_source(tmp.read_bytes()) != new_text:
            raise FixError(f"{path}: the temporary file does not read back as written; not overwritten")

    try:
        replace_bytes(target, data, raw, validate=read_back)
    except WriteRefused as exc:
        raise FixError(f"{path} {exc.strerror}") from None


def unified_diff(path: str, before: str, after: str) -> str:
    out = []
    for line in difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
    ):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _fixed_count(before: list[Finding], after: list[Finding], unsafe: bool) -> int:
    """How many findings that had an applicable fix are gone after fixing.

    Findings are matched by rule and message (positions move when a fix
    changes the lines above); new findings that a fix brings up (another
    rule now seeing the rewritten code) do not reduce the count."""
    from collections import Counter

    remaining = Counter((f.rule_id, f.message) for f in after if not f.suppressed)
    count = 0
    for f in before:
        if f.suppressed or f.fix is None or (not f.fix.safe and not unsafe):
            continue
        key = (f.rule_id, f.message)
        if remaining[key]:
            remaining[key] -= 1
        else:
            count += 1
    return count


def _unsafe_only(findings: list[Finding], unsafe: bool) -> int:
    if unsafe:
        return 0
    return sum(1 for f in findings if f.fix is not None and not f.fix.safe and not f.suppressed)


def _check_again(checker, text: str, display: str, disk: Path | None):
    """Check new text for a file that was already checked (the project
    replaces the module parsed from the old text when the new source is
    registered, so kernels, spans and fixes refer to the new text)."""
    return checker.check_text(text, display, str(disk) if disk else None)


def _fix_trees(checker) -> tuple[Path, ...]:
    """Where a symlinked file's target may be rewritten: the project root and
    the trees named on the command line."""
    roots = [Path(checker.settings.root)]
    roots.extend(Path(p) if Path(p).is_dir() else Path(p).parent for p in checker.options.project_roots)
    return tuple(roots)


def apply_fixes_to_run(run, checker, write: bool, unsafe: bool, stdin: bool = False) -> FixReport:
    """Fix every file of a finished run.

    With ``write`` the files are rewritten atomically (stdin input: the fixed
    source is returned instead) and the run's findings are replaced by those
    that remain; without it (``--diff``) nothing is written and the findings
    stay as they were. The report has the diff and the counts.
    """
    from .engine import Notification
    from .findings import Level

    report = FixReport()
    diffs: list[str] = []
    all_withheld: list[Finding] = []
    for index, result in enumerate(run.files):
        if result.text is None:
            continue
        # An override table that names a release names it for its files.
        file_settings = checker.profile_for(result.path).settings
        assumed = target_is_assumed(file_settings)
        findings = result.findings
        if assumed:
            findings, withheld = withhold_target_fixes(findings, checker.ruleset, unsafe)
            all_withheld.extend(withheld)
        if not any(f.fix for f in findings if not f.suppressed):
            continue
        from_stdin = stdin and index == 0
        # The file that was analysed, never a path derived from the display
        # path (which is relative to the project root, not the cwd).
        disk_path = Path(result.disk_path) if (not from_stdin and result.disk_path) else None

        def recheck(text: str, _display=result.path, _disk=disk_path, _assumed=assumed):
            found = _check_again(checker, text, _display, _disk).findings
            return withhold_target_fixes(found, checker.ruleset, unsafe)[0] if _assumed else found

        try:
            after = fix_source(result.text, findings, unsafe=unsafe, recheck=recheck)
        except FixError as exc:
            report.failed += 1
            run.notifications.append(Notification(Level.ERROR, f"{result.path}: {exc}", result.path))
            continue
        if after == result.text:
            report.unsafe_available += _unsafe_only(result.findings, unsafe)
            continue
        new_result = _check_again(checker, after, result.path, disk_path)
        added = introduced_errors(result.findings, new_result.findings, checker.ruleset)
        if added:
            report.failed += 1
            run.notifications.append(Notification(Level.ERROR, f"{result.path}: {introduced_message(added)}",
                                                  result.path))
            _check_again(checker, result.text, result.path, disk_path)  # the project holds the old text again
            continue
        fixed_count = _fixed_count(findings, new_result.findings, unsafe)
        if write and disk_path is not None:
            try:
                write_atomically(disk_path, result.text, after, _fix_trees(checker))
            except (FixError, OSError) as exc:
                report.failed += 1
                run.notifications.append(Notification(Level.ERROR, f"{result.path}: {exc}", result.path))
                continue
        diffs.append(after if (write and disk_path is None) else unified_diff(result.path, result.text, after))
        report.fixed += fixed_count
        report.files += 1
        report.unsafe_available += _unsafe_only(new_result.findings, unsafe)
        if write:
            run.files[index] = new_result
            run.fixes_applied += fixed_count
    if all_withheld:
        run.notifications.append(Notification(Level.WARNING, withheld_message(all_withheld, checker.settings)))
    report.diff = "".join(diffs)
    return report
