"""NKI419 one-element-dma: a load/store/DMA inside a loop moves one element per iteration."""

from __future__ import annotations

from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.model.loops import Loops
from nkilint.rule import invalid, valid

from ._base import Spot, SpotRule
from ._elements import arange_iterators, hbm, indexing_loops, loop_iters, operands, single_element


def one_element_dmas(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        arange_iters = arange_iterators(ctx, graph)
        for op, data in graph.ops():
            if data.get("engine") != "dma":
                continue
            loops = data.get("loops", ())
            if not loops:
                continue
            iters = loop_iters(graph, loops)
            for n in operands(graph, op):
                nd = graph.attrs(n)
                if nd.get("kind") != "view" or not hbm(nd):
                    continue
                if not single_element(graph, n, arange_iters):
                    continue
                hit = indexing_loops(ctx, graph, [n], loops)
                if not hit:
                    continue
                upper = df.loop_trip_upper(graph, hit[0])
                if upper is not None and upper <= 1:
                    continue
                name = nd.get("name") or graph.attrs(graph.base_tensor(n)).get("name") or "the tensor"
                yield Spot(data.get("site"), (
                    f"{df.short(data.get('api'))} moves one element of {name}[{str(nd.get('index')).strip('()')}] per iteration of the "
                    f"loop over {iters[hit[0]]}: one DMA per element is overhead-bound (the DMA guide wants >= 2 KiB "
                    f"per partition); move a [128, F] tile per DMA (nisa.dma_copy / nl.load of a 128-row slice)"
                ), kernel=kernel.name)
                break


class OneElementDma(SpotRule):
    id = "NKI419"
    name = "one-element-dma"
    requires = SpotRule.requires + (Loops,)
    family = "cuda"
    level = Level.WARNING
    summary = "A load/store/DMA inside a loop moves one element per iteration"
    fix_hint = "move a [128, F] tile per DMA"
    explanation = """
`nl.load(a[i])`, `nl.store(out[i:i + 1], ...)` or `nisa.dma_copy(...,
src=x[i, j])` inside a loop over `i`: each iteration moves a single
element between HBM and SBUF, the per-thread load of a GPU kernel.

**Why on Trainium.** A DMA has a fixed cost (descriptor generation and
latency); the DMA guides want at least 2 KiB per partition per transfer, and
single elements are far below that. Per-element DMAs in long loops also
multiply the instruction count.

**Fix.** Move a whole `[128, F]` tile with one DMA (a 128-row slice of the
HBM tensor, reshaped to 2-D if it is 1-D); for gathers use indirect DMA or
`nisa.nc_n_gather`.
"""
    references = ("aws-neuron-sdk nki/deep-dives/nki-dma-bandwidth-guide.rst",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gather_kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                t = nl.load(a[0:128, 0:512])
                for i in nl.sequential_range(64):
                    v = nl.load(a[i, 0])
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[9],
            title="legacy API",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.sbuf)
                for j in range(16):
                    nisa.dma_copy(dst=t[0:1, j:j + 1], src=x[0:1, j:j + 1])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 16), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="one tile per DMA",
        ),
    )

    def spots(self, ctx: RuleContext):
        return one_element_dmas(ctx)
