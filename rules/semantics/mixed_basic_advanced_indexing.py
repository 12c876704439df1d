"""NKI712 mixed-basic-advanced-indexing: legacy: one subscript mixes slices with nl.arange / nl.mgrid indices."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.exprs import short_text
from nkilint.model.values import IndexV, SliceV
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._graph import index_elements, subscript_views
from ._messages import ERRORS_DOC


class MixedBasicAdvancedIndexing(Rule):
    id = "NKI712"
    name = "mixed-basic-advanced-indexing"
    family = "semantics"
    level = Level.ERROR
    summary = "Legacy: one subscript mixes slices with nl.arange / nl.mgrid indices"
    explanation = f"""
Finds, in legacy kernels, one subscript that mixes slices with
`nl.arange` / `nl.mgrid` index expressions (`a[i, :]` with
`i = nl.arange(4)[:, None]`).

**Why on Trainium:** legacy NKI has two ways to index a tensor: *basic*
indexing with integers and slices (`a[0:128, 0:512]`) and *advanced*
indexing with index expressions from `nl.arange` / `nl.mgrid`
(`a[i_p, i_f]`). One subscript may use either, not both: mixing them is
rejected with `err_unsupported_mixing_basic_advanced_tensor_indexing`
({ERRORS_DOC}). (Integers may accompany index expressions: `a[i, 0]`.)

**Fix:** index every dimension the same way — all slices (`a[0:4, 0:4]`)
or all index expressions (`a[i, j]` with `j = nl.arange(4)[None, :]`).
"""
    references = (f"{ERRORS_DOC} (err_unsupported_mixing_basic_advanced_tensor_indexing)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.load(x)
                i = nl.arange(4)[:, None]
                c = nl.exp(a[i, :])
                nl.store(out, value=c)
                return out
            """,
            lines=[9],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((4, 4), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.load(x)
                i = nl.arange(4)[:, None]
                j = nl.arange(4)[None, :]
                c = nl.exp(a[i, j])
                d = nl.exp(a[0:4, 0:4])
                nl.store(out, value=nl.add(c, d))
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if not ctx.model.legacy:
            return
        reporter = Reporter(ctx)
        for kernel, graph, view_id, data, sub in subscript_views(ctx.model):
            items = data.get("index_v") or []
            if not any(isinstance(x, IndexV) for x in items) or not any(isinstance(x, SliceV) for x in items):
                continue
            # Confirm on the syntax: a literal slice next to an index element.
            if not any(isinstance(e, ast.Slice) for e in index_elements(sub)):
                continue
            reporter.at(
                sub,
                f"`{short_text(sub)}` mixes slices with nl.arange / nl.mgrid index expressions "
                f"(err_unsupported_mixing_basic_advanced_tensor_indexing)",
                hint="use slices for every dimension, or index expressions for every dimension",
                kernel=kernel.name,
            )

