"""NKI207 placement-overlap: two explicitly placed tensors overlap while both are live."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import memory as mm
from nkilint.model import query as q
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._text import site_related


def _span_text(buffer: str, p: mm.Placement, bank: int) -> str:
    if buffer == "psum" and p.b0 % bank == 0 and p.b1 % bank == 0:
        first, last = p.b0 // bank, p.b1 // bank - 1
        return f"bank {first}" if first == last else f"banks {first}-{last}"
    return f"bytes {p.b0} to {p.b1}"


class PlacementOverlap(Rule):
    id = "NKI207"
    name = "placement-overlap"
    family = "memory"
    level = Level.ERROR
    summary = "Two explicitly placed tensors share SBUF/PSUM bytes while both are live"
    explanation = """
Finds an explicitly placed tensor (`address=`, legacy `ncc.sbuf.mod_alloc` /
`ncc.psum.mod_alloc`) whose bytes overlap, on the same partitions, another
placed tensor that is still live (allocated earlier, used later), when both
placements are known exactly.

**Why on Trainium:** with explicit placement the compiler does not allocate
the tensor: two tensors whose byte ranges overlap on the same partitions
overwrite each other when their lifetimes overlap (the legacy allocation
guide warns that "the compiler's ability to check for race condition and
lifetime conflicts is limited").

**Fix:** give the tensors disjoint ranges (offset the second by the first's
bytes per partition), or end the first tensor's last use before the second
is written.
"""
    references = (
        "aws-neuron-sdk general/nki/nki_direct_allocation_guide.rst at 0521004c (Known Limitations)",
        "aws-neuron-sdk nki/migration/index.rst (Improved allocation API)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add_kernel(x, y):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf, address=(0, 0))
                b = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf, address=(0, 1024))
                nisa.dma_copy(dst=a, src=x)
                nisa.dma_copy(dst=b, src=y)
                nisa.tensor_tensor(dst=a, data1=a, data2=b, op=nl.add)
                nisa.dma_copy(dst=out, src=a)
                return out
            """,
            lines=[9],
            title="b starts in the middle of a (a takes 2048 B per partition)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add_kernel(x, y):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf, address=(0, 0))
                b = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf, address=(0, 2048))
                nisa.dma_copy(dst=a, src=x)
                nisa.dma_copy(dst=b, src=y)
                nisa.tensor_tensor(dst=a, data1=a, data2=b, op=nl.add)
                nisa.dma_copy(dst=out, src=a)
                return out
            """,
            title="disjoint byte ranges",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa
            import neuronxcc.nki.compiler as ncc

            @nki.jit
            def two_accumulators(xT, w1, w2):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x = nl.load(xT)
                p1 = nl.ndarray((1, nl.par_dim(128), 512), dtype=nl.float32,
                                buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(1,)))
                p2 = nl.ndarray((1, nl.par_dim(128), 512), dtype=nl.float32,
                                buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(1,)))
                p1[0] = nisa.nc_matmul(x, nl.load(w1))
                p2[0] = nisa.nc_matmul(x, nl.load(w2))
                nl.store(out, value=nl.add(p1[0], p2[0]))
                return out
            """,
            lines=[12],
            title="legacy API: two PSUM tensors on bank 0",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        target = ctx.target
        bank = target.psum_bank_bytes
        for kernel in ctx.model.kernels:
            mem = mm.analyze(kernel, target)
            placed = []
            for t in sorted(mem.tensors.values(), key=lambda t: t.start):
                if not t.explicit or not t.counted:
                    continue
                p = mm.placement(t, target)
                psize = q.partition_size(t.data)
                pc = None if psize is None else q.lower(psize)
                if p is None or pc is None:
                    continue
                for u, pu, pcu in placed:
                    if u.buffer != t.buffer or u.end < t.start:
                        continue
                    if p.p0 >= pu.p0 + pcu or pu.p0 >= p.p0 + pc:
                        continue
                    if p.b0 >= pu.b1 or pu.b0 >= p.b1:
                        continue
                    reporter.at_site(
                        t.site,
                        f"{t.buffer.upper()} tensor {t.name} ({_span_text(t.buffer, p, bank)}) overlaps {u.name} "
                        f"({_span_text(u.buffer, pu, bank)}, {ctx.model.line_ref(u.site)}) on partitions {max(p.p0, pu.p0)} to "
                        f"{min(p.p0 + int(pc), pu.p0 + int(pcu)) - 1} while {u.name} is still live",
                        hint=f"place {t.name} at byte {pu.b1} or later, or end {u.name}'s last use first",
                        kernel=kernel.name,
                        related=site_related(ctx, [(u.site, f"{u.name} is placed here")]),
                    )
                    break
                placed.append((t, p, int(pc)))
