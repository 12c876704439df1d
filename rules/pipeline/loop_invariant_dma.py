"""NKI303 loop-invariant-dma: a DMA that moves the same data in every iteration."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import nest_of
from nkilint.rule import Rule, invalid, valid

from . import _dma as dma
from ._report import OncePerSite, loop_words, operand_text
from ._reuse import mentioned_syms, product, reload_loop, total_bytes


class LoopInvariantDma(Rule):
    id = "NKI303"
    name = "loop-invariant-dma"
    family = "pipeline"
    level = Level.WARNING
    summary = "A DMA inside a loop loads the same HBM data in every iteration"
    explanation = """
The rule reports the outermost loop of the nest that the load does not
depend on, only when the load runs in every iteration (not under an `if`
that may depend on the iteration) and nothing in the loop writes the HBM
tensor it reads. It also sees the matmul tutorial's case, where an inner
loop walks a strip of blocks (`lhsT[k * 128:(k + 1) * 128, m_block]` in a
`k` loop) and an outer loop (`n`) repeats the whole strip: reported when the
strip fits in a quarter of the usable SBUF per partition (a warning), or as
a note when its size is unknown; larger re-read sets (a whole weight matrix)
are the normal price of tiling and stay quiet.

**Why on Trainium:** A load (`nisa.dma_copy`, legacy `nl.load`) inside a loop
whose source slice does not depend on the loop's index (nor on anything else
that changes between iterations) moves the same bytes from HBM every iteration.
Each repetition costs DMA bandwidth and a fixed ~1.3 us DMA overhead, and the
compute that waits for it stalls. The perf guide calls this *input data
reloading* (Opt #1, "Exploit temporal locality"); the matmul tutorial's
"Removing Redundant Loads" step is the textbook case.

**Fix:** hoist the load above the loop and reuse the SBUF tile in every
iteration. Keeping it resident costs SBUF for the loop's duration; when SBUF
is tight the perf guide treats reloading as a deliberate trade-off, in which
case suppress the finding with `# noqa: NKI303`.
"""
    references = (
        "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst (Opt #1: minimize input data reloading)",
        "aws-neuron-sdk nki/guides/tutorials/matrix_multiplication.rst (Removing Redundant Loads)",
        "aws-neuron-sdk nki/deep-dives/nki-dma-bandwidth-guide.rst (~1300 ns fixed cost per DMA)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale_rows(x, w):
                out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                for i in range(8):
                    wt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=wt, src=w[0:128, 0:512])
                    xt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=xt, src=x[i * 128:(i + 1) * 128, 0:512])
                    nisa.tensor_tensor(dst=xt, data1=xt, data2=wt, op=nl.multiply)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=xt)
                return out
            """,
            lines=[10],
            title="current API: the weight tile is reloaded in every iteration",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def matmul(lhsT, rhs):
                out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
                for n in nl.affine_range(4):
                    lhs_tile = nl.load(lhsT[0:128, 0:128])
                    rhs_tile = nl.load(rhs[0:128, n * 512:(n + 1) * 512])
                    res = nl.matmul(lhs_tile, rhs_tile, transpose_x=True)
                    nl.store(out[0:128, n * 512:(n + 1) * 512], value=res)
                return out
            """,
            lines=[8],
            title="legacy API: the stationary tile is loaded once per output block",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale_rows(x, w):
                out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                wt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=wt, src=w[0:128, 0:512])
                for i in range(8):
                    xt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=xt, src=x[i * 128:(i + 1) * 128, 0:512])
                    nisa.tensor_tensor(dst=xt, data1=xt, data2=wt, op=nl.multiply)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=xt)
                return out
            """,
            title="hoisted: loaded once",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def first_row_special(x, bias):
                out = nl.ndarray((1024, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in range(8):
                    xt = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=xt, src=x[i * 128:(i + 1) * 128, 0:512])
                    if i == 0:
                        nisa.dma_copy(dst=xt, src=bias[0:128, 0:512])
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=xt)
                return out
            """,
            title="runs in one iteration only",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = nest_of(graph)
            for t in dma.transfers(graph):
                if t.direction != "load":
                    continue
                chosen = reload_loop(ctx, graph, lf, t)
                if chosen is None:
                    continue
                self._report(ctx, reporter, kernel, graph, lf, t, *chosen)

    @staticmethod
    def _report(ctx, reporter, kernel, graph, lf, t, loop, fixed, level) -> None:
        src = t.hbm
        moved = total_bytes(t)
        used = mentioned_syms(graph, src.node_id) & fixed
        nest = [lp for lp in lf.enclosing(t.op_id) if lp.may_repeat()]
        nest = nest[:nest.index(loop) + 1] if loop in nest else [loop]
        varying = [lp for lp in nest if lp.sym in used]
        runs = product(lp.trip for lp in nest)
        distinct = product(lp.trip for lp in varying)
        estimate = ""
        if runs is not None and distinct is not None:
            extra = runs - distinct
            if moved is not None:
                estimate = (f"; est. {dma.fmt_bytes(moved * extra)} of redundant HBM reads ({extra} extra DMAs of "
                            f"{dma.fmt_bytes(moved)})")
            else:
                estimate = f"; est. {extra} extra DMAs"
        elif moved is not None:
            estimate = f"; est. {dma.fmt_bytes(moved)} of redundant HBM reads per repeated DMA"
        text = operand_text(graph, src.node_id)
        loops_text = " / ".join(f"`{lp.header()}`" for lp in reversed(nest))
        if not varying:
            message = (f"{text} is loaded again in every iteration of {loops_text}: the source does not depend on "
                       f"the loop{'s' if len(nest) > 1 else ''}{estimate}")
            hint = f"load it once before `{loop.header()}` and reuse the tile (perf guide Opt #1)"
        else:
            names = ", ".join(f"`{lp.header()}`" for lp in reversed(varying))
            side = t.onchip
            per = dma.bytes_per_partition(side) if side is not None else None
            cost = ""
            if per is not None and per[2] and distinct is not None:
                cost = f" (about {dma.fmt_bytes(per[1] * distinct)} per partition)"
            message = (f"the loads of {text} in {names} read the same blocks in every iteration of "
                       f"`{loop.header()}` ({loop_words(loop.trip_text())}): the source does not depend on that "
                       f"loop{estimate}")
            hint = (f"load those blocks once, before `{loop.header()}`, and keep them in SBUF{cost} "
                    f"(perf guide Opt #1; matmul tutorial)")
        reporter.at_site(graph.attrs(t.op_id).get("site"), message, hint=hint, level=level, kernel=kernel.name)
