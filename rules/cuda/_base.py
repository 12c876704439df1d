"""What the cuda family's rules share: the two rule shapes, where a finding
goes (spans for loop headers and ``def`` lines) and the references.

A *GPU-name rule* reports the ``GpuNames`` hits of some categories in
device code. A *spot rule* yields ``Spot`` candidates from its own
detector; ``SpotRule.check`` reports them (graph sites through
``Reporter.at_site``, which maps a helper's site to the call in this file).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import ClassVar, Iterable

from nkilint.context import RuleContext
from nkilint.findings import Level, Span
from nkilint.model.bindings import Gen
from nkilint.model.device import DeviceCode
from nkilint.model.graph import Site
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule

from .._common import Reporter
from ._hits import GpuNames, NameHit

_DOCS = "aws-neuron-sdk "
ARCH = _DOCS + "nki/guides/architecture/trainium2_arch.rst (engines, SBUF, PSUM)"
LANG_GUIDE = _DOCS + "nki/get-started/nki-language-guide.rst (specialization: loops unrolled, calls inlined)"
TILING = _DOCS + "nki/get-started/about/tiling-overview.rst (128-partition tiles)"
LNC = _DOCS + "nki/get-started/about/lnc.rst (program_id / num_programs under LNC)"
MIGRATION = _DOCS + "nki/migration/index.rst (arange, mask and SPMD grid changes)"
CUSTOM_OP = _DOCS + "nki/guides/framework_custom_op.rst (calling a kernel from PyTorch / JAX)"


@dataclass
class Spot:
    """A candidate finding: where, what, and at which level."""

    where: ast.AST | Span | Site | None
    message: str
    level: Level | None = None
    kernel: str | None = None
    hint: str | None = None


class GpuNameRule(Rule):
    """Reports GPU names of some categories found in device code."""

    categories: ClassVar[tuple[str, ...]] = ()
    noun: ClassVar[str] = "construct"
    fix_hint: ClassVar[str] = ""
    requires = (Scopes, DeviceCode, GpuNames)

    def message(self, hit: NameHit) -> str:
        fn = hit.function.name if hit.function is not None else "?"
        pasted = " (pasted CUDA C, not imported)" if hit.bare else ""
        return (
            f"{hit.gpu.shown} is a {hit.gpu.origin} {self.noun}{pasted} left in NKI kernel code ({fn}); "
            f"{hit.gpu.replacement}"
        )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for hit in ctx.analysis(GpuNames).hits_of(*self.categories):
            reporter.at(
                hit.node,
                self.message(hit),
                hint=self.fix_hint,
                level=self.level,
                kernel=hit.function.name if hit.function is not None else None,
            )


class SpotRule(Rule):
    """A rule whose detector (``spots``) yields ``Spot`` candidates."""

    fix_hint: ClassVar[str] = ""
    requires = (Scopes, DeviceCode)

    def spots(self, ctx: RuleContext) -> Iterable[Spot]:  # pragma: no cover - interface
        raise NotImplementedError

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for spot in self.spots(ctx):
            kwargs = dict(hint=spot.hint or self.fix_hint, level=spot.level if spot.level is not None else self.level,
                          kernel=spot.kernel)
            if isinstance(spot.where, Site):
                reporter.at_site(spot.where, spot.message, **kwargs)
            elif spot.where is not None:
                reporter.at(spot.where, spot.message, **kwargs)


# ------------------------------------------------------------------ names and places
def nki_name(ctx: RuleContext, expr: ast.AST) -> str | None:
    """The canonical NKI name an expression resolves to (either generation)."""
    qual = ctx.model.bindings.resolve_nki(expr)
    return qual.name if qual is not None else None


def other_name(ctx: RuleContext, expr: ast.AST) -> str | None:
    """The canonical dotted name of a non-NKI import an expression resolves to."""
    qual = ctx.model.bindings.resolve(expr)
    return qual.name if qual is not None and qual.gen is Gen.OTHER else None


def kernel_fn_names(ctx: RuleContext, roots_only: bool = False) -> set[str]:
    return {k.node.name for k in ctx.model.kernels if not roots_only or k.kind == "root"}


def word_in(name: str | None, text: str | None) -> bool:
    """``name`` occurs in ``text`` as a whole identifier (not an attribute)."""
    if not name or not text:
        return False
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", text) is not None


def header_span(ctx: RuleContext, stmt: ast.AST, upto: ast.AST | None = None) -> Span:
    """A one-line span from the start of stmt to the end of ``upto`` (or of the line)."""
    line = stmt.lineno
    start = ctx.source.byte_col_to_char(line, stmt.col_offset) + 1
    if upto is not None and getattr(upto, "end_lineno", None) == line:
        end = ctx.source.byte_col_to_char(line, upto.end_col_offset) + 1
    else:
        end = len(ctx.source.line_text(line)) + 1
    return Span(line, start, line, max(end, start + 1))


def def_span(ctx: RuleContext, fn: ast.FunctionDef) -> Span:
    """The ``def name`` of a function (not its whole body)."""
    line = fn.lineno
    text = ctx.source.line_text(line)
    col = text.find("def ")
    start = col + 1 if col >= 0 else 1
    end = start + 4 + len(fn.name) if col >= 0 else len(text) + 1
    return Span(line, start, line, end)


def loop_header(ctx: RuleContext, site: Site | None) -> ast.AST | Span | Site | None:
    """Where to report a loop node: its header line in this file, else the site."""
    if site is None:
        return None
    node = site.node
    if ctx.model.in_this_file(site) and isinstance(node, (ast.For, ast.While)):
        return header_span(ctx, node, node.iter if isinstance(node, ast.For) else node.test)
    return site


def shape_arg(call: ast.Call) -> ast.AST | None:
    """The shape argument of an allocation call (first positional or ``shape=``)."""
    if call.args:
        return call.args[0]
    for kw in call.keywords:
        if kw.arg == "shape":
            return kw.value
    return None
