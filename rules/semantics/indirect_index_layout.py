"""NKI715 indirect-index-layout: legacy: an indirect load/store indexes a free dimension, or uses nl.mgrid indices."""

from __future__ import annotations

import ast

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.exprs import ExprFacts, short_text
from nkilint.model.scopes import Scopes
from nkilint.model.values import TensorV
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._graph import index_elements, ops_on_view, subscript_views, tile_positions
from ._messages import ERRORS_DOC


class IndirectIndexLayout(Rule):
    id = "NKI715"
    name = "indirect-index-layout"
    family = "semantics"
    level = Level.ERROR
    requires = (Scopes, ExprFacts)
    summary = "Legacy: an indirect load/store indexes a free dimension dynamically, or builds its indices with nl.mgrid"
    explanation = f"""
Finds, in legacy kernels, an indirect `nl.load` / `nl.store` (indexed by a
tile of indices read at run time) whose tile indexes the last (free)
dimension, or whose other indices come from `nl.mgrid`.

**Why on Trainium:** legacy `nl.load` / `nl.store` accept a tile of indices
only on the partition (or block) dimension of the HBM tensor:
`nl.load(data[idx_tile[i_p, 0], i_f])`. Indirect indexing of a free
dimension is rejected with `err_indirect_indices_free_dim`
({ERRORS_DOC}). Index expressions built with `nl.mgrid` in a dynamic
access "may" get the same error even on the partition dimension
(`general/nki/nki_known_issues.rst` @0521004c: "Use nl.arange for indirect
load/store access indexing, nl.mgrid won't work"); since an SDK team kernel
(nki-samples `contributed/neuron-team-kernels/blockwise_mm.py`, 2025) uses
an mgrid free index next to an indirect partition index, that case is a
warning.

**Fix:** put the indirect index on the first (partition) dimension and
build the other indices with `nl.arange(n)[:, None]` /
`nl.arange(m)[None, :]`.
"""
    references = (
        f"{ERRORS_DOC} (err_indirect_indices_free_dim)",
        "aws-neuron-sdk general/nki/nki_known_issues.rst @0521004c (indexing)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_rows(data, idx):
                out = nl.ndarray((64, 512), dtype=data.dtype, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:64, 0:512]
                idx_tile = nl.load(idx[i_p, 0])
                rows = nl.load(data[idx_tile[i_p, 0], i_f])
                nl.store(out[i_p, i_f], value=rows)
                return out
            """,
            lines=[9],
            title="mgrid indices in an indirect load (a warning)",
            level=Level.WARNING,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_cols(data, idx):
                n, m = data.shape
                out = nl.ndarray((n, 64), dtype=data.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(128)[:, None]
                i_f = nl.arange(64)[None, :]
                idx_tile = nl.load(idx[0:1, 0:64])
                cols = nl.load(data[i_p, idx_tile])
                nl.store(out[i_p, i_f], value=cols)
                return out
            """,
            lines=[11],
            title="an index tile on the free dimension",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_rows(data, idx):
                out = nl.ndarray((64, 512), dtype=data.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(64)[:, None]
                i_f = nl.arange(512)[None, :]
                idx_tile = nl.load(idx[i_p, 0])
                rows = nl.load(data[idx_tile[i_p, 0], i_f])
                nl.store(out[i_p, i_f], value=rows)
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
            uses = [o for o in ops_on_view(graph, view_id)
                    if o[1].get("api") in ("nki.language.load", "nki.language.store")]
            if not uses:
                continue
            fn = scopes.enclosing_function(sub)
            if fn is None:
                continue
            indirect = tile_positions(exprs, fn, sub)
            if not indirect:
                continue  # a run-time offset in index arithmetic, not a tile of indices
            api = uses[0][1].get("api", "").rpartition(".")[2]
            mgrid = [n for n in astwalk.walk(sub.slice)
                     if isinstance(n, ast.Name) and exprs.index_origin(fn, n.id) == "mgrid"]
            base = graph.attrs(graph.base_tensor(view_id))
            shape = base.get("shape_v")
            rank = len(shape) if shape is not None else None
            elements = index_elements(sub)
            if mgrid:
                reporter.at(
                    sub,
                    f"indirect nl.{api} `{short_text(sub)}` uses nl.mgrid index `{mgrid[0].id}`; dynamic accesses may "
                    f"fail with nl.mgrid indices (err_indirect_indices_free_dim): use nl.arange",
                    level=Level.WARNING,
                    hint="build the indices with nl.arange(n)[:, None] / nl.arange(m)[None, :]",
                    kernel=kernel.name,
                )
            elif rank is not None and rank >= 2 and len(elements) == rank and (rank - 1) in indirect:
                reporter.at(
                    sub,
                    f"indirect nl.{api} `{short_text(sub)}` indexes the last (free) dimension of "
                    f"`{q.tensor_name(base)}` with a tile of indices; indirect indexing is only supported on the "
                    f"partition or block dimension (err_indirect_indices_free_dim)",
                    hint="move the indirect index to the first dimension (transpose the data layout in HBM)",
                    kernel=kernel.name,
                )

