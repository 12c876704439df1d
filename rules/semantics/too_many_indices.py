"""NKI726 too-many-indices: a tensor is indexed with more indices than it has dimensions."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.values import Const
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._messages import ERRORS_DOC


class TooManyIndices(Rule):
    id = "NKI726"
    name = "too-many-indices"
    family = "semantics"
    level = Level.ERROR
    summary = "A tensor is indexed with more indices than it has dimensions"
    explanation = f"""
Finds subscripts that give a tensor more indices than it has dimensions
(`t[:, a, b]` on a 2-D tensor). It is usually a slice written with commas
instead of a colon (`t[:, a, b]` for `t[:, a:b]`) or a leftover from a
reshape.

**Why on Trainium:** such an index fails when the kernel is traced: the
frontend rejects it as NumPy does, so the kernel never compiles. The
frontend error catalogue has no dedicated code for it; the closest
documented one is `err_tensor_access_out_of_bound` ({ERRORS_DOC}).

The rank must be known exactly (an allocation, a returned tile, or a
reshape with a literal shape), and code under a condition nkilint cannot
decide is not judged (the path may be infeasible). The finding is an error
when the access runs for every value the code allows, and a warning when it
sits in a loop that may run zero times (an untested configuration still
hides the bug).

**Fix:** index with at most one item per dimension — usually turn the
commas into a slice (`t[:, a:b]`), or reshape the tensor to the rank the
indexing expects.
"""
    references = (
        "aws-neuron-sdk nki/api/nki.errors.rst @1db4d74e (err_tensor_access_out_of_bound)",
        "NumPy indexing semantics (NKI tensors are indexed like NumPy arrays at trace time)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out[:, 0:128], src=t[:, 0, 128])
                return out
            """,
            lines=[10],
            title="a slice written with a comma",
            level=Level.ERROR,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512, 0])
                nl.store(out, value=t)
                return out
            """,
            title="legacy API: the rank of an input is not known, so nothing is reported",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def kernel(x, n_tiles):
                out = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                row = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=row, src=x)
                for i in range(n_tiles):
                    nisa.dma_copy(dst=out[:, i * 128:i * 128 + 128], src=row[:, i * 128, i * 128 + 128])
                return out
            """,
            lines=[11],
            title="in a loop that may run zero times: a warning",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out[:, 0:128], src=t[:, 0:128])
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for kernel, graph in ctx.model.graphs():
            for view_id, view in graph.views():
                items = view.get("index_v")
                if not items:
                    continue
                bases = [v for _, v, _d in graph.edges_of(view_id, "view_of")]
                if len(bases) != 1:
                    continue
                shape = graph.attrs(bases[0]).get("shape_v")
                if shape is None:
                    continue
                # The rank must come from the code (an allocation, a returned
                # tile, a literal reshape), not be inferred from a parameter's use.
                root = graph.attrs(graph.base_tensor(bases[0]))
                if root.get("origin") not in ("alloc", "result") or root.get("rank_inferred"):
                    continue
                if view.get("conditional"):
                    continue  # under a condition nkilint cannot decide: maybe infeasible
                used = [x for x in items if not (isinstance(x, Const) and (x.value is None or x.value is Ellipsis))]
                if len(used) <= len(shape):
                    continue
                always = all(
                    (q.lower(graph.attrs(loop).get("trip_v")) or 0) >= 1 for loop in view.get("loops", ())
                )
                name = q.tensor_name(graph.attrs(bases[0]))
                index = str(view.get("index") or "")
                if index.startswith("(") and index.endswith(")"):
                    index = index[1:-1]
                message = (
                    f"{name} has {len(shape)} dimension{'s' if len(shape) != 1 else ''} {q.fmt_shape(shape)} but "
                    f"`{name}[{index}]` gives {len(used)} indices: tracing the kernel raises an index error"
                )
                if not always:
                    message += " (when the enclosing loop runs: it may run zero times)"
                reporter.at_site(
                    view.get("site"),
                    message,
                    level=Level.ERROR if always else Level.WARNING,
                    hint="use one index per dimension; a slice is written a:b, not a, b",
                    kernel=kernel.name,
                )

