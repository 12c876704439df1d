"""NKI714 non-affine-mask: legacy: a mask= expression is not affine in the loop indices (or reads runtime data)."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from .._semantics_checks import _mask_problem, _symbolic_loop_vars
from .._semantics_facts import facts
from ._messages import ERRORS_DOC


class NonAffineMask(Rule):
    id = "NKI714"
    name = "non-affine-mask"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: a mask= expression is not affine in the loop indices (or reads runtime data)"
    explanation = f"""
A legacy `mask=` predicate is compiled into the instruction's access
pattern, so it must be an affine expression of static loop indices and
`nl.arange`/`nl.mgrid` indices: `a*i + b*j + c < bound`, combined with `&`,
`|` and `~`. Modulo, division, products of two indices, `min`/`max`, and
runtime values (tensor elements) are rejected with
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
        f = facts(ctx)
        if not f.model.legacy:
            return
        reporter = Reporter(ctx)
        for fn in f.device_functions():
            symbolic = _symbolic_loop_vars(f, fn)
            for node in f.own_nodes(fn):
                if not isinstance(node, ast.Call):
                    continue
                mask = next((kw.value for kw in node.keywords if kw.arg == "mask"), None)
                qual = f.bindings.resolve_nki(node.func)
                if mask is None or qual is None:
                    continue
                culprit = _mask_problem(f, fn, mask, symbolic)
                if culprit is None:
                    continue
                expr, why = culprit
                reporter.at(
                    mask,
                    f"mask `{f.span_text(mask)}` is not an affine expression of loop indices: `{f.span_text(expr)}` "
                    f"{why} (err_unsupported_expression_in_mask)",
                    hint="masks may only combine a*i + b*j + c comparisons with &, | and ~",
                )

