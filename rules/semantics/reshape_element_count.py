"""NKI730 reshape-element-count: `t.reshape(shape)` asks for a different number of elements than `t` has."""

from __future__ import annotations

from math import prod

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.values import const_int
from nkilint.model.views import shape_trusted
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._graph import in_dead_loop


class ReshapeElementCount(Rule):
    id = "NKI730"
    name = "reshape-element-count"
    family = "semantics"
    level = Level.ERROR
    summary = "`t.reshape(shape)` asks for a different number of elements than the tensor has"
    explanation = """
Finds `.reshape(...)` views whose new shape and the tensor's own shape are
both known exactly and hold different numbers of elements (`(128, 512)`
reshaped to `(128, 4, 64)`).

**Why on Trainium:** a reshape only reinterprets the tensor's memory: it
moves no data and cannot add or drop elements, so the frontend rejects a
new shape whose element count differs (as NumPy does), and the kernel
never compiles. It is usually a tiling constant that changed on one side
only.

**Fix:** make the product of the new dimensions equal to the tensor's
element count, or slice the tensor before reshaping it.
"""
    references = (
        "aws-neuron-sdk nki/migration/index.rst (NKI 0.2: tensor.reshape reinterprets the tensor's memory)",
        "NumPy reshape semantics (an NKI tensor is reshaped like a NumPy array at trace time)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def split_heads(x):
                out = nl.ndarray((128, 4, 64), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t.reshape((128, 4, 64)))
                return out
            """,
            lines=[10],
            level=Level.ERROR,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def split_heads(x):
                out = nl.ndarray((128, 8, 64), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t.reshape((128, 8, 64)))
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for kernel, graph in ctx.model.graphs():
            if kernel.error:
                continue
            for view_id, view in graph.views():
                if view.get("index") != ".reshape(...)" or view.get("conditional"):
                    continue
                bases = [v for _, v, _d in graph.edges_of(view_id, "view_of")]
                if len(bases) != 1 or not shape_trusted(graph, bases[0]):
                    continue
                if in_dead_loop(graph, view.get("loops", ())):
                    continue
                new, old = view.get("shape_v"), graph.attrs(bases[0]).get("shape_v")
                new_dims = [const_int(d) for d in new or ()]
                old_dims = [const_int(d) for d in old or ()]
                if not new_dims or not old_dims or None in new_dims or None in old_dims:
                    continue
                if any(d < 0 for d in new_dims):
                    continue  # -1: an inferred dimension, not an element count
                have, want = prod(old_dims), prod(new_dims)
                if have == want:
                    continue
                name = q.tensor_name(graph.attrs(bases[0]))
                reporter.at_site(
                    view.get("site"),
                    f"`{name}.reshape({q.fmt_shape(new)})`: {name} {q.fmt_shape(old)} holds {have} elements, "
                    f"the new shape {want}; a reshape cannot change the element count",
                    hint=f"choose dimensions whose product is {have}, or slice {name} first",
                    kernel=kernel.base_name,
                )
