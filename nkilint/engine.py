"""Running the enabled rules over files, isolating crashes.

One file at a time: read -> decode -> parse -> rules -> per-file ignores ->
noqa. Every file yields findings or a per-file error, and the run goes on.
A FileResult is picklable, so files can be checked in a process pool.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import traceback
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from .config import Settings
from .context import ModelCrash, RuleContext
from .deadline import FileTimeLimit, file_deadline
from .discovery import InputFile
from .interrupts import caused_by_interrupt
from .findings import Finding, Level, Span
from .fingerprint import line_hashes
from .incomplete import ANALYSIS_INCOMPLETE, partial_kernel_findings, time_limit_finding
from .legacy_as_of import TARGET_FAMILY, as_of_context, legacy_as_of, mark_as_of
from .paths import display_path, on_disk
from .rule import Rule, RuleSet
from .overrides import matching
from .nested import scope_for
from .profiles import Profile, build_profile
from .selection import Selector, matches_any
from .safefs import FileTooLargeError, NotRegularFileError, read_bytes_capped
from .source import MAX_FILE_BYTES, SourceError, SourceFile, decode_source
from .suppression import FileDirectives, apply_file_noqa, apply_noqa, parse_file_noqa, parse_noqa

# Ids of the tool rules the engine itself emits (declared in the rule pack).
SYNTAX_ERROR = "NKI001"
UNREADABLE_FILE = "NKI002"
RULE_CRASH = "NKI003"
UNUSED_NOQA = "NKI004"


@dataclass(frozen=True)
class Notification:
    """Something about the run itself (SARIF toolExecutionNotifications)."""

    level: Level
    message: str
    path: str | None = None
    rule_id: str | None = None
    span: Span | None = None
    detail: str | None = None  # e.g. a traceback


@dataclass(frozen=True)
class FileDeps:
    """What a file's result rests on besides its own text (for the cache):
    project files read (absolute paths), import candidates that did not
    exist, and the file's decorated kernels (whose launch status the whole
    tree's references decide)."""

    read: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    kernel_names: tuple[str, ...] = ()


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    notifications: list[Notification] = field(default_factory=list)
    crashed: bool = False  # a rule raised: exit code 2
    # The file's time limit ended its analysis (NKI005): depends on the
    # machine's speed, so the result is never cached.
    timed_out: bool = False
    lines: dict[int, str] = field(default_factory=dict)  # lines findings point at
    fingerprints: dict[int, str] = field(default_factory=dict)  # line -> hash
    text: str | None = None  # kept only when fixes may be applied
    deps: FileDeps | None = None  # recorded only for the cache (RunOptions.track_deps)
    # The file that was analysed (None: stdin or a buffer with no file);
    # --fix writes here, never to a path derived from the display path.
    disk_path: str | None = None


@dataclass(frozen=True)
class RunOptions:
    want_fingerprints: bool = False
    keep_text: bool = False
    extra_rules: tuple[type[Rule], ...] = ()
    # Where the model looks for the callers of decorated kernels (the linted
    # tree and the project root); empty: each file is decided on its own.
    project_roots: tuple[str, ...] = ()
    # Record the project files each result rests on (FileResult.deps).
    track_deps: bool = False


def _per_file_selectors(settings: Settings, display: str) -> list[Selector]:
    out: list[Selector] = []
    if settings.scope_dir:
        # A nested configuration's globs are relative to its directory.
        rel = _relative_to_root(display, settings.root)
        names = (rel[len(settings.scope_dir) + 1:], display.rsplit("/", 1)[-1])
    else:
        names = (display, display.rsplit("/", 1)[-1], _relative_to_root(display, settings.root))
    for glob, selectors in settings.per_file_ignores:
        if any(fnmatch.fnmatchcase(name, glob) for name in names):
            out.extend(Selector(s) for s in selectors)
    return out


def _relative_to_root(display: str, root: Path) -> str:
    # Display paths are relative to the project root already (absolute
    # outside it); normalise the ones that are not.
    return display_path(on_disk(display, root), root)


def read_file(path: Path) -> bytes:
    """Read a file's bytes; SourceError for anything that is not a regular
    file (a FIFO, a device, a symlink to one: never opened for a blocking
    read) or is larger than MAX_FILE_BYTES (never read past the cap)."""
    try:
        return read_bytes_capped(path, MAX_FILE_BYTES)
    except NotRegularFileError as exc:
        raise SourceError("unreadable", f"the path {exc.strerror}; not read") from None
    except FileTooLargeError:
        raise SourceError("too-large", f"file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; not analysed") from None
    except PermissionError:
        raise SourceError("unreadable", "cannot read file: permission denied") from None
    except OSError as exc:
        raise SourceError("unreadable", f"cannot read file: {exc.strerror or exc}") from None


class Checker:
    """Runs a fixed set of rules with fixed settings over any number of files."""

    def __init__(
        self,
        settings: Settings,
        ruleset: RuleSet,
        enabled: frozenset[str],
        options: RunOptions = RunOptions(),
    ) -> None:
        self.settings = settings
        self.ruleset = ruleset
        self.enabled = enabled
        self.options = options
        self.target = settings.target
        self.rules: list[Rule] = [ruleset.rules[rid]() for rid in sorted(enabled) if rid in ruleset.rules]
        self.rules.extend(rule() for rule in options.extra_rules)
        self.names = {r.id: r.name for r in ruleset}
        self._project = None
        self._base = Profile(settings, self.target, enabled, tuple(self.rules))
        self._profiles: dict[tuple[str, tuple[int, ...]], Profile] = {("", ()): self._base}

    def profile_for(self, display: str) -> Profile:
        """The settings, target and rules of the file reported as ``display``:
        its nested configuration's (nkilint/nested.py), or the run's, with the
        [[tool.nkilint.overrides]] tables that match it."""
        if not self.settings.overrides and not self.settings.scopes:
            return self._base
        rel = _relative_to_root(display, self.settings.root)
        scope = scope_for(self.settings, rel)
        if scope is None:
            settings, enabled, directory, own_rel = self.settings, self.enabled, "", rel
        else:
            settings, enabled, directory = scope.settings, frozenset(scope.enabled), scope.directory
            own_rel = rel[len(directory) + 1:]
        indexes = matching(settings.overrides, own_rel) if settings.overrides else ()
        key = (directory, indexes)
        profile = self._profiles.get(key)
        if profile is None:
            profile = self._profiles[key] = build_profile(settings, self.ruleset, enabled, indexes,
                                                          self.options.extra_rules)
        return profile

    @property
    def project(self):
        if self._project is None:
            from .model.project import Project

            self._project = Project(
                self.settings.root,
                scan_roots=tuple(Path(p) for p in self.options.project_roots),
                excludes=self.settings.all_excludes,
            )
        return self._project

    # ------------------------------------------------------------------
    def check_path(self, item: InputFile) -> FileResult:
        try:
            data = read_file(item.path)
            text = decode_source(data)
        except SourceError as err:
            return self._broken(item.display, err, None)
        try:
            return self.check_text(text, item.display, str(item.path))
        except Exception as exc:  # noqa: BLE001 - outside any rule (noqa, fingerprints...): this file only
            if caused_by_interrupt(exc):
                raise KeyboardInterrupt from exc
            return self._engine_crash(item.display, exc)

    def _engine_crash(self, display: str, exc: BaseException) -> FileResult:
        """A file the engine itself failed on: reported, the run goes on."""
        result = FileResult(display)
        result.crashed = True
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-8))
        message = (f"nkilint failed on this file: {type(exc).__name__}: {exc}. This is a bug in nkilint, "
                   "not in your kernel; the other files were checked")
        result.notifications.append(Notification(Level.ERROR, message, display, "engine", Span(1, 1, 1, 2), tb))
        if RULE_CRASH in self.ruleset.rules and RULE_CRASH in self.enabled:
            result.findings.append(Finding(RULE_CRASH, Level.ERROR, message, display, Span(1, 1, 1, 2),
                                           hint="report it with the file that triggers it"))
        return result

    def check_text(self, text: str, display: str, disk_path: str | None = None) -> FileResult:
        return self.check_source(text, display, disk_path)[0]

    def check_source(self, text: str, display: str, disk_path: str | None = None) -> tuple[FileResult, RuleContext | None]:
        """``check_text``, also giving the context the rules shared (its
        ``model`` is the file's semantic model; None when the file did not
        parse), for callers that report on the model too (``nkilint review``)."""
        if not (self.options.track_deps and disk_path):
            return self._check_source(text, display, disk_path)
        project = self.project
        with project.recording() as log:
            result, ctx = self._check_source(text, display, disk_path)
        result.deps = _file_deps(project, Path(disk_path), log)
        return result, ctx

    def _check_source(self, text: str, display: str, disk_path: str | None = None) -> tuple[FileResult, RuleContext | None]:
        profile = self.profile_for(display)
        source = self.project.loaded_source(Path(disk_path), text) if disk_path else None
        if source is None or source.path != disk_path:
            source = SourceFile(disk_path or display, text, display)
        if disk_path:
            self.project.register_source(Path(disk_path), source)
        try:
            source.tree  # noqa: B018 - parse now so syntax errors surface here
        except SourceError as err:
            return self._broken(display, err, source), None
        fs = profile.settings
        ctx = RuleContext(source, fs, profile.target, fs.nki_version, self.project, None, display, release=fs.release)
        result = FileResult(display, disk_path=disk_path)
        with _recursion_room(source.depth):
            self._run_rules(ctx, result, profile)
            if not result.timed_out:  # naming kernels may build the model: not past the file's time
                result.findings = ctx.name_kernels(result.findings)
        self._finish(result, source, profile.enabled)
        # The tree stays (other files may import this one); the whole-file
        # node list and parent map the rules shared are rebuilt if needed.
        source.__dict__.pop("nodes", None)
        source.__dict__.pop("parents", None)
        return result, ctx

    def _run_rules(self, ctx: RuleContext, result: FileResult, profile) -> None:
        """Every rule of the file's profile on it, within the file's time
        limit; a budget that ran out is said in an NKI005 note
        (nkilint.incomplete). A legacy file at a release that no longer
        imports it is checked as of the last release that did, but for the
        migration family (nkilint.legacy_as_of)."""
        rules = [rule for rule in profile.rules if not rule.emitted_by_engine]
        done = 0
        notes: list[Finding] = []
        limit = profile.settings.file_time_limit
        as_of = legacy_as_of(ctx)
        old_ctx = as_of_context(ctx, as_of) if as_of is not None else None
        try:
            with file_deadline(limit):
                for rule in rules:
                    if old_ctx is not None and rule.family != TARGET_FAMILY:
                        before = len(result.findings)
                        self._run_rule(rule, old_ctx, result, profile.enabled)
                        result.findings[before:] = mark_as_of(result.findings[before:], as_of, ctx.release,
                                                              rule.id)
                    else:
                        self._run_rule(rule, ctx, result, profile.enabled)
                    done += 1
        except FileTimeLimit:
            ctx.take_findings()  # the stopped rule's findings are partial
            if old_ctx is not None:
                old_ctx.take_findings()
            result.timed_out = True
            stopped = rules[done] if done < len(rules) else None
            notes.append(time_limit_finding(result.path, limit, stopped, rules[done + 1:]))
        for context in (ctx, old_ctx):
            model = context.model_if_built if context is not None else None
            if model is not None:
                notes.extend(partial_kernel_findings(model, result.path))
        if not notes:
            return
        if ANALYSIS_INCOMPLETE in self.ruleset.rules and ANALYSIS_INCOMPLETE in profile.enabled:
            result.findings.extend(notes)
        else:  # the rule is off: still say so, as a notification of the run
            result.notifications.extend(
                Notification(Level.NOTE, f"{result.path}: {n.message}", result.path, ANALYSIS_INCOMPLETE, n.span)
                for n in notes
            )

    def _broken(self, display: str, err: SourceError, source: SourceFile | None) -> FileResult:
        """A file that cannot be decoded or parsed: one finding, or a notification."""
        result = FileResult(display)
        profile = self.profile_for(display)
        fs = profile.settings
        ctx = RuleContext(source, fs, profile.target, fs.nki_version, None, err, display, release=fs.release)
        for rule in profile.rules:
            if rule.runs_on_broken_files and not rule.emitted_by_engine:
                self._run_rule(rule, ctx, result, profile.enabled)
        if not any(f.rule_id in (SYNTAX_ERROR, UNREADABLE_FILE) for f in result.findings):
            # The rule that would report it is disabled: still say so.
            result.notifications.append(
                Notification(Level.ERROR, f"{display}: not analysed: {err.message}", display)
            )
        self._finish(result, source, profile.enabled)
        return result

    def _run_rule(self, rule: Rule, ctx: RuleContext, result: FileResult, enabled: frozenset[str] | None = None) -> None:
        enabled = self.enabled if enabled is None else enabled
        ctx.begin_rule(type(rule))
        try:
            rule.check(ctx)
        except (Exception, SystemExit) as exc:  # isolate: the run goes on (a rule calling sys.exit too)
            if caused_by_interrupt(exc):
                raise KeyboardInterrupt from exc  # the user's Ctrl-C, not a crashed rule
            ctx.take_findings()
            if isinstance(exc, ModelCrash):
                if any(n.rule_id == "model" for n in result.notifications):
                    return  # already reported for this file
                exc = exc.cause
                rule_label = "the semantic model"
                tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-8))
                message = (
                    f"{rule_label} crashed on this file: {type(exc).__name__}: {exc}. This is a bug in nkilint, "
                    "not in your kernel; rules that need the model were skipped, the others ran"
                )
                result.crashed = True
                result.notifications.append(Notification(Level.ERROR, message, result.path, "model", Span(1, 1, 1, 2), tb))
                if RULE_CRASH in self.ruleset.rules and RULE_CRASH in enabled:
                    result.findings.append(Finding(RULE_CRASH, Level.ERROR, message, result.path, Span(1, 1, 1, 2),
                                                   hint="report it with the file that triggers it"))
                return
            result.crashed = True
            tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-6))
            where = _crash_location(exc, ctx)
            message = (
                f"rule {rule.id} ({rule.name}) crashed on this file: {type(exc).__name__}: {exc}. "
                "This is a bug in the rule, not in your kernel; the other rules still ran"
            )
            result.notifications.append(Notification(Level.ERROR, message, result.path, rule.id, where, tb))
            if RULE_CRASH in self.ruleset.rules and RULE_CRASH in enabled:
                result.findings.append(
                    Finding(RULE_CRASH, Level.ERROR, message, result.path, where, hint="report it with the file that triggers it")
                )
            return
        result.findings.extend(ctx.take_findings())

    def _finish(self, result: FileResult, source: SourceFile | None, enabled: frozenset[str]) -> None:
        findings = result.findings
        pfi = _per_file_selectors(self.profile_for(result.path).settings, result.path)
        if pfi:
            findings = [
                f for f in findings
                if f.rule_id not in self.ruleset.rules or not matches_any(pfi, self.ruleset.rules[f.rule_id])
            ]
        if source is not None:
            findings = self._suppress(findings, source, result.path, pfi, enabled)
        findings.sort(key=Finding.sort_key)
        result.findings = findings
        if source is not None:
            wanted = {f.span.start_line for f in findings} | {
                n.span.start_line for n in result.notifications if n.span
            }
            for f in findings:
                for rel in f.related:
                    wanted.add(rel.span.start_line)
            result.lines = {line: source.line_text(line) for line in wanted}
            if self.options.want_fingerprints and findings:
                hashes = line_hashes(source.text)
                result.fingerprints = {line: hashes[line] for line in wanted if line in hashes}
            if self.options.keep_text:
                result.text = source.text

    def _suppress(self, findings: list[Finding], source: SourceFile, path: str, pfi: list[Selector],
                  enabled: frozenset[str]) -> list[Finding]:
        """Apply the file-level directives, then the line ``# noqa``
        comments (a finding a directive took does not use a line's code,
        so a line comment the directive makes redundant is reported), then
        report the stale ones."""
        file_level = parse_file_noqa(source)
        noqas = parse_noqa(source)
        if not (file_level.directives or file_level.misplaced or noqas):
            return findings
        findings = apply_file_noqa(findings, file_level.directives, self.names)
        if noqas:
            findings = apply_noqa(findings, noqas, self.names)
        if UNUSED_NOQA in enabled and UNUSED_NOQA in self.ruleset.rules:
            stale = self._unused_noqa(noqas, path, pfi, enabled) if noqas else []
            # A file-level directive may silence NKI004 for the line comments
            # too; what it reports about itself it cannot silence.
            findings.extend(apply_file_noqa(stale, file_level.directives, self.names))
            findings.extend(self._unused_file_noqa(file_level, path, pfi, enabled))
        return findings

    def _unused_file_noqa(self, file_level: FileDirectives, path: str, pfi: list[Selector],
                          enabled: frozenset[str]) -> list[Finding]:
        level = self.ruleset.rules[UNUSED_NOQA].level
        out = [
            Finding(UNUSED_NOQA, level, "'# nkilint: noqa' has no effect here: a file-level suppression must be on a line "
                    "of its own in the comments at the top of the file, before any code", path, span,
                    hint="move it above the first line of code, or use '# noqa: ID' on the reported line")
            for span in file_level.misplaced
        ]
        for directive in file_level.directives:
            if directive.is_blanket:
                if not directive.blanket_used:
                    out.append(Finding(UNUSED_NOQA, level, "unused suppression: '# nkilint: noqa' suppresses nothing in "
                                       "this file", path, directive.span, hint="remove the comment"))
                continue
            out.extend(self._stale_codes([directive], path, pfi, " in this file", enabled))
        return out

    def _code_prefixes(self) -> set[str]:
        """Id namespaces of the installed rules (NKI, and any pack's prefix)."""
        return {_code_prefix(rid) for rid in self.ruleset.rules} | {"NKI"}

    def _unused_noqa(self, noqas, path: str, pfi: list[Selector], enabled: frozenset[str]) -> list[Finding]:
        # A bare `# noqa` usually silences another linter (flake8, ruff):
        # whether it is stale is not nkilint's to judge.
        return self._stale_codes([n for n in noqas.values() if not n.is_blanket], path, pfi, " on this line", enabled)

    def _stale_codes(self, noqas, path: str, pfi: list[Selector], where: str, enabled: frozenset[str]) -> list[Finding]:
        """NKI004 for the unknown and the unused codes of each comment."""
        level = self.ruleset.rules[UNUSED_NOQA].level
        out = []
        prefixes = self._code_prefixes()
        for noqa in noqas:
            unknown, unused = [], []
            for code in noqa.codes:
                rule = self.ruleset.get(code)
                if rule is None:
                    # F401, E501, PYI024...: another tool's codes. Only a code
                    # in one of our id namespaces (NKI..., a pack's prefix)
                    # that matches no rule is a typo worth reporting.
                    if _code_prefix(code) in prefixes or "-" in code:
                        unknown.append(code)  # our id namespace, or a rule-name style code
                elif rule.id not in enabled or rule.emitted_by_engine and rule.id == UNUSED_NOQA:
                    continue  # not run here; cannot tell whether it is stale
                elif pfi and matches_any(pfi, rule):
                    continue
                elif code not in noqa.used:
                    unused.append(code)
            if unknown:
                out.append(
                    Finding(UNUSED_NOQA, level, f"'# noqa' names unknown rule code(s): {', '.join(unknown)}", path, noqa.span,
                            hint="use a rule id such as NKI201 or a rule name; `nkilint rules` lists them")
                )
            if unused:
                out.append(
                    Finding(UNUSED_NOQA, level, f"unused suppression: {', '.join(unused)} reports nothing{where}", path, noqa.span,
                            hint="remove the stale code(s) from the '# noqa' comment")
                )
        return out


def _file_deps(project, path: Path, log) -> FileDeps:
    deps = project.dependencies(path, log)
    names: tuple[str, ...] = ()
    index = project.indexes.get("kernel_calls")
    if index is not None:
        key = Path(os.path.realpath(path))
        names = tuple(sorted({name for module, name in index.kernels if module == key}))
    return FileDeps(tuple(sorted(map(str, deps.read))), tuple(sorted(map(str, deps.absent - deps.read))), names)


# Syntax trees nest at most this deep before the rules get more recursion
# room; real kernels stay under about 40 levels.
_SHALLOW = 150
_MAX_RECURSION = 30_000


@contextmanager
def _recursion_room(depth: int):
    """Room for the recursive walks of the rules and the model on a valid but
    deeply nested file (a 900-operand sum, a long ternary chain): Python's
    default limit of 1000 frames is about 400 levels of an ast.NodeVisitor.
    Only on Python 3.11+, where Python-to-Python calls do not use the C
    stack; what still does not fit is a RecursionError, reported as NKI003
    for the rule it hit."""
    if sys.version_info < (3, 11):
        yield
        return
    previous = sys.getrecursionlimit()
    wanted = min(_MAX_RECURSION, 1000 + depth * 24)
    if depth <= _SHALLOW or wanted <= previous:
        yield
        return
    sys.setrecursionlimit(wanted)
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _code_prefix(code: str) -> str:
    """The letters of a rule code: NKI for NKI201, ACME for ACME101."""
    letters = ""
    for ch in code.upper():
        if not ch.isalpha():
            break
        letters += ch
    return letters if letters != code.upper() else ""


def _crash_location(exc: BaseException, ctx: RuleContext) -> Span:
    """Point a crash at the node being analysed if the rule told us, else line 1."""
    node = getattr(exc, "nkilint_node", None)
    if node is not None and ctx.source is not None:
        try:
            return ctx.source.span_of(node)
        except Exception:  # pragma: no cover - best effort
            pass
    return Span(1, 1, 1, 2)


# -- running many files ------------------------------------------------------
_WORKER: Checker | None = None


def tune_gc() -> None:
    """Collect garbage less often during a run.

    The analysis keeps every parsed module and kernel graph of the project
    alive (imports between files resolve through them), so the cyclic
    collector's full passes over millions of long-lived objects cost a
    third of the run with the default thresholds. Nothing here creates
    garbage cycles worth collecting early.
    """
    import gc

    gc.set_threshold(200_000, 50, 100)


def _init_worker(settings: Settings, enabled: frozenset[str], options: RunOptions) -> None:
    global _WORKER
    from .plugins import installed_rules

    tune_gc()

    _WORKER = Checker(settings, installed_rules(), enabled, options)


def _check_in_worker(item: InputFile) -> FileResult:
    assert _WORKER is not None
    return _WORKER.check_path(item)


def project_scan_roots(paths: Sequence[str], settings: Settings) -> tuple[str, ...]:
    """The tree whose code may call the kernels being checked: every
    directory named on the command line, the package (or the file itself)
    of every file named, and the project root when it is a real project (it
    holds the configuration file, or is a git checkout)."""
    roots: list[Path] = []
    for raw in paths:
        if raw == "-":
            continue
        path = Path(raw).absolute()
        if path.is_dir():
            roots.append(path)
        elif path.is_file():
            top = path.parent
            if (top / "__init__.py").exists():
                while (top.parent / "__init__.py").exists() and top.parent != top:
                    top = top.parent
                roots.append(top)
            else:
                roots.append(path)
    root = settings.root
    if settings.config_file is not None or (root / ".git").exists():
        roots.append(root)
    out: list[str] = []
    for r in roots:
        text = str(r)
        if text not in out:
            out.append(text)
    return tuple(out)


def default_jobs(n_files: int) -> int:
    if n_files < 24:
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


def check_files(
    files: Sequence[InputFile], checker: Checker, jobs: int | None = None
) -> Iterable[FileResult]:
    """Results in input order. Uses a process pool for large runs."""
    jobs = default_jobs(len(files)) if jobs is None else jobs
    if jobs <= 1 or checker.options.extra_rules:
        for item in files:
            yield checker.check_path(item)
        return
    # Workers prefer files of one package together (shared import cache).
    chunk = max(1, len(files) // (jobs * 4))
    with ProcessPoolExecutor(
        max_workers=jobs, initializer=_init_worker, initargs=(checker.settings, checker.enabled, checker.options)
    ) as pool:
        yield from pool.map(_check_in_worker, files, chunksize=chunk)
