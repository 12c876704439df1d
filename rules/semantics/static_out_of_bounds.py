"""NKI718 static-out-of-bounds: a constant or loop-derived index range runs past a tensor dimension."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.exprs import short_text
from nkilint.model.graph import Site
from nkilint.model.indexing import IndexArithmetic
from nkilint.model.scopes import Scopes
from nkilint.model.views import shape_trusted
from nkilint.model.values import Const, DsV, IndexV, SliceV, const_int, int_bounds, linear
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._graph import in_dead_loop, index_elements, ops_on_view, subscript_views
from ._messages import ERRORS_DOC


class StaticOutOfBounds(Rule):
    id = "NKI718"
    name = "static-out-of-bounds"
    family = "semantics"
    level = Level.ERROR
    requires = (Scopes, IndexArithmetic)
    summary = "A constant or loop-derived index range runs past a tensor dimension"
    explanation = f"""
Finds subscripts whose index range, computed at compile time, runs past a
tensor dimension: integers, slices, `nl.ds`, `nl.arange`/`nl.mgrid`
offsets and loop variables of static loops.

**Why on Trainium:** indices that NKI computes at compile time must stay
inside the tensor. The legacy frontend rejects an access whose index range
exceeds a dimension with `err_tensor_access_out_of_bound` ("Out-of-bound
access for tensor `x` on dimension 1: index range [0, 4095] exceed
dimension size of 4000", {ERRORS_DOC}); in NKI 0.2+ a slice must satisfy
`0 <= start < end <= shape[dim]` (`NkiTensor.slice`, of which `t[a:b]` is
the short form). A classic cause is a tiled loop whose last tile runs past
a dimension that is not a multiple of the tile size.

The finding is an error when the range is exact (constants and loop
variables of loops with constant bounds, so the last iteration really
reaches the bad index); a warning when it depends on a value with a finite
bound (`assert K <= 1024`). Accesses under an `if`, and legacy accesses
with a `mask=` (which may cut the range), are not reported.

**Fix:** bound the last tile — `w = min(512, N - i * 512)` and slice
`i * 512:i * 512 + w` — or, in legacy kernels, pass a mask
(`mask=i * 512 + i_f < N`).
"""
    references = (
        f"{ERRORS_DOC} (err_tensor_access_out_of_bound)",
        "aws-neuron-sdk nki/api/nki/language/__init__.py (NkiTensor.__getitem__, NkiTensor.slice constraints)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def zero_fill():
                x = nl.ndarray([128, 4000], dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range((4000 + 512 - 1) // 512):
                    i_p, i_f = nl.mgrid[0:128, 0:512]
                    nl.store(x[i_p, i * 512 + i_f], value=0)
                return x
            """,
            lines=[9],
            title="legacy: the last of 8 tiles reaches column 4095 of 4000",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_cols(x):
                out = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                src = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=src, src=x)
                for i in range(8):
                    nisa.tensor_copy(dst=t, src=src[:, i * 512:(i + 1) * 512])
                    nisa.dma_copy(dst=out[:, i * 512:(i + 1) * 512], src=t)
                return out
            """,
            lines=[12, 13],
            title="current API: slices of the last tile end at 4096",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def zero_fill():
                x = nl.ndarray([128, 4000], dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range((4000 + 512 - 1) // 512):
                    i_p, i_f = nl.mgrid[0:128, 0:512]
                    nl.store(x[i_p, i * 512 + i_f], value=0, mask=i * 512 + i_f < 4000)
                return x
            """,
            title="legacy: a mask cuts the last tile",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_cols(x):
                out = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                src = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=src, src=x)
                for i in range(8):
                    w = min(512, 4000 - i * 512)
                    nisa.tensor_copy(dst=t[:, 0:w], src=src[:, i * 512:i * 512 + w])
                    nisa.dma_copy(dst=out[:, i * 512:i * 512 + w], src=t[:, 0:w])
                return out
            """,
            title="the last tile is bounded with min()",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        scopes = ctx.analysis(Scopes)
        arithmetic = ctx.analysis(IndexArithmetic)
        reporter = Reporter(ctx)
        for kernel, graph, view_id, data, sub in subscript_views(model):
            if kernel.error:
                continue
            fn = scopes.enclosing_function(sub)
            if fn is None or _guarded(ctx, fn, sub, data.get("site")):
                continue
            loops = data.get("loops", ())
            if in_dead_loop(graph, loops):
                continue
            exact_loops = all(const_int(graph.attrs(l).get("trip_v")) is not None for l in loops)
            if model.legacy and any(kw.arg == "mask" for o in ops_on_view(graph, view_id)
                                    for kw in getattr(o[1].get("call"), "keywords", []) or []):
                continue
            base_nodes = [v for _, v, d in graph.g.out_edges(view_id, data=True) if d.get("kind") == "view_of"]
            if not base_nodes:
                continue
            if not shape_trusted(graph, base_nodes[0]):
                continue  # a result the model sizes by broadcasting (max8, ...)
            base = graph.attrs(base_nodes[0])
            shape = base.get("shape_v")
            items = data.get("index_v") or []
            if shape is None or not items:
                continue
            elements = index_elements(sub)
            has_ellipsis = any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elements)
            axis = 0
            for pos, item in enumerate(items):
                if isinstance(item, Const) and item.value is None:
                    continue  # np.newaxis
                if axis >= len(shape):
                    break
                dim = const_int(shape[axis])
                element = elements[pos] if not has_ellipsis and pos < len(elements) else None
                axis += 1
                if dim is None or dim <= 0:
                    continue
                shifted = isinstance(item, IndexV) and element is not None and arithmetic.only_shifted(fn, element)
                span = _index_span(item, dim, shifted)
                if span is None:
                    continue
                lo, hi, value_kind = span
                if hi < dim and lo >= 0:
                    continue
                certain = exact_loops and value_kind == "exact"
                if value_kind == "unknown" or (not certain and hi == float("inf")):
                    continue
                name = q.tensor_name(base)
                what = f"`{short_text(element)}`" if element is not None else f"index {pos}"
                bad = f"{int(hi)}" if hi >= dim else f"{int(lo)}"
                reporter.at(
                    sub,
                    f"{what} reaches index {bad} of dimension {axis - 1} of `{name}`, which has size {dim} "
                    f"(index range [{int(lo)}, {int(hi)}])"
                    + (" (err_tensor_access_out_of_bound)" if model.legacy else "")
                    + ("" if certain else "; possible for the values the code allows"),
                    level=Level.ERROR if certain else Level.WARNING,
                    hint="bound the last tile with min(), or (legacy) pass a mask",
                    kernel=kernel.name,
                )
                break


def _guarded(ctx: RuleContext, fn: ast.AST, node: ast.AST, site: Site | None) -> bool:
    """The node, or a call in this file on the chain that reached it, is
    under a condition; a chain through another module counts as guarded
    (its conditions are not known here)."""
    index = ctx.analysis(Scopes).file
    if any(True for _ in index.conditions_between(node, fn)):
        return True
    if site is not None:
        for file, call in site.chain:
            if not ctx.model.in_this_file(Site(file, call)):
                return True
            if any(True for _ in index.conditions_between(call, index.enclosing_function(call))):
                return True
    return False


def _value_span(v) -> tuple[float, float, str] | None:
    """(lo, hi, 'exact' | 'bounded' | 'unknown') of an integer index value:
    exact when it only depends on constants and loop indices."""
    b = int_bounds(v)
    if b is None:
        return None
    lin = linear(v)
    if lin is None:
        # An interval from min()/max()/% ...: an over-approximation that loses
        # correlations (i * 512 + min(512, N - i * 512)), not a reachable range.
        return b[0], b[1], "unknown"
    terms, _ = lin
    exact = all(sym.origin == "loop" and sym.lo != float("-inf") and sym.hi != float("inf") for sym in terms)
    # An affine form of independent bounded symbols reaches its bounds.
    return b[0], b[1], "exact" if exact else "bounded"


def _index_span(item, dim: int, shifted: bool) -> tuple[float, float, str] | None:
    """The index range one subscript item touches on a dimension of size
    dim; ``shifted``: the item's expression is an arange/mgrid index only
    shifted by + / - (the model's range for it is exact)."""
    def worst(*kinds: str) -> str:
        return "unknown" if "unknown" in kinds else "bounded" if "bounded" in kinds else "exact"

    if isinstance(item, SliceV):
        step = const_int(item.step) if not (isinstance(item.step, Const) and item.step.value is None) else 1
        if step is None or step <= 0:
            return None
        start = (0.0, 0.0, "exact") if isinstance(item.start, Const) and item.start.value is None else _value_span(item.start)
        stop = (float(dim), float(dim), "exact") if isinstance(item.stop, Const) and item.stop.value is None else _value_span(item.stop)
        if start is None or stop is None or start[0] < 0 or stop[0] < 0:
            return None  # negative (from-the-end) bounds: Python semantics, not handled
        return start[0], stop[1] - 1, worst(start[2], stop[2])
    if isinstance(item, DsV):
        start = _value_span(item.start)
        size = const_int(item.size)
        if start is None or size is None or start[0] < 0:
            return None
        return start[0], start[1] + size - 1, start[2]
    if isinstance(item, IndexV):
        if not shifted:
            return None
        extent = const_int(item.extent)
        offset = _value_span(item.offset)
        if extent is None or offset is None:
            return None
        return offset[0], offset[1] + extent - 1, offset[2]
    span = _value_span(item)
    if span is None:
        return None
    if span[0] < 0:
        return None  # negative integers count from the end
    return span

