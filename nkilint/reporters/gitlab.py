"""GitLab Code Quality report (``artifacts: reports: codequality``).

A JSON array with one object per active finding: ``description``,
``check_name`` (the rule id), ``fingerprint``, ``severity`` and
``location: {path, lines: {begin}}``. GitLab matches the issues of the
merge request's head and base pipelines by fingerprint, so it must stay the
same while unrelated code moves: it hashes the rule, the path and the
baseline's line-number-free key (the reported line's code, the reported text
and the message with line references blanked, see ``nkilint.baseline``);
identical keys are numbered so every issue of a report has its own
fingerprint. Severities: error -> ``critical`` (the target release rejects
the kernel), warning -> ``minor``, note -> ``info``; GitLab's ``blocker``
and ``major`` are not used.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..baseline import fingerprint as line_free_key
from ..findings import Finding, Level
from ..run import Run

SEVERITY = {Level.ERROR: "critical", Level.WARNING: "minor", Level.NOTE: "info"}


def gitlab_issue(f: Finding, run: Run, fingerprint: str) -> dict[str, Any]:
    rule = run.ruleset.rules.get(f.rule_id)
    name = f" ({rule.name})" if rule else ""
    description = f"{f.rule_id}{name}: {f.message}" + (f" Hint: {f.hint}" if f.hint else "")
    return {
        "description": description,
        "check_name": f.rule_id,
        "fingerprint": fingerprint,
        "severity": SEVERITY[f.level],
        "location": {"path": f.path, "lines": {"begin": f.span.start_line}},
    }


def fingerprints(findings: list[Finding], run: Run) -> list[str]:
    """One fingerprint per finding, in order, all distinct."""
    lines = {r.path: r.lines for r in run.files}
    seen: dict[str, int] = {}
    out = []
    for f in findings:
        line = lines.get(f.path, {}).get(f.span.start_line)
        key = "\0".join((f.rule_id, f.path, line_free_key(f, line)))
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        seen[digest] = seen.get(digest, 0) + 1
        if seen[digest] > 1:  # the n-th identical finding of the file
            digest = hashlib.sha256(f"{key}\0{seen[digest]}".encode("utf-8")).hexdigest()[:32]
        out.append(digest)
    return out


def render_gitlab(run: Run) -> str:
    active = run.active
    issues = [gitlab_issue(f, run, fp) for f, fp in zip(active, fingerprints(active, run))]
    return json.dumps(issues, indent=2) + "\n"
