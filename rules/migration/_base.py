"""The shape of a migration rule, and the words the family's messages share.

A migration rule implements ``detect(index)``: the issues it finds over the
file's name-use index (``_index.NameIndex``). The base class reports them.
Each rule's issues are a per-file analysis of their own (``Rule.Found``),
so NKI601, which counts what the other rules ask to port, reads them without
running any detection twice.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from nkilint.context import RuleContext
from nkilint.findings import Edit, Fix, Level, Span
from nkilint.model.analysis import Analysis
from nkilint.model.bindings import Gen, Qual
from nkilint.model.graph import Site
from nkilint.rule import Rule
from nkilint.versions import KNOWN_VERSIONS, NkiVersion

from .._common import reached_through
from ._index import NameIndex, applies


MIGRATION_GUIDE = "aws-neuron-sdk nki/migration/index.rst"
RELEASE_NOTES = "aws-neuron-sdk release-notes/components/nki.rst"
API_TABLE = "nkilint/data/nki_api.json (API stubs of Neuron SDK 2.20-2.34 and their change records)"


@dataclass
class Issue:
    where: ast.AST | Span
    level: Level
    message: str
    hint: str | None = None
    fix: Fix | None = None
    gen: Gen = Gen.CURRENT
    related: list | None = None  # (node, text) pairs shown with the finding
    helper: Site | None = None  # the construct, when it is in another file a call here reaches


class Issues:
    """The issues of one rule in one file, once per (span, message)."""

    def __init__(self, index: NameIndex) -> None:
        self.index = index
        self.items: list[Issue] = []
        self._seen: set[tuple] = set()

    def add(self, where: ast.AST | Span, level: Level, message: str, hint: str | None = None,
            fix: Fix | None = None, gen: Gen = Gen.CURRENT, related: list | None = None,
            helper: Site | None = None) -> None:
        span = where if isinstance(where, Span) else self.index.span(where)
        key = (span, message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.items.append(Issue(span, level, message, hint, fix, gen, related, helper))


class MigrationRule(Rule):
    """A migration rule: ``detect`` over the name-use index."""

    family = "migration"
    requires = (NameIndex,)
    Found: ClassVar[type[Analysis]]

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        rule = cls

        class Found(Analysis):
            """This rule's issues in the file."""

            def __init__(self, model) -> None:
                super().__init__(model)
                issues = Issues(model.analysis(NameIndex))
                rule.detect(issues.index, issues)
                self.items = issues.items

        Found.__qualname__ = f"{cls.__name__}.Found"
        cls.Found = Found

    @classmethod
    def detect(cls, index: NameIndex, out: Issues) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    @classmethod
    def issues(cls, ctx: RuleContext) -> list[Issue]:
        if not applies(ctx):
            return []
        return ctx.analysis(cls.Found).items

    def check(self, ctx: RuleContext) -> None:
        for issue in self.issues(ctx):
            message, related = issue.message, issue.related
            if issue.helper is not None:
                message, related = reached_through(ctx, issue.helper, message, related)
            ctx.report(issue.where, message, level=issue.level, hint=issue.hint, fix=issue.fix, related=related)


# -- words ------------------------------------------------------------------
def show(index: NameIndex, node: ast.AST, qual: Qual) -> str:
    text = index.text(node)
    if qual.gen is Gen.LEGACY and qual.name.startswith("nki") and text not in (qual.name, "neuronxcc." + qual.name):
        return f"`{text}` (neuronxcc.{qual.name})"
    return f"`{text}`"


def short(name: str) -> str:
    for prefix, alias in (("nki.language.", "nl."), ("nki.isa.", "nisa."), ("nki.collectives.", "ncc.")):
        if name.startswith(prefix):
            return alias + name[len(prefix):]
    if name == "builtins.range":
        return "range"
    return name


def first_missing_version(earlier: tuple[NkiVersion, ...], version: NkiVersion) -> NkiVersion:
    order = list(KNOWN_VERSIONS)
    after = order.index(max(earlier)) + 1
    return order[min(after, order.index(version))]


def make_fix(description: str, edits: list[Edit], safe: bool) -> Fix:
    return Fix(description, tuple(edits), safe)


def keyword_name_span(index: NameIndex, kw: ast.keyword) -> Span:
    start = index.span(kw)
    return Span(start.start_line, start.start_col, start.start_line, start.start_col + len(kw.arg or ""))


def tuple_fix(index: NameIndex, node: ast.List) -> Fix | None:
    if node.lineno != node.end_lineno:
        return None
    items = [index.text(e) for e in node.elts]
    text = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return make_fix("use a tuple", [Edit(index.span(node), text)], False)


def legacy_items(issues: list[Issue]) -> Iterator[Issue]:
    return (i for i in issues if i.gen is Gen.LEGACY)
