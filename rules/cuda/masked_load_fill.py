"""NKI425 masked-load-fill: triton's masked-lane fill value (other=) on an NKI
call, or a legacy masked load feeding a reduction."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.model.device import DeviceCode
from nkilint.model.views import Op, ops_of
from nkilint.rule import invalid, valid

from ._base import MIGRATION, Spot, SpotRule, nki_name


def masked_loads(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    for fn in device.outermost:
        for node in device.nodes(fn):
            if isinstance(node, ast.Call) and nki_name(ctx, node.func):
                other = next((k for k in node.keywords if k.arg == "other"), None)
                if other is not None:
                    owner = device.owner(node) or fn
                    yield Spot(other.value, (
                        f"other={ast.unparse(other.value)} is Triton's fill value for masked lanes: NKI has no fill "
                        f"value ({'masked-off elements are simply not written' if ctx.model.legacy else 'current NKI has no masks at all'}); "
                        f"bound the tile with min() and nisa.memset the tail if a reduction needs neutral values"
                    ), Level.ERROR, owner.name)
    if not ctx.model.legacy:
        return
    for kernel in ctx.model.kernels:
        graph = kernel.graph
        for op in ops_of(kernel):
            if op.short != "load" or "mask" not in op.params:
                continue
            reducers = [c for c in df.consumers(graph, op.id, depth=2)
                        if (df.is_sum_reduction(graph.attrs(c)) or df.is_max_reduction(graph.attrs(c)))
                        and "mask" not in Op(graph, c).params]
            if not reducers:
                continue
            # consumers() is a set: name the reduction that comes first in
            # the source, so the message does not depend on hash order.
            red = Op(graph, min(reducers, key=lambda c: _source_position(ctx, graph, c)))
            yield Spot(op.site, (
                f"masked nl.load feeds a reduction ({red.short} at {ctx.model.line_ref(red.site)}): "
                f"legacy masks leave masked-off lanes unwritten (no Triton other= fill), so the reduction may read "
                f"garbage in the tail; reduce only the valid slice, or nl.full/memset the tile with the neutral value first"
            ), Level.WARNING, kernel.name)


def _source_position(ctx: RuleContext, graph, op_id: str) -> tuple[float, float, int]:
    """Where an op is reported in this file (a helper's op: at the call), then creation order."""
    node = ctx.model.report_node(graph.attrs(op_id).get("site"))
    line = getattr(node, "lineno", None)
    return (line if line is not None else float("inf"), getattr(node, "col_offset", 0), graph.seq(op_id))


class MaskedLoadFill(SpotRule):
    id = "NKI425"
    name = "masked-load-fill"
    family = "cuda"
    level = Level.ERROR
    summary = "Triton's masked-lane fill value (other=) on an NKI call, or a legacy masked load feeding a reduction"
    fix_hint = "bound the tile with min() and nisa.memset the tail to the reduction's neutral value"
    explanation = """
`other=` on an NKI call (an error: NKI has no fill value), and in legacy
code a masked `nl.load(..., mask=...)` whose tile feeds a sum or max
reduction (a warning). Plain `mask=` in current code is reported by the
migration family.

**Why on Trainium.** Triton's `tl.load(ptr, mask=m, other=0.0)` fills
masked lanes, so a following `tl.sum` sees zeros. Legacy NKI's `mask=`
"informs the compiler to skip generating the instruction or generate the
instruction with a smaller input tile shape": masked-off elements are
simply not written, so they hold whatever the buffer held (uninitialised
for a fresh tile), and a reduction over the whole tile reads them. Current
NKI removed masks entirely.

**Fix.** Bound the last tile with `min()` and reduce only the valid slice;
if the reduction must see a full tile, `nisa.memset` (legacy `nl.full` /
`nl.zeros`) the tile with the neutral value (0 for sums, the dtype's
lowest finite value for max) before the load.
"""
    references = (MIGRATION, "aws-neuron-sdk general/nki/api/nki.api.shared.rst at 0521004c (NKI API Masking)")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def row_max(x, n):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:512]
                t = nl.load(x[i_p, i_f], mask=(i_f < n), other=-1e30)
                nl.store(out, value=nl.max(t, axis=1))
                return out
            """,
            lines=[8],
            title="legacy API: other= is an error; the masked load feeding nl.max is a warning on the same line",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512], other=0.0)
                nl.store(out, t)
                return out
            """,
            lines=[8],
            title="current API",
            level=Level.ERROR,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def row_max(x, n):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:n])
                nl.store(out, value=nl.max(t, axis=1))
                return out
            """,
            title="reduce exactly the valid columns",
        ),
    )

    def spots(self, ctx: RuleContext):
        return masked_loads(ctx)
