"""Machine output: every finding (suppressed ones included, flagged) as JSON.

Schema (stable; additions only):
``{"tool": "nkilint", "version", "target", "nki_version", "sdk",
"target_release": {"sdk", "nki_version", "kind", "reason", "file"?, "line"?,
"package"?, "requirement"?, "how"?, "other_pins"?}, "findings": [...],
"notifications": [...], "summary": {...}}``; each finding has ``rule``,
``name``, ``family``, ``level``, ``message``, ``path``, ``range`` (1-based
lines and columns in code points, end exclusive), ``hint``, ``fix`` (null
or ``{"description", "safe", "edits": [{"range", "replacement"}]}``),
``related`` (each ``{"path", "range", "message"}``), ``kernel``, ``suppressed``,
``baselined`` (suppressed because ``--baseline`` lists it), ``data``.
``kernel`` is the kernel the finding's code runs in: the kernel whose
definition holds it, or the kernel of the file that calls the helper it is
in; null at module level and in helpers no kernel of the file calls.
"""

from __future__ import annotations

import json
from typing import Any

from .. import __version__
from ..findings import Finding, Span
from ..run import Run


def span_json(span: Span) -> dict[str, Any]:
    return {
        "start": {"line": span.start_line, "column": span.start_col},
        "end": {"line": span.end_line, "column": span.end_col},
    }


def finding_json(f: Finding, run: Run) -> dict[str, Any]:
    rule = run.ruleset.rules.get(f.rule_id)
    return {
        "rule": f.rule_id,
        "name": rule.name if rule else None,
        "family": rule.family if rule else None,
        "level": f.level.label,
        "message": f.message,
        "path": f.path,
        "range": span_json(f.span),
        "hint": f.hint,
        "fix": None
        if f.fix is None
        else {
            "description": f.fix.description,
            "safe": f.fix.safe,
            "edits": [{"range": span_json(e.span), "replacement": e.replacement} for e in f.fix.edits],
        },
        "related": [{"path": r.path or f.path, "range": span_json(r.span), "message": r.message} for r in f.related],
        "kernel": f.kernel,
        "suppressed": f.suppressed,
        "baselined": f.baselined,
        "data": {k: v for k, v in f.data},
    }


def render_json(run: Run) -> str:
    findings = [finding_json(f, run) for f in run.findings]
    counts = run.counts()
    doc = {
        "tool": "nkilint",
        "version": __version__,
        "target": run.settings.target.name,
        "nki_version": str(run.settings.nki_version),
        "sdk": run.settings.release.minor,
        "target_release": {
            "sdk": run.settings.release.minor,
            "nki_version": str(run.settings.nki_version),
            **run.settings.target_origin.to_json(),
        },
        "findings": findings,
        "notifications": [
            {
                "level": n.level.label,
                "message": n.message,
                "path": n.path,
                "rule": n.rule_id,
                "range": span_json(n.span) if n.span else None,
            }
            for n in run.all_notifications
        ],
        "summary": {
            "files": len(run.files),
            "findings": len(run.active),
            "suppressed": len(run.findings) - len(run.active),
            "baselined": sum(1 for f in run.findings if f.baselined),
            "errors": counts.get(_lvl("error"), 0),
            "warnings": counts.get(_lvl("warning"), 0),
            "notes": counts.get(_lvl("note"), 0),
            "crashed": run.crashed,
        },
    }
    return json.dumps(doc, indent=2, default=str) + "\n"


def _lvl(name: str):
    from ..findings import Level

    return Level.parse(name)
