"""NKI206 placement-out-of-range: an explicitly placed tensor lies outside its memory."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import memory as mm
from nkilint.model import query as q
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._sizes import sbuf_limits


class PlacementOutOfRange(Rule):
    id = "NKI206"
    name = "placement-out-of-range"
    family = "memory"
    level = Level.ERROR
    summary = "An explicit SBUF/PSUM placement (address=, ncc.*.mod_alloc) does not fit the memory or is misaligned"
    explanation = """
Finds tensors placed by hand — `nl.ndarray(..., address=(partition_offset,
byte_offset))` (NKI 0.2+) and the legacy `ncc.sbuf.mod_alloc(base_addr=...)`
/ `ncc.psum.mod_alloc(base_bank=...)` — whose placement does not fit:

* SBUF: `byte_offset` + the tensor's bytes per partition (times the
  `num_free_tiles` of `mod_alloc`) must stay within the usable bytes per
  partition (176 KiB on trn1: "a valid byte_addr can be any integer values
  from 0 to 192KiB-16KiB"; 212 728 B on trn2);
* PSUM: the offset must be at the start of a bank ("the allocation for PSUM
  tensors must start at the beginning of each bank — the compiler will throw
  an error otherwise") and the tensor must end within the 16 KiB
  (8 banks x 2 KiB) of a partition;
* the partition offset plus the partition size must stay within 128.

Offsets are read as bytes, as nki-library's allocator (`SbufManager`) and
the PSUM example of the migration guide use them. Only placements whose
numbers nkilint knows exactly are checked (not ones computed from an
allocator object's state, which the model cannot follow through loops).

**Why on Trainium:** the compiler does not move an explicitly placed
tensor, so the placement itself must lie inside the memory the kernel may
use: the usable bytes of each SBUF partition, whole PSUM banks, and the 128
partitions.

**Fix:** move the tensor (a smaller offset, `bank * 2048` for PSUM), shrink
it, or let the compiler allocate it (drop `address=`).
"""
    references = (
        "aws-neuron-sdk nki/migration/index.rst (Improved allocation API; PSUM bank alignment)",
        "aws-neuron-sdk general/nki/api/nki/compiler/sbuf.py and psum.py at 0521004c",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            BANK = 2048

            @nki.jit
            def placed(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf, address=(0, 0))
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf, address=(0, 256))
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum, address=(0, BANK // 2))
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf, address=(0, 212 * 1024))
                nisa.tensor_copy(dst=res, src=ps)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[14, 16],
            title="a PSUM tile in the middle of a bank; an SBUF tile past the trn2 budget",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            BANK = 2048

            @nki.jit
            def placed(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf, address=(0, 0))
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf, address=(0, 256))
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum, address=(0, 3 * BANK))
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf, address=(0, 1280))
                nisa.tensor_copy(dst=res, src=ps)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="PSUM on bank 3, SBUF tiles packed from byte 0",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.compiler as ncc

            @nki.jit
            def placed(x):
                out = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                buf = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32,
                                 buffer=ncc.sbuf.mod_alloc(base_addr=176 * 1024 - 2048, num_free_tiles=(2,)))
                for i in nl.affine_range(4):
                    buf[i] = nl.load(x[i])
                    nl.store(out[i], value=buf[i])
                return out
            """,
            lines=[8],
            title="legacy API: two 2 KiB physical tiles from 174 KiB end past 176 KiB on trn1",
            target="trn1",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.compiler as ncc

            @nki.jit
            def placed(x):
                out = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                buf = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32,
                                 buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
                for i in nl.affine_range(4):
                    buf[i] = nl.load(x[i])
                    nl.store(out[i], value=buf[i])
                return out
            """,
            title="legacy API: double-buffered from byte 0",
            target="trn1",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        target = ctx.target
        bank = target.psum_bank_bytes
        usable, raw, assumed = sbuf_limits(ctx)
        for kernel in ctx.model.kernels:
            mem = mm.analyze(kernel, target)
            for t in mem.tensors.values():
                if not t.explicit or t.fused:
                    continue
                p = mm.placement(t, target)
                if p is None:
                    continue
                site = t.site
                where = f"{t.buffer.upper()} tensor {t.name} placed at {p.text}"
                psize = q.partition_size(t.data)
                pc = None if psize is None else q.lower(psize)
                if pc is not None and p.p0 + pc > target.partitions:
                    reporter.at_site(site, f"{where} spans partitions {p.p0} to {p.p0 + int(pc) - 1}; there are "
                                     f"{target.partitions}", kernel=kernel.name,
                                     hint="start at partition 0 or shrink the partition dimension")
                    continue
                if t.buffer == "psum":
                    cap = target.psum_banks * bank
                    if p.b0 % bank:
                        reporter.at_site(site, f"{where} starts at byte {p.b0}, inside bank {p.b0 // bank}; PSUM "
                                         f"tensors must start at a bank boundary (a multiple of {bank} B)",
                                         kernel=kernel.name, hint=f"use address=(0, bank * {bank})")
                    elif p.b1 > cap:
                        reporter.at_site(site, f"{where} occupies bytes {p.b0} to {p.b1} of each partition; PSUM "
                                         f"holds {cap} B per partition on {target.name}", kernel=kernel.name,
                                         hint="use a lower bank or a smaller tile")
                    continue
                if p.b1 > usable:
                    level = Level.WARNING if assumed and p.b1 <= raw else Level.ERROR
                    reporter.at_site(site, f"{where} occupies bytes {p.b0} to {p.b1} of each partition; "
                                     f"{usable} B per partition are usable on {target.name}", level=level,
                                     kernel=kernel.name, hint="move it to a lower offset or shrink it")
