"""NKI723 assignment-destination-too-small: `dst[...] = src` (or a store) has a destination smaller than the source."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.values import const_int
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._graph import in_dead_loop, trusted_shape
from ._messages import ERRORS_DOC


class AssignmentDestinationTooSmall(Rule):
    id = "NKI723"
    name = "assignment-destination-too-small"
    family = "semantics"
    level = Level.ERROR
    summary = "`dst[...] = src` (or a store) has a destination smaller than the source"
    explanation = f"""
Finds tile assignments (`y[...] = x`, and the legacy `nl.store(dst,
value)`) whose destination is smaller than the source. Dimensions are
compared where both are known constants, after dropping leading size-1
dimensions.

**Why on Trainium:** an assignment between tiles copies element by
element; the source may be broadcast to a larger destination, but a
destination smaller than the source would receive several values per
element. The legacy frontend rejects it with
`err_store_dst_shape_smaller_than_other_shape` ("Illegal assignment
destination shape", {ERRORS_DOC}).

**Fix:** make the destination as large as the source (`y = nl.ndarray((128,
512), ...)`), slice the source to the destination's size, or reduce the
source first (`nl.sum(x, axis=1, keepdims=True)`).
"""
    references = (f"{ERRORS_DOC} (err_store_dst_shape_smaller_than_other_shape)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def narrow(a):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                x = nl.zeros(shape=(128, 512), dtype=nl.float32, buffer=nl.sbuf)
                y = nl.zeros(shape=(128, 1), dtype=nl.float32, buffer=nl.sbuf)
                y[...] = x
                nl.store(out, value=x)
                return out
            """,
            lines=[9, 10],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def widen(a):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x = nl.zeros(shape=(128, 512), dtype=nl.float32, buffer=nl.sbuf)
                y = nl.zeros(shape=(128, 1), dtype=nl.float32, buffer=nl.sbuf)
                x[...] = y
                nl.store(out, value=x)
                return out
            """,
            title="broadcasting a smaller source into a larger destination",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for kernel, graph in ctx.model.graphs():
            for op_id, op in graph.ops():
                store = op.get("api") == "nki.language.store"
                if not (op.get("assignment") or store):
                    continue
                site = op.get("site")
                if site is None or in_dead_loop(graph, op.get("loops", ())):
                    continue
                value = next((s for s, e in graph.reads(op_id) if e.get("param") == "value"), None)
                dst = next((t for t, e in graph.writes(op_id) if e.get("param") == "dst"), None)
                if value is None or dst is None:
                    continue
                vref, dref = q.NodeRef(kernel, graph, value), q.NodeRef(kernel, graph, dst)
                if not (trusted_shape(vref) and trusted_shape(dref)):
                    continue
                vshape, dshape = vref.data.get("shape_v"), dref.data.get("shape_v")
                if vshape is None or dshape is None:
                    continue
                vs, ds = _strip_ones([const_int(d) for d in vshape]), _strip_ones([const_int(d) for d in dshape])
                if len(vs) != len(ds):
                    continue
                bad = [(i, d, v) for i, (d, v) in enumerate(zip(ds, vs)) if d is not None and v is not None and d < v]
                if not bad:
                    continue
                what = "nl.store destination" if store else "assignment destination"
                reporter.at_site(
                    site,
                    f"{what} `{q.tensor_name(dref.data)}` {q.fmt_shape(dshape)} is smaller than the source "
                    f"`{q.tensor_name(vref.data)}` {q.fmt_shape(vshape)} (err_store_dst_shape_smaller_than_other_shape)",
                    hint="make the destination as large as the source, slice the source, or reduce it first",
                    kernel=kernel.name,
                )


def _strip_ones(dims: list) -> list:
    """The dimensions without leading 1s (the last one stays)."""
    i = 0
    while i < len(dims) - 1 and dims[i] == 1:
        i += 1
    return dims[i:]

