"""``--statistics``: how many findings each rule has, at which level and
how many a fix can repair, as a table (text) or a JSON list; as ruff does
it, the table replaces the list of findings."""

from __future__ import annotations

import json
from collections import Counter

from ..run import Run


def statistics_rows(run: Run) -> list[dict]:
    """One row per rule and level of its findings (a rule whose findings
    are errors here and warnings there has two rows), most frequent first."""
    counts: Counter = Counter()
    fixable: Counter = Counter()
    for f in run.active:
        key = (f.rule_id, f.level)
        counts[key] += 1
        if f.fix is not None:
            fixable[key] += 1
    rows = []
    for (rule_id, level), count in counts.items():
        rule = run.ruleset.rules.get(rule_id)
        rows.append({
            "code": rule_id,
            "name": rule.name if rule else None,
            "level": level.label,
            "count": count,
            "fixable": fixable[(rule_id, level)],
        })
    rows.sort(key=lambda r: (-r["count"], r["code"], r["level"]))
    return rows


def render_statistics_text(run: Run) -> str:
    rows = statistics_rows(run)
    lines = []
    for r in rows:
        mark = "[*]" if r["fixable"] == r["count"] else "[-]" if r["fixable"] else "   "
        lines.append(f"{r['count']:>6}  {r['code']:<7} {mark} {r['name'] or '':<40} {r['level']}")
    if any(r["fixable"] for r in rows):
        total = sum(r["fixable"] for r in rows)
        lines.append(f"[*] {total} fixable with --fix ([-]: some of the rule's findings).")
    lines.append(run.summary())
    return "\n".join(lines) + "\n"


def render_statistics_json(run: Run) -> str:
    return json.dumps(statistics_rows(run), indent=2) + "\n"
