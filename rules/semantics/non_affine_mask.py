"""NKI714 non-affine-mask: legacy: a mask= expression is not affine in the loop indices (or reads runtime data)."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import ExprFacts, short_text
from nkilint.model.indexing import NONAFFINE, RUNTIME, IndexArithmetic
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._blocks import symbolic_loop_vars
from ._messages import ERRORS_DOC


class NonAffineMask(Rule):
    id = "NKI714"
    name = "non-affine-mask"
    family = "semantics"
    level = Level.ERROR
    requires = (DeviceCode, Scopes, ExprFacts, IndexArithmetic)
    summary = "Legacy: a mask= expression is not affine in the loop indices (or reads runtime data)"
    explanation = f"""
Finds, in legacy kernels, a `mask=` predicate that is not an affine
expression of the loop indices: modulo, division, products of two indices,
`min`/`max`, or runtime values (tensor elements).

**Why on Trainium:** a legacy `mask=` predicate is compiled into the
instruction's access pattern, so it must be an affine expression of static
loop indices and `nl.arange`/`nl.mgrid` indices: `a*i + b*j + c < bound`,
combined with `&`, `|` and `~`. Anything else is rejected with
`err_unsupported_expression_in_mask` ({ERRORS_DOC}).

**Fix:** rewrite the condition affinely (split the loop so that `i % 4 < 2`
becomes a loop over the first two of every four iterations), or move a
data-dependent condition into the computation (`nl.where`, `nisa.select`).
"""
    references = (f"{ERRORS_DOC} (err_unsupported_expression_in_mask)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def half(x):
                out = nl.ndarray((8, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(8):
                    t = nl.load(x[i])
                    nl.store(out[i], value=t, mask=(i % 4) < 2)
                return out
            """,
            lines=[9],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def half(x):
                out = nl.ndarray((8, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:512]
                for i in nl.affine_range(8):
                    for j in nl.affine_range(8):
                        t = nl.load(x[i, i_p, i_f])
                        nl.store(out[i, i_p, i_f], value=t, mask=((2 * i + 3 * j + 1) < 20) & (i_f < x.shape[2] // 2))
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if not ctx.model.legacy:
            return
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        for fn in ctx.analysis(DeviceCode).functions:
            symbolic = symbolic_loop_vars(scopes, exprs, fn)
            for node in scopes.own_nodes(fn):
                if not isinstance(node, ast.Call):
                    continue
                mask = next((kw.value for kw in node.keywords if kw.arg == "mask"), None)
                qual = ctx.model.bindings.resolve_nki(node.func)
                if mask is None or qual is None:
                    continue
                culprit = _mask_problem(ctx, fn, mask, symbolic)
                if culprit is None:
                    continue
                expr, why = culprit
                reporter.at(
                    mask,
                    f"mask `{short_text(mask)}` is not an affine expression of loop indices: `{short_text(expr)}` "
                    f"{why} (err_unsupported_expression_in_mask)",
                    hint="masks may only combine a*i + b*j + c comparisons with &, | and ~",
                )


def _mask_problem(ctx: RuleContext, fn: ast.AST, mask: ast.AST, symbolic: set[str]) -> tuple[ast.AST, str] | None:
    """The first non-affine or runtime part of a mask, with the reason: a
    mask is comparisons combined with & | ^ ~, or a name bound once to one."""
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _mask_problem(ctx, fn, mask.left, symbolic) or _mask_problem(ctx, fn, mask.right, symbolic)
    if isinstance(mask, ast.UnaryOp) and isinstance(mask.op, ast.Invert):
        return _mask_problem(ctx, fn, mask.operand, symbolic)
    if isinstance(mask, ast.Compare):
        arithmetic = ctx.analysis(IndexArithmetic)
        for operand in [mask.left, *mask.comparators]:
            kind, culprit = arithmetic.affinity(fn, operand, symbolic)
            if kind == NONAFFINE:
                return culprit, "is not affine"
            if kind == RUNTIME:
                return culprit, "reads runtime data"
        return None
    if isinstance(mask, ast.Name):
        owner = ctx.analysis(Scopes).of(fn).owner(mask.id)
        binds = owner.bindings.get(mask.id, []) if owner is not None else []
        if len(binds) == 1 and binds[0].value is not None and not isinstance(binds[0].value, ast.Name):
            return _mask_problem(ctx, owner.fn, binds[0].value, symbolic)
    return None

