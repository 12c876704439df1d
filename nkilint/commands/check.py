"""``nkilint check``: lint files and report."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from ..safefs import write_report
from ..config import ConfigError
from ..discovery import InputFile, discover
from ..engine import Checker, FileResult, Notification, RunOptions, project_scan_roots, tune_gc
from ..findings import Level
from ..plugins import PluginError
from ..reporters import FORMATS
from ..invocation import Invocation, utc_now
from ..paths import display_path
from ..run import Run
from ..source import SourceError, decode_source
from ..targets import target_names
from ..versions import VERSION_NAMES
from .adopt import add_noqa_to_run, apply_baseline, load_baseline, write_baseline
from .show_fixes import fixable_snapshot, fixes_listing
from .cached import cache_options, check_through_cache
from .common import EXAMPLE_PATH, UsageFailure, _ruleset_and_enabled, _split, build_settings
from ..terminal import printable

@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, help="Rules to run (ids, prefixes, families, names, ALL); comma-separated.")
@click.option("--extend-select", multiple=True, help="Rules to add to the selection.")
@click.option("--ignore", multiple=True, help="Rules to turn off.")
@click.option("--exclude", multiple=True, help="Globs to exclude (replaces the defaults).")
@click.option("--extend-exclude", multiple=True, help="Globs to exclude in addition to the defaults.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to files named on the command line (for pre-commit).")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None,
              help="Leave out files that .gitignore files ignore when walking directories [default: respect].")
@click.option("--target", type=click.Choice(target_names(), case_sensitive=False), help="Hardware generation (inf2 = trn1).")
@click.option("--sdk", help="Neuron SDK release to check against (2.20 ... 2.34; default: the release the project pins, else the newest).")
@click.option("--nki-version", type=click.Choice(VERSION_NAMES), help="NKI version: the newest SDK release of it (0.1 = 2.26, legacy neuronxcc.nki; 0.8 = 2.34).")
@click.option("--format", "--output-format", "output_format", type=click.Choice(FORMATS), default="text", show_default=True, help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="Write the report to a file.")
@click.option("--statistics", is_flag=True, help="Show a table of findings per rule and level instead of the findings.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even if there are findings (2 still signals errors).")
@click.option("--fail-level", type=click.Choice(["note", "warning", "error"]), help="Lowest level that makes the exit code 1 [default: warning].")
@click.option("--file-time-limit", type=click.FloatRange(min=0), help="Seconds of analysis per file before its remaining rules are skipped with an NKI005 note (0: no limit) [default: 60].")
@click.option("--config", type=click.Path(exists=True, dir_okay=False), help="Use this pyproject.toml.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("--stdin-filename", help="The name to report for source read from stdin ('-').")
@click.option("--example", is_flag=True, help="Check the bundled example kernel (a CUDA/Triton port).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes (default: by file count and CPUs).")
@click.option("--fix", is_flag=True, help="Apply safe fixes to the files.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that may change behaviour (with --fix or --diff).")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option("--include-suppressed", is_flag=True, help="SARIF: also write results suppressed by '# noqa'.")
@click.option("--color/--no-color", default=None, help="Colour the text output (default: when writing to a terminal).")
@click.option("--baseline", "baseline_file", type=click.Path(dir_okay=False), help="Fail only on findings not in this baseline file.")
@click.option("--write-baseline", "write_baseline_file", type=click.Path(dir_okay=False), help="Record the current findings in this baseline file.")
@click.option("-q", "--quiet", is_flag=True, help="Print the findings, nothing else (no header, summary or notes).")
@click.option("-s", "--silent", is_flag=True, help="Print nothing; the exit code still says whether there are findings.")
@click.option("-v", "--verbose", is_flag=True, help="Also say where the configuration, the root and the target come from.")
@click.option("--show-fixes", is_flag=True, help="List the fixes applied (with --fix) or available, per file and rule.")
@click.option("--show-traceback", is_flag=True, help="Print the traceback of a rule or the model that crashed (NKI003), for a bug report.")
@click.option("--add-noqa", is_flag=True, help="Add '# noqa: ID' comments to every line with a finding; report nothing.")
@cache_options
def check(
    paths: tuple[str, ...],
    select,
    extend_select,
    ignore,
    exclude,
    extend_exclude,
    force_exclude: bool,
    respect_gitignore: bool | None,
    target: str | None,
    sdk: str | None,
    nki_version: str | None,
    output_format: str,
    output: str | None,
    statistics: bool,
    exit_zero: bool,
    fail_level: str | None,
    file_time_limit: float | None,
    config: str | None,
    isolated: bool,
    stdin_filename: str | None,
    example: bool,
    jobs: int | None,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    include_suppressed: bool,
    color: bool | None,
    baseline_file: str | None,
    write_baseline_file: str | None,
    add_noqa: bool,
    show_traceback: bool,
    no_cache: bool,
    cache_dir: str | None,
    quiet: bool,
    silent: bool,
    verbose: bool,
    show_fixes: bool,
) -> None:
    """Check NKI kernels in PATHS (files or directories; '-' reads stdin)."""
    started = utc_now()
    if example:
        if paths:
            raise UsageFailure("--example checks the bundled example; give no PATHS with it")
        paths = (str(EXAMPLE_PATH),)
    elif not paths:
        # ruff: --stdin-filename alone reads standard input.
        paths = ("-",) if stdin_filename else (".",)
    if example and fix:
        raise UsageFailure("--example checks a file of the installed package, which --fix must not rewrite; "
                           "use --diff to see the fixes")
    if add_noqa and (fix or diff or example or "-" in paths):
        raise UsageFailure("--add-noqa edits files on disk; it cannot be combined with --fix, --diff, --example or '-'")
    baseline = load_baseline(baseline_file) if baseline_file and not write_baseline_file else None
    if fix and diff:
        raise UsageFailure("--fix and --diff cannot be used together (--diff shows the fixes without writing)")
    if (fix or diff) and "-" in paths and len(paths) > 1:
        raise UsageFailure("fixes on stdin work only when '-' is the only path")
    try:
        settings = build_settings(
            paths,
            config,
            isolated,
            find_pins=not example,
            select=_split(select) or None,
            extend_select=_split(extend_select) or None,
            ignore=_split(ignore) or None,
            exclude=_split(exclude) or None,
            extend_exclude=_split(extend_exclude) or None,
            respect_gitignore=respect_gitignore,
            target=target,
            sdk=sdk,
            nki_version=nki_version,
            fail_level=fail_level,
            file_time_limit=file_time_limit,
        )
    except ConfigError as exc:
        raise UsageFailure(str(exc)) from None
    ruleset, enabled = _ruleset_and_enabled(settings)
    tune_gc()
    file_paths = [p for p in paths if p != "-"]
    files, errors = discover(file_paths, settings.root, settings.all_excludes, force_exclude,
                             settings.respect_gitignore)
    if example:
        files = [InputFile(EXAMPLE_PATH, "nkilint/examples/softmax_port.py", True)]
    else:
        settings, nested_notes = _with_nested(settings, ruleset, files, stdin_filename if "-" in paths else None)
    options = RunOptions(
        want_fingerprints=output_format == "sarif", keep_text=fix or diff or add_noqa,
        project_roots=() if example else project_scan_roots(paths, settings),
        track_deps=not no_cache,
    )
    checker = Checker(settings, ruleset, enabled, options)
    run = Run(settings, ruleset, enabled, cwd=Path.cwd().resolve())
    for message in errors:
        run.notifications.append(Notification(Level.ERROR, message))
        click.echo(f"nkilint: error: {printable(message)}", err=True)
    if not example:
        for message in nested_notes:
            run.notifications.append(Notification(Level.WARNING, message))
            if not silent:
                click.echo(f"nkilint: warning: {printable(message)}", err=True)
    if verbose and not silent:
        _explain_settings(settings, len(files) + ("-" in paths), [f.display for f in files])
    if "-" in paths:
        run.files.append(_check_stdin(checker, stdin_filename))
    run.files.extend(check_through_cache(files, checker, jobs, no_cache, cache_dir))

    # --fix / --diff: stdout carries the diff (--diff) or, for stdin, the
    # fixed source (--fix); the report then goes to stderr (or -o).
    fixed_stdin = fix and "-" in paths
    before_fix = fixable_snapshot(run)
    if fix or diff:
        from ..fixes import apply_fixes_to_run

        known = len(run.notifications)
        try:
            fix_report = apply_fixes_to_run(run, checker, write=fix, unsafe=unsafe_fixes, stdin=("-" in paths))
        except PluginError as exc:  # pragma: no cover - defensive
            raise UsageFailure(str(exc)) from None
        for note in run.notifications[known:]:
            click.echo(f"nkilint: {note.level.label}: {printable(note.message)}", err=True)
        if diff or (fixed_stdin and fix_report.diff):
            click.echo(fix_report.diff, nl=False)
        if diff:
            click.echo(
                f"Would fix {fix_report.fixed} finding{'s' if fix_report.fixed != 1 else ''} in {fix_report.files} "
                f"file{'s' if fix_report.files != 1 else ''}" if fix_report.files else "No fixes to apply",
                err=True,
            )
        if fix_report.unsafe_available:
            click.echo(
                f"{fix_report.unsafe_available} more fix{'es' if fix_report.unsafe_available != 1 else ''} "
                "available with --unsafe-fixes (they may change behaviour; review them with --diff)",
                err=True,
            )

    if add_noqa:
        _add_noqa(run, errors)
    if write_baseline_file:
        count = write_baseline(run, write_baseline_file)
        click.echo(f"nkilint: wrote {count} finding{'s' if count != 1 else ''} to the baseline {write_baseline_file}", err=True)
        baseline = load_baseline(write_baseline_file)
    if baseline is not None:
        stale = apply_baseline(run, baseline)
        if stale:
            click.echo(f"nkilint: {stale} baseline entr{'ies' if stale != 1 else 'y'} of {baseline_file} match no finding "
                       "(fixed, or the line changed); --write-baseline refreshes it", err=True)

    crashes = 0
    for note in run.all_notifications:
        if note.rule_id is not None and note.detail:
            click.echo(f"nkilint: {printable(note.message)}", err=True)
            crashes += 1
            if show_traceback:
                click.echo("\n".join(printable(line, keep_tabs=True) for line in note.detail.rstrip().splitlines()),
                           err=True)
        elif note.path is not None and note not in run.notifications:
            click.echo(f"nkilint: {printable(note.message)}", err=True)

    if crashes and not show_traceback:
        click.echo("nkilint: --show-traceback prints where it crashed, for the bug report", err=True)
    code = run.exit_code(exit_zero)
    if errors:
        # A path that does not exist is a usage error: 2 even when other
        # files have findings, and --exit-zero does not hide it.
        code = 2
    run.invocation = Invocation(tuple(sys.argv[1:]), Path.cwd(), started, utc_now(), code)
    colored = output is None and _use_color(color)
    if statistics and output_format in ("json", "text", "concise"):
        from ..reporters.statistics import render_statistics_json, render_statistics_text

        report = render_statistics_json(run) if output_format == "json" else render_statistics_text(run)
    else:
        report = _render(run, output_format, colored, False, include_suppressed)
        if statistics and not silent:
            from ..reporters.statistics import render_statistics_text

            click.echo(render_statistics_text(run), nl=False, err=True)
    if silent:
        sys.exit(code)
    if show_fixes:
        click.echo(fixes_listing(before_fix, run, applied=fix), nl=False, err=True)
    if quiet and output_format in ("text", "concise"):
        report = _without_header_and_summary(report, run)
    if output:
        try:
            write_report(Path(output), report)  # all or nothing
        except OSError as exc:
            raise UsageFailure(f"cannot write {output}: {exc.strerror or exc}") from None
    elif fixed_stdin:
        click.echo(report, nl=False, err=True)
    elif not diff:
        click.echo(report, nl=False, color=colored or None)
    sys.exit(code)


def _with_nested(settings, ruleset, files, stdin_filename: str | None):
    """The settings with the nested [tool.nkilint] tables of the files'
    directories (nkilint/nested.py), and the warnings for run-wide keys they
    set; a bad nested table is a configuration error (exit 2) naming its file."""
    from ..nested import directories_of, ignored_keys_messages, resolve_scopes, shadowed_overrides_messages

    disk = [f.path for f in files]
    if stdin_filename:
        disk.append(Path(stdin_filename))
    try:
        scopes = resolve_scopes(settings, directories_of(disk), ruleset)
    except ConfigError as exc:
        raise UsageFailure(str(exc)) from None
    if not scopes:
        return settings, []
    settings = settings.merged(scopes=scopes)
    notes = ignored_keys_messages(scopes, settings.config_file)
    return settings, notes + shadowed_overrides_messages(settings, [f.display for f in files])


def _add_noqa(run: Run, errors: list[str]) -> None:
    """--add-noqa: write the comments, say what was done, and stop (exit 0
    unless a path was missing, a rule crashed or a file was not written)."""
    known = len(run.notifications)
    added, files, skipped = add_noqa_to_run(run)
    click.echo(f"Added {added} noqa directive{'s' if added != 1 else ''} to {files} file{'s' if files != 1 else ''}.", err=True)
    for f in skipped:
        click.echo(f"nkilint: {f.path}:{f.span.start_line}: {f.rule_id} not suppressed: the line ends inside a string "
                   "or continues with a backslash; add the noqa by hand or use --write-baseline", err=True)
    sys.exit(2 if errors or run.crashed or len(run.notifications) > known else 0)


def _explain_settings(settings, n_files: int, displays: list[str]) -> None:
    from ..nested import scope_for

    s = settings
    click.echo(f"nkilint: project root {printable(str(s.root))} (paths are reported relative to it)", err=True)
    own = [d for d in displays if scope_for(s, d) is None]
    groups = f" for {_count(own)}" if s.scopes else ""
    click.echo(f"nkilint: configuration {printable(str(s.config_file or 'none (defaults)'))}{groups}", err=True)
    _explain_one(s, own)
    if not s.hierarchical:
        click.echo("nkilint: nested configurations not read (--config / --isolated name the one configuration)",
                   err=True)
    for scope in s.scopes:
        mine = [d[len(scope.directory) + 1:] for d in displays if scope_for(s, d) is scope]
        click.echo(f"nkilint: configuration {printable(str(scope.config_file))} (nested) for {_count(mine)} "
                   f"under {printable(scope.directory)}/", err=True)
        _explain_one(scope.settings, mine, "  ")
    click.echo(f"nkilint: {n_files} file{'s' if n_files != 1 else ''} to check", err=True)


def _count(displays: list[str]) -> str:
    return f"{len(displays)} file{'s' if len(displays) != 1 else ''}"


def _explain_one(s, displays: list[str], indent: str = "") -> None:
    """The target and overrides of one configuration."""
    click.echo(f"nkilint: {indent}target {s.release.label} {s.target_origin.text}; {s.target.name}", err=True)
    if s.scope_dir and s.select is not None:
        click.echo(f"nkilint: {indent}select {','.join(s.select)}", err=True)
    for number, override in enumerate(s.overrides, 1):
        click.echo(f"nkilint: {indent}{_describe_override(number, override, s, displays)}", err=True)


def _describe_override(number: int, override, settings, displays: list[str]) -> str:
    """``override #1 (legacy/**/*.py, 12 files): SDK 2.26 (NKI 0.1); ignore NKI6``."""
    parts = []
    if override.release is not None:
        text = override.release.label
        parts.append(text + (" (not applied: the command line sets the release)" if "release" in settings.cli_keys else ""))
    if override.target_name is not None:
        parts.append(override.target_name + (" (not applied: --target)" if "target" in settings.cli_keys else ""))
    if override.select is not None:
        parts.append("select " + ",".join(override.select))
    if override.extend_select:
        parts.append("extend-select " + ",".join(override.extend_select))
    if override.ignore:
        parts.append("ignore " + ",".join(override.ignore))
    count = sum(1 for d in displays if override.matches(d))
    return (f"override #{number} ({', '.join(override.files)}, {count} file{'s' if count != 1 else ''}): "
            + ("; ".join(parts) or "no settings"))


def _without_header_and_summary(report: str, run: Run) -> str:
    lines = report.splitlines(keepends=True)
    if lines and lines[0].startswith("target: "):
        lines = lines[1:]
    if lines and lines[-1].rstrip("\n") == run.summary():
        lines = lines[:-1]
    return "".join(lines)


def _use_color(color: bool | None) -> bool:
    """--color / --no-color, else FORCE_COLOR, else NO_COLOR, else a terminal."""
    if color is not None:
        return color
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def _render(run: Run, fmt: str, color: bool, statistics: bool, include_suppressed: bool) -> str:
    if fmt == "json":
        from ..reporters.json_report import render_json

        return render_json(run)
    if fmt == "sarif":
        from ..reporters.sarif import render_sarif

        return render_sarif(run, include_suppressed)
    if fmt == "github":
        from ..reporters.github import render_github

        return render_github(run)
    if fmt == "gitlab":
        from ..reporters.gitlab import render_gitlab

        return render_gitlab(run)
    if fmt == "junit":
        from ..reporters.junit import render_junit

        return render_junit(run)
    if fmt == "concise":
        from ..reporters.text import render_concise

        return render_concise(run)
    from ..reporters.text import render_text

    return render_text(run, color=color, statistics=statistics)


def _check_stdin(checker: Checker, stdin_filename: str | None) -> FileResult:
    display = display_path(Path(stdin_filename), checker.settings.root) if stdin_filename else "-"
    try:
        if sys.stdin is None:  # file descriptor 0 is closed
            raise OSError("standard input is closed")
        data = sys.stdin.buffer.read()
        text = decode_source(data)
    except SourceError as err:
        return checker._broken(display, err, None)
    except IsADirectoryError:
        return checker._broken(display, SourceError("unreadable", "standard input is a directory, not a file"), None)
    except OSError as exc:
        return checker._broken(display, SourceError("unreadable", f"cannot read standard input: {exc.strerror or exc}"), None)
    disk = None
    if stdin_filename:
        candidate = Path(stdin_filename)
        if candidate.exists():
            disk = str(candidate.absolute())
    return checker.check_text(text, display, disk_path=disk)


