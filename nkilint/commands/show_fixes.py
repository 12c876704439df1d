"""``--show-fixes``: which findings were fixed (with --fix), or which
have a fix (without), per file and rule, as ruff lists them."""

from __future__ import annotations

from collections import Counter

from ..run import Run


def fixable_snapshot(run: Run) -> Counter:
    """(path, rule) -> active findings that carry a fix, before fixing."""
    return Counter((f.path, f.rule_id) for f in run.active if f.fix is not None)


def fixes_listing(before: Counter, run: Run, applied: bool) -> str:
    if applied:
        # What disappeared: the fixable findings before minus those left.
        after = Counter((f.path, f.rule_id) for f in run.active if f.fix is not None)
        rows = before - after
        title = "Fixed"
    else:
        rows = before
        title = "Fixable (apply with --fix; unsafe ones need --unsafe-fixes)"
    total = sum(rows.values())
    if not total:
        return f"{title}: nothing.\n" if applied else ""
    names = {r.id: r.name for r in run.ruleset}
    out = [f"{title}: {total} finding{'s' if total != 1 else ''}:"]
    for path in sorted({p for p, _ in rows}):
        out.append(f"  {path}:")
        for (p, rule_id), count in sorted(rows.items()):
            if p == path:
                out.append(f"    {count} x {rule_id} ({names.get(rule_id, '')})")
    return "\n".join(out) + "\n"
