"""NKI202 psum-tensor-exceeds-psum: a PSUM tensor is larger than all of PSUM."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import memory as mm
from nkilint.model.views import node
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._sizes import attainable_bytes, fit_condition, fmt_count, free_elements


class PsumTensorExceedsPsum(Rule):
    id = "NKI202"
    name = "psum-tensor-exceeds-psum"
    family = "memory"
    level = Level.ERROR
    summary = "One PSUM tensor is larger than all of PSUM (8 banks x 2 KiB = 16 KiB per partition)"
    explanation = """
Finds a single PSUM tensor whose free dimensions need more bytes per
partition than all of PSUM holds. nkilint assumes all 8 banks are usable
(the documented default); set `psum_banks = 7` in `[tool.nkilint.hardware]`
when your build reserves one. Legacy block dimensions
(`(B, par_dim(P), F)`) are logical tiles, so one block is checked.

**Why on Trainium:** each of the 128 PSUM partitions holds 16 KiB: 8 banks
of 2 KiB (`nl.tile_size.psum_num_banks`; 7 usable banks when
`NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE=true` reserves bank 7 for
`nc_transpose`). A tensor larger than that cannot be allocated at all.

**Fix:** keep PSUM for matmul results and evict them to SBUF right away
(`nisa.tensor_copy`); tile the free dimension so that each PSUM tensor holds
at most one bank (512 fp32 values), allocated inside the loop that fills it.
"""
    references = (
        "aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (16 KiB per partition, 8 banks)",
        "aws-neuron-sdk nki/api/nki.language.tile_size.rst (psum_num_banks: 8, or 7)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scores_kernel(q, k):
                out = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.shared_hbm)
                qk = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.psum)
                qt = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=qt, src=q)
                for j in range(16):
                    kt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=kt, src=k[:, j * 512:(j + 1) * 512])
                    nisa.nc_matmul(dst=qk[:, j * 512:(j + 1) * 512], stationary=qt, moving=kt)
                res = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=qk)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[8],
            title="current API: a 32 KiB-per-partition PSUM tensor",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scores_kernel(q, k):
                out = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.shared_hbm)
                qt = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=qt, src=q)
                res = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.sbuf)
                for j in range(16):
                    kt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=kt, src=k[:, j * 512:(j + 1) * 512])
                    qk = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=qk, stationary=qt, moving=kt)
                    nisa.tensor_copy(dst=res[:, j * 512:(j + 1) * 512], src=qk)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="one bank per iteration, evicted to SBUF",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def acc_kernel(x):
                out = nl.ndarray((128, 6144), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 6144), dtype=nl.float32, buffer=nl.psum)
                t = nl.load(x)
                acc[...] += t
                nl.store(out, value=acc)
                return out
            """,
            lines=[7],
            title="legacy API: a 24 KiB PSUM accumulator",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def acc_kernel(x):
                out = nl.ndarray((128, 6144), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 6144), dtype=nl.float32, buffer=nl.sbuf)
                t = nl.load(x)
                acc[...] += t
                nl.store(out, value=acc)
                return out
            """,
            title="legacy API: the accumulator in SBUF",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        cap_banks = ctx.target.psum_banks
        bank = ctx.target.psum_bank_bytes
        cap = cap_banks * bank
        for kernel in ctx.model.kernels:
            mem = mm.analyze(kernel, ctx.target)
            for t in mem.of("psum"):
                if t.fused:
                    continue
                elems = free_elements(t.shape_v, t.partition_axis)
                block = " per block" if t.blocks_v is not None else ""
                where = f"PSUM holds {cap} B per partition on {ctx.target.name} ({cap_banks} banks of {bank} B)"
                hint = "evict matmul results to SBUF and keep each PSUM tensor within one bank (512 fp32 values)"
                if t.tile_lo > cap:
                    reporter.at_site(
                        t.site,
                        f"PSUM tensor {t.name} is {t.tile_lo} B per partition{block} ({fmt_count(elems)} x "
                        f"{t.dtype}); {where}",
                        level=Level.ERROR, hint=hint, kernel=kernel.name,
                    )
                    continue
                hi = attainable_bytes(node(mem.graph, t.node_id)) if t.blocks_v is None else None
                if hi is not None and hi > cap:
                    reporter.at_site(
                        t.site,
                        f"PSUM tensor {t.name} may be up to {int(hi)} B per partition ({fmt_count(elems)} x "
                        f"{t.dtype}); {where}{fit_condition(node(mem.graph, t.node_id), cap)}",
                        level=Level.WARNING, hint=hint, kernel=kernel.name,
                    )
