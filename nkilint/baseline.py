"""Baselines: adopt nkilint on a repository that already has findings.

``--write-baseline FILE`` records every current finding; a later run with
``--baseline FILE`` fails only on findings that are not in it. A finding is
matched by rule, path (relative to the project root, so the working
directory does not matter) and a fingerprint of what it is about: the
reported line's code with whitespace removed, the reported text inside
that line, and the message with line numbers blanked. Line numbers
themselves are not part of the key, so code added above a baselined finding
does not make it new; editing the reported line does. Identical keys are
counted, so a second copy of a baselined mistake is a new finding.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from .findings import Finding

FORMAT_VERSION = 1
# Line references inside messages ("defined at line 12", "helpers.py:40")
# move with unrelated edits.
_LINE_REF = re.compile(r"(\bline\s+|:)\d+")
_SPACE = re.compile(r"\s+")


class BaselineError(Exception):
    """The baseline file cannot be read (exit 2)."""


def fingerprint(finding: Finding, line_text: str | None) -> str:
    """A short, line-number-free hash of what the finding is about."""
    line = line_text or ""
    span = finding.span
    if span.end_line == span.start_line:
        snippet = line[span.start_col - 1 : span.end_col - 1]
    else:
        snippet = line[span.start_col - 1 :]
    message = _LINE_REF.sub(r"\g<1>#", finding.message)
    key = "\0".join((finding.rule_id, _SPACE.sub("", line), _SPACE.sub("", snippet), message))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


@dataclass
class Baseline:
    counts: Counter  # (rule, path, fingerprint) -> how many findings
    path: Path

    @property
    def size(self) -> int:
        return sum(self.counts.values())


def entries(findings_with_lines: list[tuple[Finding, str | None]]) -> list[dict]:
    """Baseline entries, sorted so that the file diffs well."""
    out = [
        {
            "rule": f.rule_id,
            "path": f.path,
            "fingerprint": fingerprint(f, line),
            # For the reader only; matching ignores them.
            "line": f.span.start_line,
            "message": f.message,
        }
        for f, line in findings_with_lines
    ]
    out.sort(key=lambda e: (e["path"], e["line"], e["rule"], e["fingerprint"]))
    return out


def render(findings_with_lines: list[tuple[Finding, str | None]]) -> str:
    doc = {
        "nkilint-baseline": FORMAT_VERSION,
        "comment": "Findings accepted when nkilint was adopted; `nkilint check --baseline FILE` fails only on others. "
        "Regenerate with --write-baseline.",
        "findings": entries(findings_with_lines),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def load(path: Path) -> Baseline:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"baseline {path} does not exist; create it with --write-baseline {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"baseline {path} is not valid JSON ({exc}); regenerate it with --write-baseline") from None
    if not isinstance(doc, dict) or doc.get("nkilint-baseline") != FORMAT_VERSION or not isinstance(doc.get("findings"), list):
        raise BaselineError(
            f"{path} is not an nkilint baseline (version {FORMAT_VERSION}); regenerate it with --write-baseline"
        )
    counts: Counter = Counter()
    for index, entry in enumerate(doc["findings"]):
        try:
            counts[(str(entry["rule"]), str(entry["path"]), str(entry["fingerprint"]))] += 1
        except (KeyError, TypeError):
            raise BaselineError(f"{path}: entry {index} lacks rule, path or fingerprint") from None
    return Baseline(counts, path)


def apply(findings_with_lines: list[tuple[Finding, str | None]], baseline: Baseline) -> tuple[list[Finding], int]:
    """The findings with those in the baseline marked ``baselined`` (and
    suppressed), and how many baseline entries matched nothing (fixed
    since, or their line changed)."""
    left = Counter(baseline.counts)
    out = []
    for f, line in findings_with_lines:
        if f.suppressed:
            out.append(f)
            continue
        key = (f.rule_id, f.path, fingerprint(f, line))
        if left[key] > 0:
            left[key] -= 1
            out.append(replace(f, suppressed=True, baselined=True))
        else:
            out.append(f)
    return out, sum(v for v in left.values() if v > 0)
