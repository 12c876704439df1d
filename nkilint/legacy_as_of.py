"""Legacy files at a release that no longer imports them.

From SDK 2.34 ``neuronxcc.nki`` no longer imports (release fact
``legacy-namespace-import``). A file written for it fails at its import,
which the migration family reports (NKI601, once per import, with the
fix). Reporting the rest of the file against 2.34 would judge legacy code
by rules it was never written for; the rest of the file is checked as of
the last release that imported it, and each such finding says so, so a
team that ports later knows what the kernel still had wrong.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .findings import Finding
from .releases import ERROR, FACTS, Release

if TYPE_CHECKING:
    from .context import RuleContext

LEGACY_IMPORT_FACT = "legacy-namespace-import"
# The family that judges the file against the real target (the imports).
TARGET_FAMILY = "migration"


def legacy_as_of(ctx: "RuleContext") -> Release | None:
    """The release to check a legacy-only file at, when the target rejects
    its imports; None when the target still imports it (or the file is not
    legacy-only)."""
    from .model.bindings import Dialect

    if ctx.source is None or ctx.release is None:
        return None
    if FACTS.status(LEGACY_IMPORT_FACT, ctx.release).status is not ERROR:
        return None
    if ctx.bindings.dialect is not Dialect.LEGACY:
        return None
    return FACTS.last_release_accepting(LEGACY_IMPORT_FACT)


def as_of_context(ctx: "RuleContext", release: Release) -> "RuleContext":
    """A context like ``ctx`` at ``release`` (its own model)."""
    from .context import RuleContext

    settings = ctx.settings.merged(release=release)
    return RuleContext(ctx.source, settings, ctx.target, release.nki, ctx.project, None, ctx.display_path,
                       release=release)


def mark_as_of(findings: list[Finding], release: Release, target: Release, rule_id: str) -> list[Finding]:
    """Findings of ``rule_id`` on the rest of a legacy file, saying at which
    release (a crash report of the rule, NKI003, is about nkilint: as is)."""
    note = (f" (checked as of SDK {release.minor}, the last release that imports neuronxcc.nki; "
            f"SDK {target.minor} rejects the file's imports: NKI601)")
    return [replace(f, message=f.message + note) if f.rule_id == rule_id else f for f in findings]
