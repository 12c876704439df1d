"""NKI203 psum-bank-oversubscription: more PSUM banks are live at once than the hardware has."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import memory as mm
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._text import live_text, site_related


class PsumBankOversubscription(Rule):
    id = "NKI203"
    name = "psum-bank-oversubscription"
    family = "memory"
    level = Level.WARNING
    summary = "More PSUM banks are live at once than the target has (8 per partition)"
    explanation = """
Finds the allocation at which more PSUM banks must be live together than
the target has, and names every tile sharing PSUM at that point. nkilint
counts what must be live together, as a lower bound:

* tensors allocated earlier and used later (at the same level or in
  enclosing loops): a tensor used inside a loop stays live for the whole loop;
* tiles stored in a list inside a loop (`tiles.append(ps)`, or a list
  comprehension of PSUM tiles) and used after it: one tile per iteration;
* a tile allocated inside a loop and used only there counts **once**: the
  compiler may rotate it through more banks to pipeline iterations
  (multi-buffering), but only when banks are free, so nkilint never counts
  those extra buffers (nki-library asks for them explicitly with
  `ncc.multi_buffer`);
* legacy block dimensions are logical and count one block; a legacy tile
  that is accumulated into another (`ps[...] += nl.matmul(...)`) takes no
  bank of its own;
* explicitly placed tensors (`address=`) count by their addresses, since
  authors alias banks on purpose (`(i % 2) * 2048` rotations); conflicts
  between placed tensors are NKI207.

It assumes 8 usable banks, the documented default of
`nl.tile_size.psum_num_banks`; with `NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE=true`
bank 7 is reserved for `nc_transpose` and only 7 are usable — set
`psum_banks = 7` in `[tool.nkilint.hardware]` for that build.

**Why on Trainium:** TensorE accumulates matmul results in PSUM, 8 banks of
2 KiB per partition. Every PSUM tensor starts at a bank boundary (the
compiler rejects other placements), so each live PSUM tensor takes at least
one whole bank. When more banks must be live together than the target has,
the compiler has to spill PSUM data to SBUF and back ("if the total size of
the live data ... overflows the capacity of any on-chip memory, the Neuron
compiler will insert the necessary spills or refills"), which serializes
TensorE behind the evictions — or the kernel fails to allocate.

**Fix:** evict each result to SBUF (`nisa.tensor_copy`) inside the loop
that produces it instead of keeping a list of PSUM tiles; accumulate into
fewer, larger-K groups; allocate PSUM tiles inside the loop that uses them.
"""
    references = (
        "aws-neuron-sdk nki/get-started/about/memory-hierarchy-overview.rst (spills when live data overflows)",
        "aws-neuron-sdk nki/api/nki.language.tile_size.rst (psum_num_banks: 8, or 7)",
        "aws-neuron-sdk nki/migration/index.rst (PSUM allocations start at a bank boundary)",
        "aws-neuron-sdk nki/library/specs/design-rmsnorm-quant.rst (explicit ncc.multi_buffer for PSUM)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def block_matmul(lhsT, rhs):
                out = nl.ndarray((128, 4608), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                results = []
                for j in range(9):
                    b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=b, src=rhs[:, j * 512:(j + 1) * 512])
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                    results.append(ps)
                for j in range(9):
                    res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=res, src=results[j])
                    nisa.dma_copy(dst=out[:, j * 512:(j + 1) * 512], src=res)
                return out
            """,
            lines=[14],
            title="nine PSUM tiles kept in a list: 9 banks live, 8 available",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def block_matmul(lhsT, rhs):
                out = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                results = []
                for j in range(8):
                    b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=b, src=rhs[:, j * 512:(j + 1) * 512])
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                    results.append(ps)
                for j in range(8):
                    res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=res, src=results[j])
                    nisa.dma_copy(dst=out[:, j * 512:(j + 1) * 512], src=res)
                return out
            """,
            title="eight PSUM tiles: exactly the 8 banks",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def block_matmul(lhsT, rhs):
                out = nl.ndarray((128, 4608), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                for j in range(9):
                    b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=b, src=rhs[:, j * 512:(j + 1) * 512])
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                    res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=res, src=ps)
                    nisa.dma_copy(dst=out[:, j * 512:(j + 1) * 512], src=res)
                return out
            """,
            title="each tile evicted inside the loop: one bank per iteration",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def many_accumulators(x, w):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                accs = [nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum) for i in range(9)]
                xt = nl.load(x)
                for i in nl.affine_range(9):
                    wt = nl.load(w[i])
                    accs[i] += nl.matmul(xt, wt, transpose_x=True)
                total = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.affine_range(9):
                    total[...] += accs[i]
                nl.store(out, value=total)
                return out
            """,
            lines=[7],
            title="legacy API: a list of nine PSUM accumulators",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        target = ctx.target
        for kernel in ctx.model.kernels:
            mem = mm.analyze(kernel, target)
            for o in mem.overflows("psum"):
                at = o.at
                if at.banks(mem.bank_bytes) > o.capacity:
                    continue  # one tile alone is too large: NKI202
                reporter.at_site(
                    at.site,
                    f"PSUM needs at least {o.total} banks at the allocation of {at.name} but {target.name} has "
                    f"{o.capacity} ({mem.bank_bytes} B each); live together: {live_text(mem, o.live)}",
                    hint="evict each PSUM result to SBUF (nisa.tensor_copy) in the loop that produces it, instead of "
                    "keeping several PSUM tiles live",
                    kernel=kernel.name,
                    related=site_related(ctx, [(t.site, f"{t.name} is live here") for t in o.live
                                                if t is not at]),
                )
