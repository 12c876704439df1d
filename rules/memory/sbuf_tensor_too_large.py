"""NKI204 sbuf-tensor-too-large: one SBUF tensor is larger than an SBUF partition."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import memory as mm
from nkilint.model.views import node
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._sizes import attainable_bytes, fit_condition, fmt_count, free_elements, sbuf_limits


class SbufTensorTooLarge(Rule):
    id = "NKI204"
    name = "sbuf-tensor-too-large"
    family = "memory"
    level = Level.ERROR
    summary = "One SBUF tensor needs more bytes per partition than the target's usable SBUF"
    explanation = """
Finds a single SBUF tensor whose bytes per partition (the product of its
free dimensions times the dtype size; legacy block dimensions are logical
tiles, so one block is checked) exceed the usable space of a partition. On
trn3, where the usable size is an assumption, a tensor between the assumed
budget and the physical 256 KiB is a warning. Set
`sbuf_usable_bytes_per_partition` in `[tool.nkilint.hardware]` to use your
own budget.

**Why on Trainium:** SBUF has 128 partitions of 192 KiB (trn1), 224 KiB
(trn2) or 256 KiB (trn3) each, and the compiler keeps part of every
partition for itself: kernels may allocate 176 KiB per partition on trn1
(legacy direct-allocation guide: "192KiB-16KiB"), 212 728 B on trn2 (the
budget nki-library computes: `224*1024 - 16384 - 8 - 256`); for trn3 the
docs give no number and nkilint assumes 240 KiB. A tensor larger than the
usable space cannot be allocated.

**Fix:** tile the free dimension and stream the tiles (load, compute and
store one block per loop iteration), or keep the data in a narrower dtype.
"""
    references = (
        "aws-neuron-sdk general/nki/nki_direct_allocation_guide.rst at 0521004c (176 KiB usable on NeuronCore-v2)",
        "aws-neuron-sdk nki/guides/architecture/trainium2_arch.rst (24/28/32 MiB SBUF)",
        "nki-library src/nkilib_src/nkilib/core/mlp/mlp_cte/mlp_cte_constants.py (trn2 budget)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def cache_kernel(x):
                out = nl.ndarray((128, 53248), dtype=nl.float32, buffer=nl.shared_hbm)
                cache = nl.ndarray((128, 53248), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=cache, src=x)
                nisa.activation(dst=cache, op=nl.exp, data=cache)
                nisa.dma_copy(dst=out, src=cache)
                return out
            """,
            lines=[8],
            title="current API: a 208 KiB-per-partition cache on trn1 (176 KiB usable)",
            target="trn1",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def cache_kernel(x):
                out = nl.ndarray((128, 45056), dtype=nl.float32, buffer=nl.shared_hbm)
                cache = nl.ndarray((128, 45056), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=cache, src=x)
                nisa.activation(dst=cache, op=nl.exp, data=cache)
                nisa.dma_copy(dst=out, src=cache)
                return out
            """,
            title="176 KiB per partition: exactly the trn1 budget",
            target="trn1",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def cache_kernel(x):
                out = nl.ndarray((128, 65536), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:65536], dtype=nl.float32)
                nl.store(out, value=nl.exp(t))
                return out
            """,
            lines=[7, 8],
            title="legacy API: nl.load of a 256 KiB-per-partition slice (and its exp)",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def cache_kernel(x):
                out = nl.ndarray((128, 65536), dtype=nl.float32, buffer=nl.shared_hbm)
                for j in nl.affine_range(16):
                    t = nl.load(x[0:128, j * 4096:(j + 1) * 4096], dtype=nl.float32)
                    nl.store(out[0:128, j * 4096:(j + 1) * 4096], value=nl.exp(t))
                return out
            """,
            title="legacy API: streamed in 16 KiB tiles",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        usable, raw, assumed = sbuf_limits(ctx)
        reporter = Reporter(ctx)
        name = ctx.target.name
        for kernel in ctx.model.kernels:
            mem = mm.analyze(kernel, ctx.target)
            for t in mem.of("sbuf"):
                if t.fused:
                    continue
                elems = free_elements(t.shape_v, t.partition_axis)
                block = " per block" if t.blocks_v is not None else ""
                what = f"SBUF tensor {t.name} is {t.tile_lo} B per partition{block} ({fmt_count(elems)} x {t.dtype or '?'})"
                hint = "tile the free dimension and stream blocks through a loop, or use a narrower dtype"
                if t.tile_lo > usable:
                    if assumed and t.tile_lo <= raw:
                        reporter.at_site(
                            t.site,
                            f"{what}; nkilint assumes {usable} B per partition are usable on {name} (the physical "
                            f"partition holds {raw} B)",
                            level=Level.WARNING, hint=hint, kernel=kernel.name,
                        )
                    else:
                        limit = (f"an SBUF partition holds {raw} B on {name}" if assumed
                                 else f"at most {usable} B per partition are usable on {name}")
                        reporter.at_site(
                            t.site, f"{what}; {limit}",
                            level=Level.ERROR, hint=hint, kernel=kernel.name,
                        )
                    continue
                hi = attainable_bytes(node(mem.graph, t.node_id)) if t.blocks_v is None else None
                if hi is not None and hi > usable:
                    reporter.at_site(
                        t.site,
                        f"SBUF tensor {t.name} may be up to {int(hi)} B per partition ({fmt_count(elems)} x "
                        f"{t.dtype}); at most {usable} B per partition are usable on {name}"
                        f"{fit_condition(node(mem.graph, t.node_id), usable)}",
                        level=Level.WARNING, hint=hint, kernel=kernel.name,
                    )
