"""The rule plugin API: what a rule declares and how it reports.

A rule is a class::

    class PsumTileTooLarge(Rule):
        id = "NKI201"
        name = "psum-tile-exceeds-bank"
        family = "memory"
        level = Level.ERROR
        summary = "A PSUM tile is larger than one PSUM bank per partition"
        explanation = '''markdown: what, why on Trainium, how to fix'''
        examples = (invalid('''...''', lines=[4]), valid('''...'''))

        def check(self, ctx: RuleContext) -> None:
            for tensor in ctx.model.psum_tensors():
                ...
                ctx.report(tensor.node, "message", hint="how to fix")

Packs expose their rules through the entry-point group ``nkilint.rules``;
the built-in pack is registered the same way (see pyproject.toml).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from .findings import Level

if TYPE_CHECKING:  # pragma: no cover
    from .context import RuleContext


# The project URL of pyproject.toml ([project.urls] Homepage).
PROJECT_URL = "https://github.com/nkilint/nkilint"


@dataclass(frozen=True)
class Family:
    name: str
    prefix: str  # id prefix of built-in rules, e.g. "NKI2"
    description: str


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("tool", "NKI0", "syntax errors, unreadable files, rule crashes, unused suppressions"),
        Family("partition", "NKI1", "partition size, leading partition dim, operand partition mismatch, matmul/transpose tile limits"),
        Family("memory", "NKI2", "PSUM and SBUF capacity, operand in the wrong memory, placement"),
        Family("pipeline", "NKI3", "missing double-buffering, serialized loops, inefficient DMA"),
        Family("cuda", "NKI4", "CUDA and Triton idioms left unported"),
        Family("numerics", "NKI5", "numerical hazards that make Trainium results differ from the GPU's"),
        Family("migration", "NKI6", "APIs the target NKI version deprecated, removed or changed"),
        Family("semantics", "NKI7", "other errors the Neuron compiler frontend raises"),
    )
}

RULE_ID_RE = re.compile(r"^[A-Z]{2,8}[0-9]{3,4}$")
RULE_NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def _clean(code: str) -> str:
    """Dedent an example written inside a class body; drop the first newline."""
    code = textwrap.dedent(code)
    if code.startswith("\n"):
        code = code[1:]
    return code


@dataclass(frozen=True)
class Example:
    """Source that a rule must (invalid) or must not (valid) report.

    ``lines``: the 1-based lines the rule must report, exactly (for a valid
    example, none). ``fixed``: for fixable rules, the source after applying
    fixes. ``files``: extra project files (relative path -> source) for
    examples that need several modules.
    """

    code: str
    lines: tuple[int, ...] = ()
    title: str = ""
    nki_version: str | None = None
    target: str | None = None
    filename: str = "kernel.py"
    sdk: str | None = None  # a Neuron SDK release ("2.24") as target, for release-dependent levels
    fixed: str | None = None
    unsafe_fixes: bool = False
    files: tuple[tuple[str, str], ...] = ()
    level: Level | None = None  # expected level of every reported finding
    # Extra (unregistered) rule classes to run with this example, e.g. to
    # demonstrate how the engine reports a crashing rule.
    with_rules: tuple[type, ...] = ()

    @property
    def is_valid(self) -> bool:
        return not self.lines


def invalid(code: str, lines: list[int] | tuple[int, ...], **kwargs) -> Example:
    """An example the rule must report on exactly ``lines``."""
    if not lines:
        raise ValueError("an invalid example must name the line(s) to report")
    files = kwargs.pop("files", None) or {}
    fixed = kwargs.pop("fixed", None)
    return Example(
        code=_clean(code),
        lines=tuple(lines),
        fixed=_clean(fixed) if fixed is not None else None,
        files=tuple((k, _clean(v)) for k, v in dict(files).items()),
        **kwargs,
    )


def valid(code: str, **kwargs) -> Example:
    """An example the rule must not report."""
    files = kwargs.pop("files", None) or {}
    return Example(code=_clean(code), files=tuple((k, _clean(v)) for k, v in dict(files).items()), **kwargs)


class Rule:
    """Base class of every rule. Subclasses set the class attributes and
    implement ``check``; the engine creates one instance per run."""

    id: ClassVar[str] = ""
    name: ClassVar[str] = ""
    family: ClassVar[str] = ""
    level: ClassVar[Level] = Level.WARNING
    summary: ClassVar[str] = ""
    explanation: ClassVar[str] = ""
    examples: ClassVar[tuple[Example, ...]] = ()
    fixable: ClassVar[bool] = False
    # The fix rewrites code for the target release (a migration): --fix
    # withholds it when no release is named (nkilint.fix_gates).
    fix_follows_target: ClassVar[bool] = False
    default_enabled: ClassVar[bool] = True
    # SARIF precision: very-high, high, medium, low.
    precision: ClassVar[str] = "high"
    # Rules that also run when the file could not be decoded or parsed.
    runs_on_broken_files: ClassVar[bool] = False
    # Rules whose findings the engine itself produces (crash, unused noqa).
    emitted_by_engine: ClassVar[bool] = False
    # Documentation sources the rule rests on (shown by `nkilint rule`).
    references: ClassVar[tuple[str, ...]] = ()
    # The per-file analyses (nkilint.model.analysis.Analysis subclasses) the
    # rule reads through ctx.analysis(...): documentation of what it needs.
    requires: ClassVar[tuple[type, ...]] = ()

    def check(self, ctx: "RuleContext") -> None:  # pragma: no cover - interface
        raise NotImplementedError

    @classmethod
    def help_uri(cls) -> str:
        """The rule's section of docs/rules.md at this version's tag (the
        text that matches the installed rule; CHANGELOG.md defines the tags)."""
        from . import __version__

        return f"{PROJECT_URL}/blob/v{__version__}/docs/rules.md#{cls.id.lower()}-{cls.name}"

    @classmethod
    def describe(cls) -> str:
        return f"{cls.id} {cls.name}"


class RuleDefinitionError(Exception):
    """A rule class that does not satisfy the plugin API."""


def validate_rule_class(rule: type) -> list[str]:
    """Problems with a rule class's declaration (empty if it is fine)."""
    problems: list[str] = []
    label = getattr(rule, "__qualname__", repr(rule))
    if not isinstance(rule, type) or not issubclass(rule, Rule):
        return [f"{label} is not a subclass of nkilint.rule.Rule"]
    if not RULE_ID_RE.match(rule.id or ""):
        problems.append(f"{label}: id {rule.id!r} must look like NKI201 (2-8 capitals and 3-4 digits)")
    if not RULE_NAME_RE.match(rule.name or ""):
        problems.append(f"{label}: name {rule.name!r} must be a lower-case slug such as psum-tile-too-large")
    if rule.family not in FAMILIES:
        problems.append(f"{label}: family {rule.family!r} is not one of {', '.join(FAMILIES)}")
    elif rule.id.startswith("NKI") and not rule.id.startswith(FAMILIES[rule.family].prefix):
        problems.append(
            f"{label}: id {rule.id} is outside the {rule.family} family's range {FAMILIES[rule.family].prefix}xx"
        )
    if not isinstance(rule.level, Level):
        problems.append(f"{label}: level must be a nkilint.findings.Level")
    if not rule.summary:
        problems.append(f"{label}: summary is empty")
    if not rule.explanation:
        problems.append(f"{label}: explanation is empty")
    if rule.precision not in ("very-high", "high", "medium", "low"):
        problems.append(f"{label}: precision {rule.precision!r} must be very-high, high, medium or low")
    return problems


@dataclass
class RuleSet:
    """The installed rules, by id, with lookup by name."""

    rules: dict[str, type[Rule]] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)  # id -> entry point

    def add(self, rule: type[Rule], origin: str) -> None:
        problems = validate_rule_class(rule)
        if problems:
            raise RuleDefinitionError(f"rule pack {origin}: " + "; ".join(problems))
        if rule.id in self.rules and self.rules[rule.id] is not rule:
            raise RuleDefinitionError(
                f"rule id {rule.id} is defined twice: by {self.origins[rule.id]} and by {origin}"
            )
        for other in self.rules.values():
            if other.name == rule.name and other is not rule:
                raise RuleDefinitionError(
                    f"rule name {rule.name} is used by both {other.id} and {rule.id} ({origin})"
                )
        self.rules[rule.id] = rule
        self.origins[rule.id] = origin

    def get(self, key: str) -> type[Rule] | None:
        """A rule by id (case-insensitive) or slug name."""
        if key.upper() in self.rules:
            return self.rules[key.upper()]
        for rule in self.rules.values():
            if rule.name == key.lower():
                return rule
        return None

    def sorted(self) -> list[type[Rule]]:
        return [self.rules[k] for k in sorted(self.rules)]

    def __iter__(self):
        return iter(self.sorted())

    def __len__(self) -> int:
        return len(self.rules)
