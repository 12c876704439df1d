"""NKI710 tensor-shadowed-in-block: legacy: a block rebinds an outer tensor's name instead of updating it in place."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._blocks import LegacyBlockScopes
from ._messages import ERRORS_DOC


class TensorShadowedInBlock(Rule):
    id = "NKI710"
    name = "tensor-shadowed-in-block"
    family = "semantics"
    level = Level.WARNING
    requires = (LegacyBlockScopes,)
    summary = "Legacy: a block rebinds an outer tensor's name instead of updating it with t[...] ="
    explanation = f"""
Finds, in legacy kernels, an `if`/`else`/`for` block that rebinds the name
of an outer tensor to a new tensor (`data = data + t`) instead of updating
it (`data[...] = data + t`).

**Why on Trainium:** inside such a block, legacy NKI treats
`data = data + t` as a *new* tensor local to the block that shadows the
outer `data`; the outer tensor is not updated. The frontend warns
("shadowing local tensor ... with a new object, use 'data[...] =' if you
want to update the existing object", {ERRORS_DOC}, under
err_local_variable_used_out_of_scope), and reading `data` after the block
is then an error (NKI709).

**Fix:** update the existing tensor in place: `data[...] = data + t`.
"""
    references = (f"{ERRORS_DOC} (err_local_variable_used_out_of_scope, shadowing warning)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def accumulate(ptr):
                out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.zeros((128, 128), dtype=nl.float32)
                for i in nl.sequential_range(4):
                    i_tile = nisa.iota(i, dtype=nl.uint32).broadcast_to(data.shape)
                    data = data + i_tile
                    nl.store(out, value=data)
                return out
            """,
            lines=[11],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def accumulate(ptr):
                out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.zeros((128, 128), dtype=nl.float32)
                for i in nl.sequential_range(4):
                    i_tile = nisa.iota(i, dtype=nl.uint32).broadcast_to(data.shape)
                    data[...] = data + i_tile
                nl.store(out, value=data)
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if not ctx.model.legacy:
            return
        reporter = Reporter(ctx)
        for fn, report in ctx.analysis(LegacyBlockScopes).reports:
            for item in report.shadows:
                reporter.at(
                    item.target,
                    f"rebinding tensor `{item.target.id}` (bound on line {getattr(item.outer.node, 'lineno', '?')}) "
                    f"inside a block creates a new block-local tensor; the outer `{item.target.id}` is not updated",
                    hint=f"use `{item.target.id}[...] = ...` to update the existing tensor",
                )

