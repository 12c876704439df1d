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
from nkilint.model.values import (
    Const, DsV, IndexV, Int, SliceV, ceil_div_parts, const_int, int_binop, int_bounds, linear, same_int,
)
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

A symbolic size gets the same check for the tail of a tiled loop: a loop
over `ceil(N / B)` tiles (`math.ceil(N / B)`, `(N + B - 1) // B`, or a
helper returning one) whose body accesses the tile `[i * B, (i + 1) * B)`
of a dimension of size `N` runs past it on the last iteration for every
`N` that is not a multiple of `B`: the masked tail of a CUDA or Triton
original (`offs < n_elements`) dropped in the port. That is a warning,
since sizes that divide work; an `assert N % B == 0` (or a condition that
says so), a `min()` bound, an `if` or a legacy `mask=` silences it.

**Fix:** bound the last tile — `w = min(512, N - i * 512)` and slice
`i * 512:i * 512 + w` — or, in legacy kernels, pass a mask
(`mask=i * 512 + i_f < N`); for a symbolic size that the kernel only
supports in multiples of the tile, `assert N % 512 == 0` states it.

**Releases:** every release: the legacy frontend's out-of-bound check and
the 0.2+ slice constraints.
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
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_rows(x):
                n, d = x.shape
                out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
                for t in range((n + 127) // 128):
                    buf = nl.ndarray((128, d), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=buf, src=x[t * 128:(t + 1) * 128, :])
                    nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=buf)
                return out
            """,
            lines=[11, 12],
            title="symbolic size: the last of ceil(n / 128) tiles runs past n unless n divides",
            level=Level.WARNING,
        ),
        invalid(
            """
            import math
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_rows(x):
                n, d = x.shape
                out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
                for t in nl.affine_range(math.ceil(n / 128)):
                    i_p, i_f = nl.mgrid[0:128, 0:512]
                    tile = nl.load(x[t * 128 + i_p, i_f])
                    nl.store(out[t * 128 + i_p, i_f], value=tile)
                return out
            """,
            lines=[11, 12],
            title="legacy, symbolic size: no mask on the last of ceil(n / 128) tiles",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_rows(x):
                n, d = x.shape
                assert n % 128 == 0, "rows must be a multiple of 128"
                out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
                for t in range((n + 127) // 128):
                    buf = nl.ndarray((128, d), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=buf, src=x[t * 128:(t + 1) * 128, :])
                    nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=buf)
                return out
            """,
            title="symbolic size asserted to be a multiple of the tile",
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
            base_nodes = [v for _, v, _d in graph.edges_of(view_id, "view_of")]
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
                shifted = isinstance(item, IndexV) and element is not None and arithmetic.only_shifted(fn, element)
                if dim is None:
                    tail = _ceil_div_tail(graph, loops, item, shape[axis - 1], shifted)
                    if tail is None:
                        continue
                    name = q.tensor_name(base)
                    what = f"`{short_text(element)}`" if element is not None else f"index {pos}"
                    size, tile, loop_text = tail
                    reporter.at(
                        sub,
                        f"{what} runs past dimension {axis - 1} of `{name}` (size {size}) on the last iteration of "
                        f"`{loop_text}` unless {size} is a multiple of {tile}: the loop covers "
                        f"{tile} * ceil({size} / {tile}) indices and nothing bounds the last tile (no min(), "
                        + ("mask=, " if model.legacy else "") + "`if` or `assert`)"
                        + (" (err_tensor_access_out_of_bound)" if model.legacy else ""),
                        level=Level.WARNING,
                        hint=f"bound the last tile (w = min({tile}, {size} - i * {tile}) and slice i * {tile}:i * {tile} + w)"
                        + (", pass a mask=" if model.legacy else "")
                        + f", or assert {size} % {tile} == 0 if only multiples are supported",
                        kernel=kernel.name,
                    )
                    break
                if dim <= 0:
                    continue
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


def _ceil_div_tail(graph, loops, item, size_v, shifted: bool) -> tuple[str, int, str] | None:
    """(size text, tile, loop variable) when the item is the tile
    ``[i * B, (i + 1) * B)`` of a loop over ``ceil(size / B)`` tiles of a
    dimension whose size is symbolic and not known to be a multiple of B:
    the last tile runs past the end for every other size."""
    if isinstance(item, SliceV):
        step = item.step
        if not (isinstance(step, Const) and step.value is None) and const_int(step) != 1:
            return None
        start, stop = item.start, item.stop
    elif isinstance(item, DsV):
        start, stop = item.start, int_binop(ast.Add, item.start, item.size)
    elif isinstance(item, IndexV) and shifted:
        start, stop = item.offset, int_binop(ast.Add, item.offset, item.extent)
    else:
        return None
    lin_start, lin_stop = linear(start), linear(stop)
    if lin_start is None or lin_stop is None or len(lin_stop[0]) != 1 or lin_start[0] != lin_stop[0]:
        return None
    (sym, tile), = lin_stop[0].items()
    if lin_start[1] != 0 or lin_stop[1] != tile or tile <= 1:
        return None  # not the tile [i * B, i * B + B)
    for loop in loops:
        attrs = graph.attrs(loop)
        if attrs.get("index_sym") is not sym:
            continue
        parts = ceil_div_parts(attrs.get("trip_v"))
        if parts is None or parts[1] != tile or not same_int(parts[0], size_v):
            return None
        size_lin = linear(size_v)
        if size_lin is None:
            return None
        if any(s.multiple_of and s.multiple_of % tile == 0 for s in size_lin[0]) and size_lin[1] % tile == 0:
            return None  # an assert or condition made the size a multiple of the tile
        site = attrs.get("site")
        loop_node = getattr(site, "node", None)
        loop_text = (f"for {short_text(loop_node.target)} in {short_text(loop_node.iter)}"
                     if isinstance(loop_node, ast.For) else "the loop")
        size = size_v.label or (size_v.sym.name if isinstance(size_v, Int) and size_v.sym else q.fmt_dim(size_v))
        return size, tile, loop_text
    return None


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

