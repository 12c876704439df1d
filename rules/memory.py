"""Memory family (NKI2xx): PSUM and SBUF capacity, operand placement.

Capacity (NKI201-NKI207) rests on the memory model in
``nkilint/model/memory.py`` (footprints, live ranges, live sets; every
number a lower bound, its assumptions documented there). Placement
(NKI210-NKI216) reads each op's operands and the buffer of their base
tensor. Facts: ../shared/NKI-REFERENCE.md sections 2.1-2.3, 2.6-2.7 and the
PS*/SB*/MEM* entries of section 3, checked against aws-neuron-sdk.
"""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import memory as mm
from nkilint.model import query as q
from nkilint.model.graph import Site
from nkilint.rule import Rule, invalid, valid
from nkilint.versions import V0_3

from . import _memory_facts as f
from ._common import Reporter


def _site_related(ctx: RuleContext, items: list[tuple[Site | None, str]]) -> list[tuple[ast.AST, str]]:
    """Related locations in this file (others cannot be shown)."""
    out = []
    for site, text in items:
        if site is not None and ctx.model.in_this_file(site):
            out.append((site.node, text))
    return out


def _copies_text(mem: mm.KernelMemory, t: mm.TensorMem) -> str:
    if t.copies <= 1:
        return ""
    line = mem.loop_line(t.copies_loop)
    return f" (one per iteration of the loop at line {line}, kept in a list)" if line else " (kept in a list)"


def _live_text(mem: mm.KernelMemory, live: list[mm.TensorMem], limit: int = 10) -> str:
    bank = mem.bank_bytes
    ordered = sorted(live, key=lambda t: (-t.footprint(bank), t.start))
    parts = [t.describe(bank) + _copies_text(mem, t) for t in ordered[:limit]]
    if len(ordered) > limit:
        parts.append(f"and {len(ordered) - limit} more")
    return "; ".join(parts)


def _assumed_text(kernel, ops: list) -> str:
    """The condition under which parameters are in HBM (see kernel_role)."""
    if not ops:
        return ""
    names = ", ".join(sorted({o.name for o in ops}))
    return (f" (if {kernel.name} is launched as a top-level kernel: {names} "
            f"{'are its parameters' if len(ops) > 1 else 'is its parameter'}, in HBM)")


def _legacy_or_before(ctx: RuleContext, version=V0_3) -> bool:
    """The file uses the legacy API or targets an NKI version before ``version``."""
    return ctx.model.legacy or ctx.nki_version < version


# =========================================================== PSUM capacity
class PsumTileExceedsBank(Rule):
    id = "NKI201"
    name = "psum-tile-exceeds-bank"
    family = "memory"
    level = Level.ERROR
    summary = "A matmul or transpose writes a PSUM tile larger than one PSUM bank (2 KiB per partition)"
    explanation = """
PSUM is split into 8 banks of 2 KiB per partition (512 fp32 values). A
TensorE instruction writes its result into one bank: the destination of
`nisa.nc_matmul` / `nl.matmul` or of a TensorE transpose may hold at most
`nl.tile_size.psum_bank_fmax` (512) fp32 values per partition on trn1 and
trn2. On trn3 (NeuronCore-v4) `nc_matmul` and `nc_matmul_mx` may span all 8
banks: at most 4096 fp32 or 8192 bf16 values (16 KiB) per partition.

The rule reports the matmul or transpose whose destination is larger
(error; a warning naming the bound when only some values the code allows
are too large). It also warns at a PSUM allocation larger than one bank
that an instruction other than a trn3 matmul reads or writes whole
(Tile-Size Constraint #2: "for tiles in PSUM, the F dimension size must
not exceed `psum_bank_fmax`"); a multi-bank PSUM tensor that every
instruction accesses one bank-sized slice at a time is fine. With the legacy
direct-allocation API (`ncc.psum.alloc` / `mod_alloc`) a physical PSUM
tile cannot span banks at all, so that case is an error.

**Fix:** tile the free dimension by 512 fp32 values (one bank): loop over
`j` and write `ps[:, j * 512:(j + 1) * 512]`, or allocate one PSUM tile
per block; on trn3 keep matmul destinations within 4096 fp32 / 8192 bf16.
"""
    references = (
        "aws-neuron-sdk nki/get-started/about/tiling-overview.rst (Tile-Size Constraint #2)",
        "aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (PSUM banks)",
        "aws-neuron-sdk nki/api/nki/isa/__init__.py (nc_matmul tile size; gen4 4096 fp32 / 8192 bf16)",
        "aws-neuron-sdk general/nki/api/nki/compiler/psum.py at 0521004c (a physical PSUM tile cannot span banks)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[0:128, 0:128])
                nisa.dma_copy(dst=b, src=rhs[0:128, 0:1024])
                acc = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=acc, stationary=a, moving=b)
                res = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[13],
            title="current API: a 1024-wide fp32 matmul result spans two banks on trn2",
            level=Level.ERROR,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[0:128, 0:128])
                nisa.dma_copy(dst=b, src=rhs[0:128, 0:1024])
                acc = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=acc, stationary=a, moving=b)
                res = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="the same kernel on trn3: nc_matmul may write up to 4096 fp32 values",
            target="trn3",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[0:128, 0:128])
                acc = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
                for j in range(2):
                    b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=b, src=rhs[0:128, j * 512:(j + 1) * 512])
                    nisa.nc_matmul(dst=acc[:, j * 512:(j + 1) * 512], stationary=a, moving=b)
                    res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=res, src=acc[:, j * 512:(j + 1) * 512])
                    nisa.dma_copy(dst=out[:, j * 512:(j + 1) * 512], src=res)
                return out
            """,
            title="a two-bank PSUM tensor written and read one bank at a time",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.load(lhsT[0:128, 0:128])
                b = nl.load(rhs[0:128, 0:1024])
                res = nl.matmul(a, b, transpose_x=True)
                nl.store(out, value=nl.copy(res))
                return out
            """,
            lines=[9],
            title="legacy API: nl.matmul returns a 128 x 1024 fp32 PSUM tile",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.load(lhsT[0:128, 0:128])
                for j in nl.affine_range(2):
                    b = nl.load(rhs[0:128, j * 512:(j + 1) * 512])
                    res = nl.matmul(a, b, transpose_x=True)
                    nl.store(out[0:128, j * 512:(j + 1) * 512], value=nl.copy(res))
                return out
            """,
            title="legacy API: 128 x 512 fp32 results fill one bank exactly",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                scratch = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
                nisa.activation(dst=scratch, op=nl.exp, data=t)
                nisa.tensor_copy(dst=t, src=scratch)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="a two-bank PSUM tensor that activation writes whole: a warning at the allocation",
            level=Level.WARNING,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for kernel in ctx.model.kernels:
            g = kernel.graph
            reported: set[str] = set()
            for op_id, data in g.ops():
                api = str(data.get("api") or "")
                if api not in f.MATMULS + f.TRANSPOSES:
                    continue
                dst = f.written_dst(g, op_id)
                if dst is None or dst.buffer != "psum":
                    continue
                transpose = api in f.TRANSPOSES or f.is_true(f.param(data, "is_transpose"))
                limit, what = self._limit(ctx, transpose)
                if self._report_size(ctx, reporter, g, dst, data, limit, what, kernel.name, op=True):
                    reported.add(dst.base_id)
            for node_id, data in g.tensors():
                if data.get("buffer") != "psum" or data.get("origin") != "alloc" or node_id in reported:
                    continue
                self._check_alloc(ctx, reporter, g, node_id, data, kernel.name)

    @staticmethod
    def _limit(ctx: RuleContext, transpose: bool) -> tuple[int, str]:
        t = ctx.target
        if not transpose and t.generation >= 4:
            limit = max(t.gemm_moving_fmax * 4, t.gemm_moving_fmax_bf16_dst * 2)
            return limit, (
                f"nc_matmul on {t.name} writes at most {limit} B per partition "
                f"({t.gemm_moving_fmax} x float32 or {t.gemm_moving_fmax_bf16_dst} x bfloat16)"
            )
        return t.psum_bank_bytes, f"a bank holds {t.psum_bank_bytes} B on {t.name}"

    def _report_size(self, ctx, reporter, g, dst: f.Operand, op_data: dict, limit: int, what: str, kernel: str,
                     op: bool) -> bool:
        bytes_v, elems, dtype = f.node_bytes(g, dst.node_id)
        if bytes_v is None:
            return False
        lo = q.lower(bytes_v)
        shape = f"{f.fmt_count(elems)} x {dtype}"
        if dst.base.get("name"):
            subject = f"PSUM tile {dst.name}" + (f" written by {f.op_short(op_data)}" if op else "")
        else:
            subject = f"the PSUM tile {f.op_short(op_data)} returns"
        hint = "tile the free dimension by 512 fp32 values (one PSUM bank) and write one slice per instruction"
        if lo is not None and lo > limit:
            return reporter.at_site(
                op_data.get("site"),
                f"{subject} is {int(lo)} B per partition ({shape}); {what}",
                level=Level.ERROR, hint=hint, kernel=kernel,
            )
        hi = f.attainable_bytes(g, dst.node_id)
        if hi is not None and hi > limit:
            return reporter.at_site(
                op_data.get("site"),
                f"{subject} may be up to {int(hi)} B per partition ({shape}); {what}"
                f"{f.fit_condition(g, dst.node_id, limit)}",
                level=Level.WARNING, hint=hint, kernel=kernel,
            )
        return False

    def _check_alloc(self, ctx, reporter, g, node_id: str, data: dict, kernel: str) -> None:
        target = ctx.target
        bank = target.psum_bank_bytes
        axis = data.get("partition_axis") or 0
        dtype = f.dtype_of(data)
        from nkilint.model.graph import DTYPE_BYTES

        size = DTYPE_BYTES.get(dtype or "")
        elems = f.free_elements(data.get("shape_v"), axis)
        if size is None or elems is None:
            return
        lo = q.lower(elems)
        if lo is None or lo * size <= bank:
            return
        nbytes = int(lo * size)
        name = q.tensor_name(data)
        address = data.get("address")
        if getattr(address, "how", None) in ("alloc", "mod_alloc"):
            reporter.at_site(
                data.get("site"),
                f"PSUM tile {name} is {nbytes} B per partition ({f.fmt_count(elems)} x {dtype}); with "
                f"ncc.psum.{address.how} a physical PSUM tile cannot span banks ({bank} B on {target.name})",
                level=Level.ERROR, kernel=kernel,
                hint="split the free dimension into blocks of at most 512 fp32 values",
            )
            return
        if target.generation >= 4 and self._gen4_matmul_dst(ctx, g, node_id):
            return  # trn3 matmuls write multi-bank PSUM tiles; evicting them whole is the point
        whole = self._whole_access(ctx, g, node_id)
        if whole is None:
            return
        op_data = g.attrs(whole)
        site = op_data.get("site")
        reporter.at_site(
            data.get("site"),
            f"PSUM tensor {name} is {nbytes} B per partition ({f.fmt_count(elems)} x {dtype}), more than one bank "
            f"({bank} B on {target.name}), and {f.op_short(op_data)} at line {site.line if site else '?'} accesses it "
            f"whole; a PSUM tile should fit in one bank (nl.tile_size.psum_bank_fmax = {target.psum_bank_fp32} fp32)",
            level=Level.WARNING, kernel=kernel,
            hint="access the tensor one bank-sized slice at a time, or allocate one PSUM tile per bank",
        )

    def _gen4_matmul_dst(self, ctx, g, node_id: str) -> bool:
        limit, _ = self._limit(ctx, False)
        for op_id in g.ops_writing(node_id):
            data = g.attrs(op_id)
            if str(data.get("api") or "") not in f.MATMULS or f.is_true(f.param(data, "is_transpose")):
                continue
            dst = f.written_dst(g, op_id)
            b = f.node_bytes(g, dst.node_id)[0] if dst is not None else None
            hi = f.attainable_bytes(g, dst.node_id) if dst is not None else None
            if b is not None and (q.lower(b) or 0) <= limit and (hi is None or hi <= limit):
                return True
        return False

    def _whole_access(self, ctx, g, node_id: str) -> str | None:
        """An op (not a trn3 matmul within its limit, not a DMA) that reads or
        writes more than one bank of the tensor in one instruction."""
        bank = ctx.target.psum_bank_bytes
        ops = sorted(set(g.ops_reading(node_id)) | set(g.ops_writing(node_id)), key=mm.position)
        for op_id in ops:
            data = g.attrs(op_id)
            if not f.is_compute(data):
                continue
            for o in f.operands(g, op_id):
                if o.base_id != node_id:
                    continue
                b, _, _ = f.node_bytes(g, o.node_id)
                lo = q.lower(b)
                if lo is None or lo <= bank:
                    continue
                api = str(data.get("api") or "")
                if api in f.MATMULS and ctx.target.generation >= 4 and o.written:
                    limit, _ = self._limit(ctx, False)
                    if lo <= limit:
                        continue
                return op_id
        return None


class PsumTensorExceedsPsum(Rule):
    id = "NKI202"
    name = "psum-tensor-exceeds-psum"
    family = "memory"
    level = Level.ERROR
    summary = "One PSUM tensor is larger than all of PSUM (8 banks x 2 KiB = 16 KiB per partition)"
    explanation = """
Each of the 128 PSUM partitions holds 16 KiB: 8 banks of 2 KiB
(`nl.tile_size.psum_num_banks`; 7 usable banks when
`NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE=true` reserves bank 7 for `nc_transpose`).
A single PSUM tensor whose free dimensions need more bytes per partition
than that cannot be allocated at all.

nkilint assumes all 8 banks are usable (the documented default); set
`psum_banks = 7` in `[tool.nkilint.hardware]` when your build reserves one.
Legacy block dimensions (`(B, par_dim(P), F)`) are logical tiles, so one
block is checked.

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
                elems = f.free_elements(t.shape_v, t.data.get("partition_axis") or 0)
                block = " per block" if t.blocks_v is not None else ""
                where = f"PSUM holds {cap} B per partition on {ctx.target.name} ({cap_banks} banks of {bank} B)"
                hint = "evict matmul results to SBUF and keep each PSUM tensor within one bank (512 fp32 values)"
                if t.tile_lo > cap:
                    reporter.at_site(
                        t.data.get("site"),
                        f"PSUM tensor {t.name} is {t.tile_lo} B per partition{block} ({f.fmt_count(elems)} x "
                        f"{t.dtype}); {where}",
                        level=Level.ERROR, hint=hint, kernel=kernel.name,
                    )
                    continue
                hi = f.attainable_bytes(mem.graph, t.node_id) if t.blocks_v is None else None
                if hi is not None and hi > cap:
                    reporter.at_site(
                        t.data.get("site"),
                        f"PSUM tensor {t.name} may be up to {int(hi)} B per partition ({f.fmt_count(elems)} x "
                        f"{t.dtype}); {where}{f.fit_condition(mem.graph, t.node_id, cap)}",
                        level=Level.WARNING, hint=hint, kernel=kernel.name,
                    )


class PsumBankOversubscription(Rule):
    id = "NKI203"
    name = "psum-bank-oversubscription"
    family = "memory"
    level = Level.WARNING
    summary = "More PSUM banks are live at once than the target has (8 per partition)"
    explanation = """
TensorE accumulates matmul results in PSUM, 8 banks of 2 KiB per partition.
Every PSUM tensor starts at a bank boundary (the compiler rejects other
placements), so each live PSUM tensor takes at least one whole bank. When
more banks must be live together than the target has, the compiler has to
spill PSUM data to SBUF and back ("if the total size of the live data ...
overflows the capacity of any on-chip memory, the Neuron compiler will
insert the necessary spills or refills"), which serializes TensorE behind
the evictions — or the kernel fails to allocate.

nkilint counts what must be live together, as a lower bound:

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
`psum_banks = 7` in `[tool.nkilint.hardware]` for that build. The finding is
reported at the allocation where the live banks first exceed the limit and
names every tile sharing PSUM at that point.

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
                    at.data.get("site"),
                    f"PSUM needs at least {o.total} banks at the allocation of {at.name} but {target.name} has "
                    f"{o.capacity} ({mem.bank_bytes} B each); live together: {_live_text(mem, o.live)}",
                    hint="evict each PSUM result to SBUF (nisa.tensor_copy) in the loop that produces it, instead of "
                    "keeping several PSUM tiles live",
                    kernel=kernel.name,
                    related=_site_related(ctx, [(t.data.get("site"), f"{t.name} is live here") for t in o.live
                                                if t is not at]),
                )


# =========================================================== SBUF capacity
def _sbuf_limits(ctx: RuleContext) -> tuple[int, int, bool]:
    """(usable, raw, usable-is-assumed) bytes per partition."""
    t = ctx.target
    return t.sbuf_usable_bytes_per_partition, t.sbuf_bytes_per_partition, "sbuf_usable_bytes_per_partition" in t.assumed


class SbufTensorTooLarge(Rule):
    id = "NKI204"
    name = "sbuf-tensor-too-large"
    family = "memory"
    level = Level.ERROR
    summary = "One SBUF tensor needs more bytes per partition than the target's usable SBUF"
    explanation = """
SBUF has 128 partitions of 192 KiB (trn1), 224 KiB (trn2) or 256 KiB (trn3)
each, and the compiler keeps part of every partition for itself: kernels
may allocate 176 KiB per partition on trn1 (legacy direct-allocation guide:
"192KiB-16KiB"), 212 728 B on trn2 (the budget nki-library computes:
`224*1024 - 16384 - 8 - 256`); for trn3 the docs give no number and nkilint
assumes 240 KiB. A tensor's bytes per partition are the product of its free
dimensions times the dtype size (legacy block dimensions are logical tiles:
one block is checked). A tensor larger than the usable space cannot be
allocated.

On trn3, where the usable size is an assumption, a tensor between the
assumed budget and the physical 256 KiB is a warning. Set
`sbuf_usable_bytes_per_partition` in `[tool.nkilint.hardware]` to use your
own budget.

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
        usable, raw, assumed = _sbuf_limits(ctx)
        reporter = Reporter(ctx)
        name = ctx.target.name
        for kernel in ctx.model.kernels:
            mem = mm.analyze(kernel, ctx.target)
            for t in mem.of("sbuf"):
                if t.fused:
                    continue
                elems = f.free_elements(t.shape_v, t.data.get("partition_axis") or 0)
                block = " per block" if t.blocks_v is not None else ""
                what = f"SBUF tensor {t.name} is {t.tile_lo} B per partition{block} ({f.fmt_count(elems)} x {t.dtype or '?'})"
                hint = "tile the free dimension and stream blocks through a loop, or use a narrower dtype"
                if t.tile_lo > usable:
                    if assumed and t.tile_lo <= raw:
                        reporter.at_site(
                            t.data.get("site"),
                            f"{what}; nkilint assumes {usable} B per partition are usable on {name} (the physical "
                            f"partition holds {raw} B)",
                            level=Level.WARNING, hint=hint, kernel=kernel.name,
                        )
                    else:
                        limit = (f"an SBUF partition holds {raw} B on {name}" if assumed
                                 else f"at most {usable} B per partition are usable on {name}")
                        reporter.at_site(
                            t.data.get("site"), f"{what}; {limit}",
                            level=Level.ERROR, hint=hint, kernel=kernel.name,
                        )
                    continue
                hi = f.attainable_bytes(mem.graph, t.node_id) if t.blocks_v is None else None
                if hi is not None and hi > usable:
                    reporter.at_site(
                        t.data.get("site"),
                        f"SBUF tensor {t.name} may be up to {int(hi)} B per partition ({f.fmt_count(elems)} x "
                        f"{t.dtype}); at most {usable} B per partition are usable on {name}"
                        f"{f.fit_condition(mem.graph, t.node_id, usable)}",
                        level=Level.WARNING, hint=hint, kernel=kernel.name,
                    )


class SbufLiveSetOverflow(Rule):
    id = "NKI205"
    name = "sbuf-live-set-overflow"
    family = "memory"
    level = Level.WARNING
    summary = "The SBUF tensors live at once need more bytes per partition than the target's usable SBUF"
    explanation = """
Every SBUF tensor occupies its bytes per partition from its allocation to
its last use. When the tensors live at one point of the kernel need more
than the usable SBUF per partition (176 KiB on trn1, 212 728 B on trn2, an
assumed 240 KiB on trn3; configurable as `sbuf_usable_bytes_per_partition`
in `[tool.nkilint.hardware]`), the compiler spills data to HBM and reloads
it ("the Neuron compiler will insert the necessary spills or refills"),
which costs DMA bandwidth, or fails to allocate.

The estimate is a lower bound over the kernel graph: a tensor is live from
its allocation to its last use (the whole loop when it is used inside a loop
it was not allocated in); a tile allocated inside a loop counts once (the
compiler's extra pipelining buffers are not counted), a tile stored in a
list in a loop counts once per iteration; legacy block dimensions count one
block; a tensor in a loop that may not run does not count. The finding names
the largest tensors live at the allocation where the budget is first
exceeded.

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
                    at.data.get("site"),
                    f"SBUF needs at least {o.total} B per partition at the allocation of {at.name} but "
                    f"{o.capacity} B are usable on {target.name}; live together: {_live_text(mem, o.live, 8)}",
                    hint="stream large tensors in tiles, allocate temporaries in the loop that uses them, or use "
                    "narrower dtypes",
                    kernel=kernel.name,
                )


# ====================================================== explicit placement
class PlacementOutOfRange(Rule):
    id = "NKI206"
    name = "placement-out-of-range"
    family = "memory"
    level = Level.ERROR
    summary = "An explicit SBUF/PSUM placement (address=, ncc.*.mod_alloc) does not fit the memory or is misaligned"
    explanation = """
`nl.ndarray(..., address=(partition_offset, byte_offset))` (NKI 0.2+) and
the legacy `ncc.sbuf.mod_alloc(base_addr=...)` / `ncc.psum.mod_alloc(
base_bank=...)` place a tensor by hand. The compiler does not move it, so
the placement must fit:

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
        usable, raw, assumed = _sbuf_limits(ctx)
        for kernel in ctx.model.kernels:
            mem = mm.analyze(kernel, target)
            for t in mem.tensors.values():
                if not t.explicit or t.fused:
                    continue
                p = mm.placement(t, target)
                if p is None:
                    continue
                site = t.data.get("site")
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
With explicit placement (`address=`, legacy `ncc.sbuf.mod_alloc` /
`ncc.psum.mod_alloc`) the compiler does not allocate the tensor: two tensors
whose byte ranges overlap on the same partitions overwrite each other when
their lifetimes overlap (the legacy allocation guide warns that "the
compiler's ability to check for race condition and lifetime conflicts is
limited"). nkilint reports a placed tensor whose bytes overlap another
placed tensor that is still live (allocated earlier, used later), when both
placements are known exactly.

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
                        t.data.get("site"),
                        f"{t.buffer.upper()} tensor {t.name} ({_span_text(t.buffer, p, bank)}) overlaps {u.name} "
                        f"({_span_text(u.buffer, pu, bank)}, line {u.line}) on partitions {max(p.p0, pu.p0)} to "
                        f"{min(p.p0 + int(pc), pu.p0 + int(pcu)) - 1} while {u.name} is still live",
                        hint=f"place {t.name} at byte {pu.b1} or later, or end {u.name}'s last use first",
                        kernel=kernel.name,
                        related=_site_related(ctx, [(u.data.get("site"), f"{u.name} is placed here")]),
                    )
                    break
                placed.append((t, p, int(pc)))


# ================================================================ placement
class ComputeOperandInHbm(Rule):
    id = "NKI210"
    name = "compute-operand-in-hbm"
    family = "memory"
    level = Level.ERROR
    summary = "A compute instruction reads or writes a tensor in HBM (compute engines only access SBUF and PSUM)"
    explanation = """
The Vector, Scalar, GpSimd and Tensor engines read and write only on-chip
memory (SBUF and PSUM). Kernel inputs and `nl.hbm` / `nl.shared_hbm`
tensors live in device memory (HBM) and must be copied on chip with a DMA
first; results go back with a DMA. The compiler rejects a compute call with
an HBM operand (legacy error `err_unsupported_memory`: "Expected operand
'x' of 'exp' to be in address space 'psum|sbuf', but got a tile in 'hbm'
instead"). Matmul and transpose operands are checked by NKI212; Python
operators on HBM tensors (`ptr + offsets`, pointer arithmetic left over
from a CUDA or Triton port) by the cuda family.

Operands whose buffer the model does not know (parameters of helpers
analysed on their own) are never reported.

**Fix:** allocate an SBUF tile, copy the data in with `nisa.dma_copy`
(legacy: `nl.load`), compute on the tile, and copy the result out to the HBM
output with `nisa.dma_copy` (legacy: `nl.store`).
"""
    references = (
        "aws-neuron-sdk nki/api/nki.errors.rst at 1db4d74e (err_unsupported_memory)",
        "aws-neuron-sdk nki/get-started/about/memory-hierarchy-overview.rst",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                nisa.activation(dst=out, op=nl.exp, data=x)
                return out
            """,
            lines=[8],
            title="current API: activation on the kernel input and output",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.exp, data=t)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="copied on chip first",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                y = nl.exp(x)
                nl.store(out, value=y)
                return out
            """,
            lines=[7],
            title="legacy API: nl.exp on the kernel input",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                y = nl.exp(nl.load(x))
                nl.store(out, value=y)
                return out
            """,
            title="legacy API: loaded first",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for kernel in ctx.model.kernels:
            g = kernel.graph
            role = f.kernel_role(ctx.model, kernel)
            for op_id, data in g.ops():
                api = str(data.get("api") or "")
                if not f.is_compute(data) or api in f.MATMULS + f.TRANSPOSES or data.get("operator"):
                    # `ptr + offsets` on an HBM tensor is CUDA/Triton pointer
                    # arithmetic, which the cuda family reports (NKI409).
                    continue
                bad = [o for o in f.operands(g, op_id, role) if o.buffer in f.HBM and o.param != "result"]
                if not bad:
                    continue
                names = ", ".join(f"{o.name} ({o.param}, {o.buffer})" for o in bad)
                assumed = all(o.assumed for o in bad)
                reporter.at_site(
                    data.get("site"),
                    f"{f.op_short(data)} runs on a compute engine but its operand{'s' if len(bad) > 1 else ''} "
                    f"{names} {'are' if len(bad) > 1 else 'is'} in HBM; compute engines access only SBUF and PSUM"
                    + _assumed_text(kernel, bad if assumed else []),
                    level=Level.WARNING if assumed else Level.ERROR,
                    hint="copy HBM data into an SBUF tile with nisa.dma_copy (legacy: nl.load) and write results back "
                    "with a DMA",
                    kernel=kernel.name,
                )


class DmaOperandMemory(Rule):
    id = "NKI211"
    name = "dma-operand-memory"
    family = "memory"
    level = Level.ERROR
    summary = "A load, store or DMA copy has an endpoint in a memory it cannot use"
    explanation = """
Data moves between HBM and on-chip memory with DMAs, and each DMA API
accepts only some memories:

* `nl.load(src)` loads **from HBM**: an SBUF or PSUM source is rejected
  (legacy `err_unsupported_memory`: "Expected operand 'src' of 'load' to be
  in address space 'hbm'"); `nl.store(dst, value)` stores **into HBM** from
  an on-chip tile.
* `nl.store` of a PSUM tile: legacy NKI inserted a copy to SBUF; from NKI
  0.3 it is not supported ("Storing a tile that resides in PSUM requires
  manually copying it to SBUF first").
* `nisa.dma_copy` moves data between HBM and SBUF; from NKI 0.3 it "no
  longer supports reading directly from PSUM" (migration guide 0.2 -> 0.3),
  and DMA engines do not write PSUM either.
* `nisa.dma_transpose` writes to SBUF.

The PSUM cases depend on the NKI version (`--nki-version`); the others hold
for every version.

**Fix:** evict PSUM results to SBUF with `nisa.tensor_copy` (legacy
`nl.copy`) before a DMA; load from and store to HBM tensors (kernel inputs,
`nl.shared_hbm` outputs); copy between on-chip tiles with
`nisa.tensor_copy`.
"""
    references = (
        "aws-neuron-sdk nki/migration/index.rst (dma_copy — reading from PSUM, NKI 0.3)",
        "aws-neuron-sdk release-notes/components/nki.rst (NKI 0.3 known issue: nl.store of PSUM tiles)",
        "aws-neuron-sdk nki/api/nki.errors.rst at 1db4d74e (err_unsupported_memory)",
        "aws-neuron-sdk nki/api/nki/isa/__init__.py (dma_copy: HBM or SBUF)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                nisa.dma_copy(dst=out, src=ps)
                return out
            """,
            lines=[14],
            title="current API: a DMA reading PSUM (NKI 0.3+)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                nisa.dma_copy(dst=out, src=ps)
                return out
            """,
            title="the same kernel for NKI 0.2, where dma_copy could still read PSUM",
            nki_version="0.2",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x)
                u = nl.load(t)
                nl.store(out, value=u)
                return out
            """,
            lines=[8],
            title="legacy API: nl.load from an SBUF tile",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x)
                u = nl.copy(t)
                nl.store(out, value=u)
                return out
            """,
            title="legacy API: on-chip copies use nl.copy",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        psum_rules = not _legacy_or_before(ctx)
        for kernel in ctx.model.kernels:
            g = kernel.graph
            role = f.kernel_role(ctx.model, kernel)
            for op_id, data in g.ops():
                api = str(data.get("api") or "")
                if data.get("assignment") or data.get("augmented"):
                    continue
                problem = self._problem(api, f.operands(g, op_id, role), psum_rules, ctx)
                if problem is None:
                    continue
                message, hint, operand = problem
                reporter.at_site(data.get("site"), message + _assumed_text(kernel, [operand] if operand.assumed else []),
                                 level=Level.WARNING if operand.assumed else Level.ERROR, hint=hint, kernel=kernel.name)

    @staticmethod
    def _problem(api: str, ops: list[f.Operand], psum_rules: bool, ctx: RuleContext) -> tuple[str, str, f.Operand] | None:
        def first(params: tuple[str, ...], buffers: tuple[str, ...], written: bool | None = None) -> f.Operand | None:
            for o in ops:
                if o.param in params and o.buffer in buffers and (written is None or o.written == written):
                    return o
            return None

        version = f"NKI {ctx.nki_version}"
        if api in ("nki.language.load", "nki.language.load_transpose2d"):
            o = first(("src", "arg0"), ("sbuf", "psum"), written=False)
            if o is not None:
                return (f"nl.{api.rsplit('.', 1)[-1]} loads from HBM but its source {o.name} is in {o.buffer.upper()}",
                        "copy between on-chip tiles with nl.copy / nisa.tensor_copy", o)
        if api == "nki.language.store":
            o = first(("dst", "arg0"), ("sbuf", "psum"), written=True)
            if o is not None:
                return (f"nl.store stores into HBM but its destination {o.name} is in {o.buffer.upper()}",
                        "store into an HBM tensor (a kernel output allocated with buffer=nl.shared_hbm)", o)
            o = first(("value", "arg1"), f.HBM, written=False)
            if o is not None:
                return (f"nl.store stores an on-chip tile but its value {o.name} is in HBM",
                        "load it into SBUF first, or copy HBM to HBM with nisa.dma_copy", o)
            o = first(("value", "arg1"), ("psum",), written=False)
            if o is not None and psum_rules:
                return (f"nl.store of PSUM tile {o.name} is not supported in {version} (the value must be in SBUF)",
                        "copy the PSUM tile to SBUF with nisa.tensor_copy first", o)
        if api == "nki.isa.dma_copy" and psum_rules:
            o = first(("src", "dst"), ("psum",))
            if o is not None:
                role = "reads" if not o.written else "writes"
                return (f"nisa.dma_copy {role} PSUM tensor {o.name}; from NKI 0.3 DMAs move data between HBM and SBUF "
                        f"only (target {version})",
                        "copy PSUM to SBUF with nisa.tensor_copy and DMA the SBUF tile", o)
        if api == "nki.isa.dma_transpose":
            o = first(("dst",), ("psum",) + f.HBM, written=True)
            if o is not None:
                return (f"nisa.dma_transpose writes to SBUF only, but its destination {o.name} is in {o.buffer.upper()}",
                        "transpose into an SBUF tile", o)
        return None


class MatmulOperandMemory(Rule):
    id = "NKI212"
    name = "matmul-operand-memory"
    family = "memory"
    level = Level.ERROR
    summary = "A TensorE matmul or transpose reads inputs outside SBUF or writes its result outside PSUM"
    explanation = """
The Tensor Engine reads its inputs from SBUF and writes its results to PSUM,
with no exceptions: `nisa.nc_matmul` (and `nc_matmul_mx`) "must read inputs
from SBUF and write outputs to PSUM", and a TensorE `nc_transpose` "must
read the input tile from SBUF and write the transposed result to PSUM". A
matmul whose destination is an SBUF tensor fails with "Matmult dst tensor
is not psum"; legacy code hits it by accumulating a matmul into an SBUF
tile (`sb[...] += nl.matmul(...)`). HBM operands of `nl.matmul` /
`nl.transpose` are reported too.

**Fix:** copy inputs into SBUF tiles first (a PSUM result used as the next
matmul's input must be copied to SBUF with `nisa.tensor_copy`), and give
the matmul a PSUM destination; evict it to SBUF afterwards.
"""
    references = (
        "aws-neuron-sdk nki/api/nki/isa/__init__.py (nc_matmul memory types; nc_transpose)",
        "https://github.com/aws-neuron/aws-neuron-sdk/issues/1054 (Matmult dst tensor is not psum)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.nc_matmul(dst=res, stationary=a, moving=b)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[13],
            title="current API: the matmul result in SBUF",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=ps)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="PSUM destination, evicted to SBUF",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                for k in nl.affine_range(4):
                    a = nl.load(lhsT[k * 128:(k + 1) * 128, :])
                    b = nl.load(rhs[k * 128:(k + 1) * 128, :])
                    acc[...] += nisa.nc_matmul(a, b)
                nl.store(out, value=acc)
                return out
            """,
            lines=[12],
            title="legacy API: accumulating matmuls into an SBUF tile",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def matmul_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(4):
                    a = nl.load(lhsT[k * 128:(k + 1) * 128, :])
                    b = nl.load(rhs[k * 128:(k + 1) * 128, :])
                    acc[...] += nisa.nc_matmul(a, b)
                nl.store(out, value=nl.copy(acc))
                return out
            """,
            title="legacy API: accumulating in PSUM",
        ),
    )

    _INPUTS = {
        "nki.isa.nc_matmul": ("stationary", "moving"),
        "nki.isa.nc_matmul_mx": ("stationary", "moving", "stationary_scale", "moving_scale"),
    }

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for kernel in ctx.model.kernels:
            g = kernel.graph
            role = f.kernel_role(ctx.model, kernel)
            for op_id, data in g.ops():
                api = str(data.get("api") or "")
                if data.get("augmented"):
                    self._augmented(ctx, reporter, g, op_id, data, kernel, role)
                    continue
                if api not in f.MATMULS + f.TRANSPOSES:
                    continue
                problems = []
                culprits: list[f.Operand] = []
                tensor_engine = api in self._INPUTS or (api == "nki.isa.nc_transpose" and f.engine_arg(data) == "tensor")
                for o in f.operands(g, op_id, role):
                    if o.buffer == "unknown" or o.param == "result":
                        continue
                    before = len(problems)
                    if o.written:
                        if tensor_engine and o.buffer != "psum":
                            problems.append(f"its result {o.name} is in {o.buffer.upper()} (TensorE writes only PSUM)")
                        elif o.buffer in f.HBM:
                            problems.append(f"its result {o.name} is in HBM")
                    elif o.buffer in f.HBM:
                        problems.append(f"{o.param} {o.name} is in HBM")
                    elif tensor_engine and o.buffer == "psum" and (api != "nki.isa.nc_transpose" or o.param == "data"):
                        problems.append(f"{o.param} {o.name} is in PSUM (TensorE reads only SBUF)")
                    if len(problems) > before:
                        culprits.append(o)
                if problems:
                    assumed = all(o.assumed for o in culprits)
                    reporter.at_site(
                        data.get("site"), f"{f.op_short(data)}: " + "; ".join(problems)
                        + _assumed_text(kernel, culprits if assumed else []),
                        level=Level.WARNING if assumed else Level.ERROR,
                        hint="matmul inputs must be SBUF tiles (copy PSUM or HBM data into SBUF first) and the "
                        "result a PSUM tile",
                        kernel=kernel.name,
                    )

    def _augmented(self, ctx, reporter, g, op_id: str, data: dict, kernel, role: str) -> None:
        """Legacy ``t[...] += nl.matmul(...)``: accumulation happens in PSUM only."""
        value = next((o for o in f.operands(g, op_id, role) if o.param == "value" and not o.written), None)
        dst = next((o for o in f.operands(g, op_id, role) if o.written), None)
        if value is None or dst is None or dst.buffer != "sbuf":
            return
        producers = [g.attrs(w) for w in g.ops_writing(value.base_id)]
        if not any(str(p.get("api") or "") in ("nki.isa.nc_matmul", "nki.language.matmul") for p in producers):
            return
        reporter.at_site(
            data.get("site"),
            f"a matmul result is accumulated into {dst.name}, which is in SBUF; TensorE accumulates only in PSUM",
            hint=f"allocate {dst.name} with buffer=nl.psum and copy it to SBUF after the loop",
            kernel=kernel.name,
        )


class GpsimdTouchesPsum(Rule):
    id = "NKI213"
    name = "gpsimd-touches-psum"
    family = "memory"
    level = Level.ERROR
    summary = "A GpSimd instruction reads or writes PSUM (GpSimd can only access SBUF)"
    explanation = """
The GpSimd engine has no path to PSUM ("GpSimd Engine cannot access PSUM"):
`iota`, `affine_select`, `local_gather`, `nc_n_gather`,
`tensor_partition_reduce`, `nonzero_with_count`, `topk` and the other
GpSimd-only instructions, any instruction given `engine=nisa.engine.gpsimd`
(legacy `nisa.gpsimd_engine`), and `tensor_tensor(op=nl.power)` (which only
GpSimd implements) need SBUF operands.

In legacy (`neuronxcc.nki`) code an instruction that runs on GpSimd only
implicitly (`affine_select`, `iota`, ...) is a warning: production legacy
kernels (nki-samples' sliding-window flash attention) applied
`affine_select` to a PSUM tile and compiled, so the legacy compiler moved
the data itself. An explicit `engine=` GpSimd, and current-API instructions,
are errors.

**Fix:** copy the PSUM data to SBUF first (`nisa.tensor_copy`), or run the
instruction on the Vector or Scalar engine where it supports one.
"""
    references = (
        "aws-neuron-sdk nki/api/nki/isa/__init__.py (tensor_copy, tensor_tensor, nc_n_gather, rng notes)",
        "aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (GpSimd engine)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def iota_kernel():
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                idx = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.iota(dst=idx, pattern=[[1, 512]], offset=0)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=idx)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[9],
            title="current API: iota into PSUM",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def iota_kernel():
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                idx = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.iota(dst=idx, pattern=[[1, 512]], offset=0)
                nisa.dma_copy(dst=out, src=idx)
                return out
            """,
            title="iota into SBUF",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def copy_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                ps = nisa.nc_matmul(nl.load(lhsT), nl.load(rhs))
                res = nisa.tensor_copy(ps, engine=nisa.gpsimd_engine)
                nl.store(out, value=res)
                return out
            """,
            lines=[9],
            title="legacy API: a GpSimd copy out of PSUM",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def copy_kernel(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                ps = nisa.nc_matmul(nl.load(lhsT), nl.load(rhs))
                res = nisa.tensor_copy(ps, engine=nisa.vector_engine)
                nl.store(out, value=res)
                return out
            """,
            title="legacy API: the Vector engine evicts PSUM",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for kernel in ctx.model.kernels:
            g = kernel.graph
            role = f.kernel_role(ctx.model, kernel)
            for op_id, data in g.ops():
                if not f.is_gpsimd(data):
                    continue
                bad = [o for o in f.operands(g, op_id, role) if o.buffer == "psum"]
                if not bad:
                    continue
                names = ", ".join(f"{o.name} ({o.param})" for o in bad)
                explicit = "engine" in (data.get("params_v") or {})
                # Legacy kernels in production (nki-samples' sliding-window flash
                # attention, NXDI) ran nisa.affine_select on a PSUM tile: the
                # legacy compiler moved the data itself. Only an explicit GpSimd
                # engine, or a current-API instruction (one call, one
                # instruction), is certain to fail.
                certain = explicit or not ctx.model.legacy
                message = (f"{f.op_short(data)} runs on GpSimd, which cannot access PSUM, but {names} "
                           f"{'are' if len(bad) > 1 else 'is'} in PSUM")
                if not certain:
                    message += " (the legacy compiler may insert a copy; it costs a PSUM-to-SBUF move either way)"
                reporter.at_site(
                    data.get("site"),
                    message,
                    level=Level.ERROR if certain else Level.WARNING,
                    hint="copy the data to SBUF with nisa.tensor_copy first, or use the Vector/Scalar engine",
                    kernel=kernel.name,
                )


# ========================================================= HBM allocations
def _if_arms(func: ast.AST) -> dict[int, ast.If]:
    """id(node) -> the innermost If whose body or else contains it (within
    ``func``, not inside nested functions)."""
    out: dict[int, ast.If] = {}

    def visit(node: ast.AST, current: ast.If | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            inner = current
            if isinstance(node, ast.If) and child is not node.test:
                inner = node
            if inner is not None:
                out[id(child)] = inner
            visit(child, inner)

    visit(func, None)
    return out


def _calls_nki(ctx: RuleContext, expr: ast.AST) -> bool:
    """The expression calls an NKI API (a value known only on the device)."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call):
            qual = ctx.model.bindings.resolve(node.func)
            if qual is not None and getattr(qual, "is_nki", False):
                return True
    return False


class SharedHbmNotTopLevel(Rule):
    id = "NKI214"
    name = "shared-hbm-not-top-level"
    family = "memory"
    level = Level.ERROR
    summary = "A shared_hbm tensor is created inside a loop, a device-side branch or a helper (legacy NKI)"
    explanation = """
Legacy NKI (`neuronxcc.nki`) creates `nl.shared_hbm` tensors only in the
top-level scope of the kernel: "Creating shared_hbm tensors inside a loop,
under if condition or inside another function called by the top-level nki
kernel is not supported" (`err_shared_hbm_must_in_kernel_level`). The
rule reports such allocations in legacy kernels: inside any loop, inside a
helper function the kernel calls, or under an `if` whose condition calls an
NKI API (a device value such as `nl.program_id(0)`; a plain Python `if` is
decided while tracing and is not seen by the compiler).

The current `nki.*` compiler has a related check (nki-library disables it
with `experimental_flags="skip-non-top-level-shared-hbm-check"`), but
nki-library allocates `shared_hbm` outputs in helpers throughout without
that flag, so its exact scope is not documented; nkilint does not report
current-API kernels.

**Fix:** hoist the `nl.ndarray(..., buffer=nl.shared_hbm)` to the top of
the kernel and pass it (or slices of it) to the loop body or helper.
"""
    references = ("aws-neuron-sdk nki/api/nki.errors.rst at 1db4d74e (err_shared_hbm_must_in_kernel_level)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            def make_output(shape, dtype):
                return nl.ndarray(shape, dtype=dtype, buffer=nl.shared_hbm)

            @nki.jit
            def kernel(x):
                out = make_output((128, 512), nl.float32)
                for i in nl.affine_range(4):
                    scratch = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                    nl.store(scratch, value=nl.load(x))
                nl.store(out, value=nl.load(x))
                return out
            """,
            lines=[5, 11],
            title="legacy API: in a helper and in a loop",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                scratch = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    nl.store(scratch[i], value=nl.load(x))
                nl.store(out, value=nl.load(x))
                return out
            """,
            title="legacy API: hoisted to the top level",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            def make_output(shape, dtype):
                return nl.ndarray(shape, dtype=dtype, buffer=nl.shared_hbm)

            @nki.jit
            def kernel(x):
                out = make_output((128, 512), nl.float32)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="current API: not reported (nki-library does this throughout)",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if not ctx.model.legacy:
            return
        reporter = Reporter(ctx)
        for kernel in ctx.model.kernels:
            if kernel.kind != "root":
                continue
            arms = _if_arms(kernel.node)
            g = kernel.graph
            for node_id, data in g.tensors():
                if data.get("buffer") != "shared_hbm" or data.get("origin") != "alloc":
                    continue
                site: Site | None = data.get("site")
                if site is None:
                    continue
                name = q.tensor_name(data)
                where = None
                if site.chain:
                    where = "inside a helper function"
                elif data.get("loops"):
                    line = f.loop_line(g, data["loops"][0])
                    where = f"inside the loop at line {line}" if line else "inside a loop"
                else:
                    branch = arms.get(id(site.node))
                    while branch is not None and not _calls_nki(ctx, branch.test):
                        branch = arms.get(id(branch))
                    if branch is not None:
                        where = f"under the device-side condition at line {branch.lineno}"
                if where is None:
                    continue
                reporter.at_site(
                    site,
                    f"shared_hbm tensor {name} is created {where}; legacy NKI creates shared_hbm tensors only at the "
                    f"kernel's top level",
                    hint="allocate it at the top of the kernel and pass it (or slices of it) down",
                    kernel=kernel.name,
                )


class HbmTensorWithInitValue(Rule):
    id = "NKI215"
    name = "hbm-tensor-with-init-value"
    family = "memory"
    level = Level.ERROR
    summary = "An HBM tensor (or, with direct allocation, an on-chip one) is created with an initial value"
    explanation = """
`nl.zeros`, `nl.ones`, `nl.full` and their `*_like` forms fill the new
tensor with a value, which the compiler implements with an on-chip
instruction. Legacy NKI rejects it for HBM tensors ("Creating HBM tensor
with init value is not supported", `err_hbm_tensor_with_init_value_not_supported`)
and, in kernels using the direct-allocation API (`ncc.sbuf.mod_alloc`
...), for SBUF/PSUM tensors too
(`err_tensor_creation_on_scratchpad_with_init_value_not_supported`).

For the current `nki.*` API the docs do not say; the finding is a warning
there.

**Fix:** create the HBM tensor with `nl.ndarray` and initialize it
explicitly: fill an SBUF tile (`nisa.memset`, legacy `nl.zeros` in SBUF) and
copy it out with `nisa.dma_copy` / `nl.store`.
"""
    references = (
        "aws-neuron-sdk nki/api/nki.errors.rst at 1db4d74e (err_hbm_tensor_with_init_value_not_supported, "
        "err_tensor_creation_on_scratchpad_with_init_value_not_supported)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(x):
                out = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(x))
                return out
            """,
            lines=[6],
            title="legacy API: a zero-filled HBM output",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                zero = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nl.store(out, value=zero)
                return out
            """,
            title="legacy API: zeros in SBUF, stored to HBM",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def kernel(x):
                out = nl.full((128, 512), 1.0, dtype=nl.float32, buffer=nl.shared_hbm)
                return out
            """,
            lines=[7],
            title="current API: a warning (not documented either way)",
            level=Level.WARNING,
        ),
    )

    _INIT = {"zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "rand", "rand_like", "random"}

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        legacy = ctx.model.legacy
        for kernel in ctx.model.kernels:
            g = kernel.graph
            for node_id, data in g.tensors():
                api = str(data.get("api") or "")
                if data.get("origin") != "alloc" or api.rpartition(".")[2] not in self._INIT:
                    continue
                buffer = data.get("buffer")
                short = "nl." + api.rpartition(".")[2]
                name = q.tensor_name(data)
                if buffer in f.HBM:
                    reporter.at_site(
                        data.get("site"),
                        f"{short} creates HBM tensor {name} ({buffer}) with an initial value"
                        + ("; legacy NKI does not support it" if legacy else "; NKI documents init values only for "
                           "on-chip tensors"),
                        level=Level.ERROR if legacy else Level.WARNING,
                        hint="use nl.ndarray and write the initial value from an SBUF tile with a DMA",
                        kernel=kernel.name,
                    )
                elif legacy and buffer in q.ON_CHIP and getattr(data.get("address"), "how", None) in ("alloc", "mod_alloc"):
                    reporter.at_site(
                        data.get("site"),
                        f"{short} creates directly allocated {buffer.upper()} tensor {name} with an initial value; "
                        f"legacy direct allocation does not support it",
                        hint="use nl.ndarray and fill the tile with an instruction (nisa.memset)",
                        kernel=kernel.name,
                    )


class KernelOutputNotSharedHbm(Rule):
    id = "NKI216"
    name = "kernel-output-not-shared-hbm"
    family = "memory"
    level = Level.ERROR
    summary = "A kernel returns an on-chip tile instead of an HBM tensor (or, from NKI 0.3, a helper-built nl.hbm output)"
    explanation = """
A kernel's outputs are HBM tensors the caller reads after the kernel ends.
Returning an SBUF or PSUM tile is never valid ("the input and output
parameters to NKI kernels must be HBM tensor references"; legacy known issue
"top-level tensors must be on HBM"). From NKI 0.3, "all kernel output
(return) tensors must be allocated with `buffer=nl.shared_hbm`. Using
`nl.hbm` for output tensors will cause compilation failures."

nkilint checks the names a kernel returns that it allocates itself. A
decorated kernel's own `nl.hbm` output is reported (with a safe fix) by
NKI613 `output-not-shared-hbm` in the migration family; this rule reports
`nl.hbm` outputs of functions launched with `nki.jit(f)` and of helpers.

**Fix:** allocate the output with
`nl.ndarray(shape, dtype=..., buffer=nl.shared_hbm)`, copy the result tile
into it (`nisa.dma_copy` / legacy `nl.store`), and return the HBM tensor.
"""
    references = (
        "aws-neuron-sdk nki/migration/index.rst (Output tensors must use nl.shared_hbm, NKI 0.3)",
        "aws-neuron-sdk nki/get-started/about/memory-hierarchy-overview.rst (kernel parameters are HBM)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                return t
            """,
            lines=[9],
            title="current API: returning the SBUF tile",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="an nl.hbm output is NKI613's (migration) to report",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_kernel(x):
                y = nl.exp(nl.load(x))
                return y
            """,
            lines=[7],
            title="legacy API: returning an SBUF tile",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.exp(nl.load(x)))
                return out
            """,
            title="legacy API: stored into a shared_hbm output",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        hbm_is_error = not _legacy_or_before(ctx)
        for kernel in ctx.model.kernels:
            role = f.kernel_role(ctx.model, kernel)
            if role not in ("top", "maybe"):
                continue
            by_name: dict[str, list[dict]] = {}
            for _, data in kernel.graph.tensors():
                site = data.get("site")
                if data.get("origin") in ("alloc", "result") and site is not None and not site.chain and data.get("name"):
                    by_name.setdefault(str(data["name"]), []).append(data)
            for ret in _returns(kernel.node):
                values = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
                for value in values:
                    if not isinstance(value, ast.Name) or value.id not in by_name:
                        continue
                    buffers = {d.get("buffer") for d in by_name[value.id]}
                    if len(buffers) != 1:
                        continue
                    buffer = buffers.pop()
                    if buffer in q.ON_CHIP:
                        message = f"kernel {kernel.name} returns {value.id}, a {buffer.upper()} tile; kernel outputs must be in HBM"
                    elif buffer in ("hbm", "private_hbm") and hbm_is_error and kernel.decorator is None:
                        # A decorated kernel's own nl.hbm output is NKI613's (migration,
                        # with a fix); launched functions and helpers are seen only here.
                        message = (f"{kernel.name} returns {value.id}, allocated in {buffer}, as a kernel output; from "
                                   f"NKI 0.3 kernel outputs must be allocated with buffer=nl.shared_hbm "
                                   f"(target NKI {ctx.nki_version})")
                    else:
                        continue
                    if role == "maybe":
                        message += (f" (if {kernel.name} is launched as a top-level kernel; an @nki.jit function "
                                    f"called from another kernel may return on-chip tiles)")
                    reporter.at(
                        ret, message, kernel=kernel.name, level=Level.WARNING if role == "maybe" else Level.ERROR,
                        hint=f"allocate {value.id} with buffer=nl.shared_hbm (copy on-chip results into it) and return it",
                    )


def _returns(func: ast.AST) -> list[ast.Return]:
    out: list[ast.Return] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Return) and child.value is not None:
                out.append(child)
            visit(child)

    visit(func)
    return out
