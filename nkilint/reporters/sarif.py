"""SARIF 2.1.0 output for GitHub code scanning and the VS Code SARIF viewer.

Built with sarif-om's object model and written by ``nkilint.sarif_writer``.
Suppressed findings are left out unless ``include_suppressed`` (then they
carry an in-source suppression).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from urllib.parse import quote

import sarif_om as so

from .. import __version__
from ..findings import Finding, Level, Span
from ..invocation import utc_text
from ..paths import display_path
from ..rule import Rule
from ..run import Run
from ..sarif_writer import make, to_json

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/nkilint/nkilint"
SRCROOT = "%SRCROOT%"
COLUMN_FINGERPRINT = "nkilint/column/v1"
MAX_RESULTS = 25_000  # per run, GitHub code scanning's limit
# GitHub code scanning refuses a SARIF upload over 10 MB gzip-compressed
# (https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning#file-size-limits).
MAX_GZIP_BYTES = 10 * 1000 * 1000
_LEVEL = {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "note"}


def _descriptor(rule: type[Rule]) -> so.ReportingDescriptor:
    full = rule.explanation.strip().split("\n\n")[0].replace("\n", " ")
    help_text = f"{rule.summary}\n\n{_plain(rule.explanation)}"
    return make(
        so.ReportingDescriptor,
        id=rule.id,
        name=rule.name,
        short_description=make(so.MultiformatMessageString, text=rule.summary),
        full_description=make(so.MultiformatMessageString, text=full),
        help=make(so.MultiformatMessageString, text=help_text, markdown=_markdown_help(rule)),
        help_uri=rule.help_uri(),
        default_configuration=make(
            so.ReportingConfiguration, level=_LEVEL[rule.level], enabled=bool(rule.default_enabled)
        ),
        properties=make(
            so.PropertyBag,
            tags=[rule.family, "nki"] + (["fixable"] if rule.fixable else []),
            _extra={"precision": rule.precision, "problem.severity": _severity(rule.level)},
        ),
    )


def _severity(level: Level) -> str:
    return {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "recommendation"}[level]


def _plain(markdown: str) -> str:
    return markdown.strip().replace("`", "")


def _markdown_help(rule: type[Rule]) -> str:
    from ..explain import explain_markdown

    return explain_markdown(rule)


def _region(span: Span) -> so.Region:
    return make(
        so.Region,
        start_line=span.start_line,
        start_column=span.start_col,
        end_line=span.end_line,
        end_column=span.end_col,
    )


def _artifact_location(path: str, root: Path) -> so.ArtifactLocation:
    """Report paths are relative to the project root (%SRCROOT%); a path
    outside it is an absolute file URI."""
    p = Path(path)
    if not p.is_absolute():
        return make(so.ArtifactLocation, uri=quote(p.as_posix()), uri_base_id=SRCROOT)
    rel = display_path(p, root)
    if not Path(rel).is_absolute():
        return make(so.ArtifactLocation, uri=quote(rel), uri_base_id=SRCROOT)
    return make(so.ArtifactLocation, uri=p.as_uri())


def _column_keys(findings: list[Finding], run: Run) -> dict[int, str]:
    """A key per result that tells apart results on the same line: the
    line's hash, the columns and the message; a repeat gets ``:n``.
    (ruleId, uri, partialFingerprints) is then unique in the run, which
    code scanning needs to keep one alert per result."""
    seen: dict[str, int] = {}
    out: dict[int, str] = {}
    for f in findings:
        line = (run.fingerprint_for(f) or "").split(":")[0]
        span = f.span
        raw = "\0".join((f.rule_id, f.path, line, f"{span.start_col}-{span.end_col}", f.message))
        digest = hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]
        seen[digest] = seen.get(digest, 0) + 1
        out[id(f)] = f"{digest}:{seen[digest]}"
    return out


def _result(f: Finding, run: Run, rule_index: dict[str, int], root: Path, column_keys: dict[int, str]) -> so.Result:
    location = make(
        so.Location,
        physical_location=make(
            so.PhysicalLocation, artifact_location=_artifact_location(f.path, root), region=_region(f.span)
        ),
    )
    text = f.message + (f" Hint: {f.hint}" if f.hint else "")
    kwargs = dict(
        rule_id=f.rule_id,
        level=_LEVEL[f.level],
        message=make(so.Message, text=text),
        locations=[location],
    )
    if f.rule_id in rule_index:
        kwargs["rule_index"] = rule_index[f.rule_id]
    fingerprints = {}
    fingerprint = run.fingerprint_for(f)
    if fingerprint:
        fingerprints["primaryLocationLineHash"] = fingerprint
    fingerprints[COLUMN_FINGERPRINT] = column_keys[id(f)]
    kwargs["partial_fingerprints"] = fingerprints
    if f.related:
        kwargs["related_locations"] = [
            make(
                so.Location,
                id=i,
                physical_location=make(
                    so.PhysicalLocation, artifact_location=_artifact_location(r.path or f.path, root),
                    region=_region(r.span),
                ),
                message=make(so.Message, text=r.message),
            )
            for i, r in enumerate(f.related)
        ]
    if f.fix is not None:
        kwargs["fixes"] = [
            make(
                so.Fix,
                description=make(so.Message, text=f.fix.description),
                artifact_changes=[
                    make(
                        so.ArtifactChange,
                        artifact_location=_artifact_location(f.path, root),
                        replacements=[
                            make(
                                so.Replacement,
                                deleted_region=_region(e.span),
                                inserted_content=make(so.ArtifactContent, text=e.replacement),
                            )
                            for e in f.fix.edits
                        ],
                    )
                ],
            )
        ]
    if f.suppressed:
        # A baseline is kept outside the source (SARIF "external").
        kind = "external" if f.baselined else "inSource"
        kwargs["suppressions"] = [make(so.Suppression, kind=kind, state="accepted")]
    props = {}
    if f.kernel:
        props["kernel"] = f.kernel
    if props:
        kwargs["properties"] = make(so.PropertyBag, _extra=props)
    return make(so.Result, **kwargs)


def build_sarif(run: Run, include_suppressed: bool = False, max_results: int | None = None,
                size_note: str | None = None) -> dict:
    """The SARIF log of a run. At most ``max_results`` results (the most
    severe first), with a notification saying how many were left out and
    why (``size_note``: the file-size limit, else the result limit)."""
    root = run.settings.root
    rules = run.ruleset.sorted()
    rule_index = {r.id: i for i, r in enumerate(rules)}
    driver = make(
        so.ToolComponent,
        name="nkilint",
        semantic_version=__version__,
        version=__version__,
        information_uri=INFORMATION_URI,
        rules=[_descriptor(r) for r in rules],
    )
    chosen = [f for f in run.findings if include_suppressed or not f.suppressed]
    max_results = MAX_RESULTS if max_results is None else max_results
    notifications = []
    if len(chosen) > max_results:
        # GitHub code scanning rejects a run with more results than this.
        why = size_note or f"code scanning accepts at most {MAX_RESULTS} per run"
        notifications.append(make(
            so.Notification, level="warning",
            message=make(so.Message, text=f"{len(chosen) - max_results} of {len(chosen)} results were left out: "
                                          f"{why}; use --baseline or narrow the selection"),
        ))
        chosen = sorted(chosen, key=lambda f: -int(f.level))[:max_results]
    column_keys = _column_keys(chosen, run)
    results = [_result(f, run, rule_index, root, column_keys) for f in chosen]
    for n in run.all_notifications:
        kw = dict(level=_LEVEL[n.level], message=make(so.Message, text=n.message))
        if n.path:
            kw["locations"] = [
                make(
                    so.Location,
                    physical_location=make(
                        so.PhysicalLocation,
                        artifact_location=_artifact_location(n.path, root),
                        **({"region": _region(n.span)} if n.span else {}),
                    ),
                )
            ]
        if n.rule_id and n.rule_id in rule_index:
            kw["associated_rule"] = make(so.ReportingDescriptorReference, id=n.rule_id, index=rule_index[n.rule_id])
        if n.detail:
            kw["exception"] = make(so.Exception, message=n.detail.strip().splitlines()[-1], kind="python")
        notifications.append(make(so.Notification, **kw))
    invocation = _invocation(run, notifications)
    log = make(
        so.SarifLog,
        schema_uri=SCHEMA_URI,
        version="2.1.0",
        runs=[
            make(
                so.Run,
                tool=make(so.Tool, driver=driver),
                invocations=[invocation],
                column_kind="unicodeCodePoints",
                original_uri_base_ids={SRCROOT: make(so.ArtifactLocation, uri=_dir_uri(root))},
                # One analysis per hardware target: uploads for trn1 and trn2
                # are separate categories in code scanning.
                automation_details=make(so.RunAutomationDetails, id=f"nkilint/{run.settings.target.name}/"),
                results=results,
                # issue 13: the target release and why (see _target_properties)
                properties=make(so.PropertyBag, _extra=_target_properties(run)),
            )
        ],
    )
    return to_json(log)


def _invocation(run: Run, notifications: list) -> so.Invocation:
    """invocations[0]: the command line, where and when it ran, and whether
    it succeeded (exit 2 is a failed run, 1 only means findings)."""
    info = run.invocation
    kw: dict = {"tool_execution_notifications": notifications or None}
    if info is None:
        return make(so.Invocation, execution_successful=not run.crashed, **kw)
    return make(
        so.Invocation,
        execution_successful=info.successful and not run.crashed,
        command_line=info.command_line,
        arguments=list(info.arguments),
        working_directory=make(so.ArtifactLocation, uri=_dir_uri(info.working_directory)),
        start_time_utc=utc_text(info.start),
        end_time_utc=utc_text(info.end) if info.end else None,
        exit_code=info.exit_code,
        **kw,
    )


def _target_properties(run: Run) -> dict:
    """run.properties: the target SDK release, its NKI version and why, the
    rule selection and the command line."""
    settings = run.settings
    props = {
        "nkilint.sdk": settings.release.minor,
        "nkilint.release": settings.release.label,
        "nkilint.nkiVersion": str(settings.nki_version),
        "nkilint.hardwareTarget": settings.target.name,
        "nkilint.targetOrigin": settings.target_origin.to_json(),
        "nkilint.selection": {
            "select": list(settings.select) if settings.select is not None else None,
            "extendSelect": list(settings.extend_select),
            "ignore": list(settings.ignore),
            "enabled": sorted(run.enabled),
        },
        "nkilint.projectRoot": _dir_uri(settings.root),
    }
    if run.invocation is not None:
        props["nkilint.commandLine"] = run.invocation.command_line
    return props


def _dir_uri(root: Path) -> str:
    uri = root.resolve().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def render_sarif(run: Run, include_suppressed: bool = False) -> str:
    """The SARIF log as text, within GitHub's upload limits: when it would
    be over MAX_GZIP_BYTES compressed, the least severe results are left out
    (with a notification) until it fits."""
    text = json.dumps(build_sarif(run, include_suppressed), indent=2) + "\n"
    limit = MAX_RESULTS
    for _ in range(8):
        if len(text.encode()) <= MAX_GZIP_BYTES:
            return text  # compression only shrinks it
        size = len(gzip.compress(text.encode(), compresslevel=6))
        if size <= MAX_GZIP_BYTES:
            return text
        count = len(build_sarif(run, include_suppressed, limit)["runs"][0]["results"])
        limit = max(0, int(count * MAX_GZIP_BYTES / size * 0.9))
        note = (f"the log would be {size / 1e6:.1f} MB gzip-compressed, over the {MAX_GZIP_BYTES / 1e6:g} MB "
                "code scanning accepts")
        text = json.dumps(build_sarif(run, include_suppressed, limit, note), indent=2) + "\n"
    return text
