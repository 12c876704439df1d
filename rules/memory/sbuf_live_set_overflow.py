"""NKI205 sbuf-live-set-overflow: the SBUF tensors live at once do not fit."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import memory as mm
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._text import live_text


class SbufLiveSetOverflow(Rule):
    id = "NKI205"
    name = "sbuf-live-set-overflow"
    family = "memory"
    level = Level.WARNING
    summary = "The SBUF tensors live at once need more bytes per partition than the target's usable SBUF"
    explanation = """
Finds the allocation at which the SBUF tensors live together first need
more than the usable SBUF per partition (176 KiB on trn1, 212 728 B on trn2,
an assumed 240 KiB on trn3; configurable as
`sbuf_usable_bytes_per_partition` in `[tool.nkilint.hardware]`), and names
the largest of them. The estimate is a lower bound over the kernel graph: a
tensor is live from its allocation to its last use (the whole loop when it
is used inside a loop it was not allocated in); a tile allocated inside a
loop counts once (the compiler's extra pipelining buffers are not counted),
a tile stored in a list in a loop counts once per iteration; legacy block
dimensions count one block; a tensor in a loop that may not run does not
count.

**Why on Trainium:** every SBUF tensor occupies its bytes per partition
from its allocation to its last use. When the live tensors do not fit, the
compiler spills data to HBM and reloads it ("the Neuron compiler will insert
the necessary spills or refills"), which costs DMA bandwidth, or fails to
allocate.

**Fix:** shrink what stays resident: stream large inputs in tiles instead
of caching them whole, allocate temporaries inside the loop that uses them,
reuse buffers, or use narrower dtypes.
"""
    references = (
        "aws-neuron-sdk nki/get-started/about/memory-hierarchy-overview.rst (spills when live data overflows)",
        "aws-neuron-sdk general/nki/nki_direct_allocation_guide.rst at 0521004c (176 KiB usable on NeuronCore-v2)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def two_caches(x, y):
                out = nl.ndarray((128, 26624), dtype=nl.float32, buffer=nl.shared_hbm)
                xs = nl.ndarray((128, 26624), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=xs, src=x)
                ys = nl.ndarray((128, 26624), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=ys, src=y)
                nisa.tensor_tensor(dst=xs, data1=xs, data2=ys, op=nl.add)
                nisa.dma_copy(dst=out, src=xs)
                return out
            """,
            lines=[10],
            title="two 104 KiB caches live together: 208 KiB on trn1 (176 KiB usable)",
            target="trn1",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def two_caches(x, y):
                out = nl.ndarray((128, 22528), dtype=nl.float32, buffer=nl.shared_hbm)
                xs = nl.ndarray((128, 22528), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=xs, src=x)
                ys = nl.ndarray((128, 22528), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=ys, src=y)
                nisa.tensor_tensor(dst=xs, data1=xs, data2=ys, op=nl.add)
                nisa.dma_copy(dst=out, src=xs)
                return out
            """,
            title="two 88 KiB caches: exactly the 176 KiB of trn1",
            target="trn1",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def keep_all(x):
                out = nl.ndarray((128, 65536), dtype=nl.float32, buffer=nl.shared_hbm)
                tiles = []
                for j in range(16):
                    t = nl.load(x[0:128, j * 4096:(j + 1) * 4096], dtype=nl.float32)
                    tiles.append(t)
                for j in range(16):
                    nl.store(out[0:128, j * 4096:(j + 1) * 4096], value=tiles[j])
                return out
            """,
            lines=[9],
            title="legacy API: sixteen 16 KiB tiles kept in a list (256 KiB)",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        target = ctx.target
        for kernel in ctx.model.kernels:
            mem = mm.analyze(kernel, target)
            for o in mem.overflows("sbuf"):
                at = o.at
                if at.tile_lo > o.capacity:
                    continue  # one tile alone is too large: NKI204
                reporter.at_site(
                    at.site,
                    f"SBUF needs at least {o.total} B per partition at the allocation of {at.name} but "
                    f"{o.capacity} B are usable on {target.name}; live together: {live_text(mem, o.live, 8)}",
                    hint="stream large tensors in tiles, allocate temporaries in the loop that uses them, or use "
                    "narrower dtypes",
                    kernel=kernel.name,
                )
