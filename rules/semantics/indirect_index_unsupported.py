"""NKI716 indirect-index-unsupported: legacy: an API or a tile copy that takes no indirect indices gets one."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.exprs import ExprFacts, short_text
from nkilint.model.scopes import Scopes
from nkilint.model.values import TensorV
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._graph import ops_on_view, subscript_views, tile_positions
from ._messages import ERRORS_DOC


class IndirectIndexUnsupported(Rule):
    id = "NKI716"
    name = "indirect-index-unsupported"
    family = "semantics"
    level = Level.ERROR
    requires = (Scopes, ExprFacts)
    summary = "Legacy: an API or a tile copy that does not accept indirect (run-time) indices gets one"
    explanation = f"""
Finds, in legacy kernels, indirect indices (a tensor indexed by a tile of
indices) passed to an API or a tile copy that does not accept them.

**Why on Trainium:** only some legacy APIs take tensors indexed by another
tensor (indirect indexing): `nl.load`, `nl.store` and `nisa.dma_copy` do;
`nl.load_transpose2d` raises
`err_indirect_indices_are_not_supported_with_nki_api`, and a tile copy
written as an assignment (`out_sbuf[iy, iz] = data_sbuf[0, idx_tile, iz]`)
raises `err_copy_dynamic_indirect_indices_not_natively_supported`
({ERRORS_DOC}).

The error catalogue names `nisa.dma_transpose` as well, but the SDK's own
tests gather through it (`nki/test/test_nki_isa_dma_transpose.py`,
"3D transpose w/Indirect Mem Access"), so it is not reported.

**Fix:** load with `nl.load` / `nisa.dma_copy` and transpose on chip; for
an on-chip gather use `nisa.tensor_copy_dynamic_src` (legacy) or
`nisa.local_gather` / `.ap(vector_offset=...)` (NKI 0.2+).
"""
    references = (
        f"{ERRORS_DOC} (err_indirect_indices_are_not_supported_with_nki_api)",
        f"{ERRORS_DOC} (err_copy_dynamic_indirect_indices_not_natively_supported)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_t(data, idx):
                out = nl.ndarray((512, 64), dtype=data.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(64)[:, None]
                idx_tile = nl.load(idx[i_p, 0])
                result = nl.load_transpose2d(data[idx_tile])
                nl.store(out, value=result)
                return out
            """,
            lines=[9],
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_sbuf(data, idx):
                out = nl.ndarray((8, 4), dtype=data.dtype, buffer=nl.shared_hbm)
                data_sb = nl.load(data)
                idx_tile = nl.load(idx)
                out_sbuf = nl.ndarray((8, 4), dtype=data.dtype, buffer=nl.sbuf)
                iy, iz = nl.mgrid[0:8, 0:4]
                out_sbuf[iy, iz] = data_sb[0, idx_tile, iz]
                nl.store(out, value=out_sbuf)
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
            def gather_t(data, idx):
                out = nl.ndarray((512, 64), dtype=data.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(64)[:, None]
                i_f = nl.arange(512)[None, :]
                idx_tile = nl.load(idx[i_p, 0])
                rows = nl.load(data[idx_tile[i_p, 0], i_f])
                nl.store(out, value=nisa.nc_transpose(rows))
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if not ctx.model.legacy:
            return
        scopes, exprs = ctx.analysis(Scopes), ctx.analysis(ExprFacts)
        reporter = Reporter(ctx)
        for kernel, graph, view_id, data, sub in subscript_views(ctx.model):
            items = data.get("index_v") or []
            if not any(isinstance(x, TensorV) for x in items):
                continue
            fn = scopes.enclosing_function(sub)
            if fn is None or not tile_positions(exprs, fn, sub):
                continue  # a run-time offset in index arithmetic (supported), not a tile of indices
            for op_id, op, how in ops_on_view(graph, view_id):
                api = op.get("api", "")
                # nisa.dma_transpose is listed by the error catalogue too, but the SDK's own tests
                # (nki/test/test_nki_isa_dma_transpose.py, examples 5 and 6) gather through it.
                if api == "nki.language.load_transpose2d":
                    short = ("nl." if api.startswith("nki.language") else "nisa.") + api.rpartition(".")[2]
                    reporter.at(
                        sub,
                        f"{short} does not accept indirect indices: `{short_text(sub)}` is indexed by a tile "
                        f"(err_indirect_indices_are_not_supported_with_nki_api)",
                        hint="gather with nl.load / nisa.dma_copy, then transpose on chip",
                        kernel=kernel.name,
                    )
                elif op.get("assignment") and how == "reads" and data.get("buffer") in q.ON_CHIP:
                    reporter.at(
                        sub,
                        f"tile copy `{short_text(sub)}` with a run-time index tile is not supported as an assignment "
                        f"(err_copy_dynamic_indirect_indices_not_natively_supported)",
                        hint="use nisa.tensor_copy_dynamic_src(...) for an on-chip gather",
                        kernel=kernel.name,
                    )

