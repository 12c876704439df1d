"""One finished run: what reporters and the exit code are computed from."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .config import Settings
from .engine import FileResult, Notification
from .findings import Finding, Level
from .invocation import Invocation
from .rule import RuleSet


@dataclass
class Run:
    settings: Settings
    ruleset: RuleSet
    enabled: frozenset[str]
    files: list[FileResult] = field(default_factory=list)
    notifications: list[Notification] = field(default_factory=list)
    cwd: Path = field(default_factory=Path.cwd)
    fixes_applied: int = 0
    # How nkilint was run (command line, times, exit code) for SARIF; set
    # by the command just before reporting.
    invocation: Invocation | None = None

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.files for f in r.findings]

    @property
    def active(self) -> list[Finding]:
        """Findings that are not suppressed."""
        return [f for f in self.findings if not f.suppressed]

    @property
    def all_notifications(self) -> list[Notification]:
        return self.notifications + [n for r in self.files for n in r.notifications]

    @property
    def crashed(self) -> bool:
        return any(r.crashed for r in self.files)

    def lines_for(self, path: str) -> dict[int, str]:
        for r in self.files:
            if r.path == path:
                return r.lines
        return {}

    def fingerprint_for(self, finding: Finding) -> str | None:
        for r in self.files:
            if r.path == finding.path:
                return r.fingerprints.get(finding.span.start_line)
        return None

    def counts(self) -> Counter:
        return Counter(f.level for f in self.active)

    def exit_code(self, exit_zero: bool = False) -> int:
        if self.crashed:
            return 2
        if exit_zero:
            return 0
        fail = self.settings.fail_level
        return 1 if any(f.level >= fail for f in self.active) else 0

    def summary(self) -> str:
        active = self.active
        baselined = sum(1 for f in self.findings if f.baselined)
        suppressed = len(self.findings) - len(active) - baselined
        partial = sum(1 for r in self.files if r.timed_out)
        if not active and partial:
            text = (f"No findings, but {partial} file{'s were' if partial != 1 else ' was'} only partly checked: "
                    "the time limit per file ran out (NKI005).")
        elif not active:
            text = "All checks passed!" if self.files else "No Python files found."
        else:
            counts = self.counts()
            parts = []
            for level in (Level.ERROR, Level.WARNING, Level.NOTE):
                if counts[level]:
                    parts.append(f"{counts[level]} {level.label}{'s' if counts[level] != 1 else ''}")
            text = f"Found {len(active)} finding{'s' if len(active) != 1 else ''} ({', '.join(parts)})"
            text += f" in {len({f.path for f in active})} of {len(self.files)} file{'s' if len(self.files) != 1 else ''}."
        if suppressed:
            text += f" {suppressed} suppressed by '# noqa'."
        if baselined:
            text += f" {baselined} in the baseline."
        if self.fixes_applied:
            text += f" Fixed {self.fixes_applied}."
        return text
