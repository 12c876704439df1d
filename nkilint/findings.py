"""What a rule reports: levels, source spans, fixes and findings.

Everything here is a plain frozen dataclass so that a file's results can be
pickled (process pool, cache) and compared in tests.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace


class Level(enum.IntEnum):
    """Severity of a finding. Ordered: a higher value is more severe."""

    NOTE = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> "Level":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            valid = ", ".join(level.label for level in cls)
            raise ValueError(f"unknown level {text!r}; valid levels: {valid}") from None


@dataclass(frozen=True, order=True)
class Span:
    """A source range: 1-based lines, 1-based columns counted in Unicode code
    points, end column exclusive (the SARIF convention)."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    @classmethod
    def point(cls, line: int, col: int) -> "Span":
        return cls(line, col, line, col + 1)


@dataclass(frozen=True)
class Edit:
    """Replace the text inside ``span`` by ``replacement``."""

    span: Span
    replacement: str


@dataclass(frozen=True)
class Fix:
    """A set of non-overlapping edits that together repair one finding.

    ``safe`` fixes keep the program's meaning (pure renames, import rewrites);
    unsafe ones may change it subtly and are applied only with
    ``--unsafe-fixes``.
    """

    description: str
    edits: tuple[Edit, ...]
    safe: bool = True


@dataclass(frozen=True)
class Related:
    """Another place that explains a finding (e.g. tiles sharing PSUM)."""

    span: Span
    message: str
    # The file it is in, relative to the project root like Finding.path;
    # None: the finding's own file.
    path: str | None = None


@dataclass(frozen=True)
class Finding:
    rule_id: str
    level: Level
    message: str
    path: str
    span: Span
    hint: str | None = None
    fix: Fix | None = None
    related: tuple[Related, ...] = ()
    kernel: str | None = None
    suppressed: bool = False
    baselined: bool = False  # suppressed because --baseline lists it (not a noqa)
    # Data a reporter may show (e.g. numbers behind the message); JSON-safe.
    data: tuple[tuple[str, object], ...] = field(default=())

    def with_suppressed(self, suppressed: bool = True) -> "Finding":
        return replace(self, suppressed=suppressed)

    def sort_key(self) -> tuple:
        return (self.path, self.span.start_line, self.span.start_col, self.rule_id, self.message)
