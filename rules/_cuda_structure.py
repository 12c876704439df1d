"""Names the numerics family still imports from the cuda family's former
helper module (the cuda family itself is the package ``rules/cuda``).
Delete this module once the numerics family is converted (issue 19)."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.model.bindings import Gen
from nkilint.model.graph import Site  # noqa: F401 - re-exported


def nki_name(ctx: RuleContext, expr: ast.AST) -> str | None:
    """The canonical NKI name an expression resolves to (either generation)."""
    qual = ctx.model.bindings.resolve_nki(expr)
    return qual.name if qual is not None else None


def other_name(ctx: RuleContext, expr: ast.AST) -> str | None:
    """The canonical dotted name of a non-NKI import an expression resolves to."""
    qual = ctx.model.bindings.resolve(expr)
    return qual.name if qual is not None and qual.gen is Gen.OTHER else None
