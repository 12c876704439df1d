"""NKI717 assign-to-index-tensor: legacy: item assignment into an nl.arange / nl.mgrid index (or mask) expression."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import ExprFacts, short_text
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import ERRORS_DOC


class AssignToIndexTensor(Rule):
    id = "NKI717"
    name = "assign-to-index-tensor"
    family = "semantics"
    level = Level.ERROR
    requires = (DeviceCode, Scopes, ExprFacts)
    summary = "Legacy: item assignment into an nl.arange / nl.mgrid index (or mask) expression"
    explanation = f"""
Finds, in legacy kernels, item assignment into an `nl.arange` / `nl.mgrid`
index (or mask) expression (`x[0, 5] = 1024`).

**Why on Trainium:** `nl.arange` / `nl.mgrid` values are index (or mask)
expressions, not tiles: they have no storage, and item assignment on one
is rejected with `err_cannot_assign_to_index` ("'index' tensor does not
support item assignment", {ERRORS_DOC}).

**Fix:** materialize the index as a tile first with
`nisa.iota(x, dtype=nl.uint32)`, then assign into the tile.
"""
    references = (f"{ERRORS_DOC} (err_cannot_assign_to_index)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def patched_iota():
                out = nl.ndarray((1, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
                _, x = nl.mgrid[0:1, 0:8]
                x[0, 5] = 1024
                nl.store(out, value=x)
                return out
            """,
            lines=[8],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def patched_iota():
                out = nl.ndarray((1, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
                _, x = nl.mgrid[0:1, 0:8]
                y = nisa.iota(x, dtype=nl.uint32)
                y[0, 5] = 1024
                nl.store(out, value=y)
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
            for node in scopes.own_nodes(fn):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                    node, (ast.AugAssign, ast.AnnAssign)) else []
                for t in targets:
                    if not isinstance(t, ast.Subscript):
                        continue
                    base = t.value
                    while isinstance(base, ast.Subscript):
                        base = base.value
                    if isinstance(base, ast.Name) and exprs.is_index_name(fn, base.id):
                        origin = exprs.index_origin(fn, base.id) or "index"
                        reporter.at(
                            t,
                            f"`{base.id}` is an nl.{origin} index expression, which has no storage: item assignment "
                            f"`{short_text(t)} = ...` is not supported (err_cannot_assign_to_index)",
                            hint=f"materialize it first: `t = nisa.iota({base.id}, dtype=nl.uint32)`, then assign to t",
                        )

