"""NKI201 psum-tile-exceeds-bank: a PSUM tile (or one matmul's output) is larger than one PSUM bank."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.api_semantics import MATMUL_APIS, TRANSPOSE_APIS
from nkilint.model.dtypes import DTYPE_BYTES
from nkilint.model.views import Op, Operand, Tensor, ops_of, tensors_of
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._ops import is_compute, is_true, written_dst
from ._sizes import attainable_bytes, fit_condition, fmt_count, free_elements, node_bytes


class PsumTileExceedsBank(Rule):
    id = "NKI201"
    name = "psum-tile-exceeds-bank"
    family = "memory"
    level = Level.ERROR
    summary = "A matmul or transpose writes a PSUM tile larger than one PSUM bank (2 KiB per partition)"
    explanation = """
Finds matmuls and TensorE transposes whose PSUM destination is larger than
one instruction may write (an error; a warning naming the bound when only
some values the code allows are too large). It also warns at a PSUM
allocation larger than one bank that an instruction other than a trn3 matmul
reads or writes whole (Tile-Size Constraint #2: "for tiles in PSUM, the F
dimension size must not exceed `psum_bank_fmax`"); a multi-bank PSUM tensor
that every instruction accesses one bank-sized slice at a time is fine. With
the legacy direct-allocation API (`ncc.psum.alloc` / `mod_alloc`) a physical
PSUM tile cannot span banks at all, so that case is an error.

**Why on Trainium:** PSUM is split into 8 banks of 2 KiB per partition (512
fp32 values). A TensorE instruction writes its result into one bank: the
destination of `nisa.nc_matmul` / `nl.matmul` or of a TensorE transpose may
hold at most `nl.tile_size.psum_bank_fmax` (512) fp32 values per partition
on trn1 and trn2. On trn3 (NeuronCore-v4) `nc_matmul` and `nc_matmul_mx` may
span all 8 banks: at most 4096 fp32 or 8192 bf16 values (16 KiB) per
partition.

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
            reported: set[str] = set()
            for op in ops_of(kernel):
                if op.api not in MATMUL_APIS + TRANSPOSE_APIS:
                    continue
                dst = written_dst(op)
                if dst is None or dst.buffer != "psum":
                    continue
                transpose = op.api in TRANSPOSE_APIS or is_true(op.param("is_transpose"))
                limit, what = self._limit(ctx, transpose)
                if self._report_size(reporter, dst, op, limit, what, kernel.name):
                    reported.add(dst.base_id)
            for t in tensors_of(kernel):
                if t.buffer != "psum" or t.origin != "alloc" or t.id in reported:
                    continue
                self._check_alloc(ctx, reporter, t, kernel.name)

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

    def _report_size(self, reporter, dst: Operand, op: Op, limit: int, what: str, kernel: str) -> bool:
        bytes_v, elems, dtype = node_bytes(dst.node)
        if bytes_v is None:
            return False
        lo = q.lower(bytes_v)
        shape = f"{fmt_count(elems)} x {dtype}"
        if dst.base.has_name:
            subject = f"PSUM tile {dst.name} written by {op.label}"
        else:
            subject = f"the PSUM tile {op.label} returns"
        hint = "tile the free dimension by 512 fp32 values (one PSUM bank) and write one slice per instruction"
        if lo is not None and lo > limit:
            return reporter.at_site(
                op.site,
                f"{subject} is {int(lo)} B per partition ({shape}); {what}",
                level=Level.ERROR, hint=hint, kernel=kernel,
            )
        hi = attainable_bytes(dst.node)
        if hi is not None and hi > limit:
            return reporter.at_site(
                op.site,
                f"{subject} may be up to {int(hi)} B per partition ({shape}); {what}"
                f"{fit_condition(dst.node, limit)}",
                level=Level.WARNING, hint=hint, kernel=kernel,
            )
        return False

    def _check_alloc(self, ctx, reporter, t: Tensor, kernel: str) -> None:
        target = ctx.target
        bank = target.psum_bank_bytes
        dtype = t.dtype
        size = DTYPE_BYTES.get(dtype or "")
        elems = free_elements(t.shape, t.partition_axis)
        if size is None or elems is None:
            return
        lo = q.lower(elems)
        if lo is None or lo * size <= bank:
            return
        nbytes = int(lo * size)
        address = t.address
        if getattr(address, "how", None) in ("alloc", "mod_alloc"):
            reporter.at_site(
                t.site,
                f"PSUM tile {t.name} is {nbytes} B per partition ({fmt_count(elems)} x {dtype}); with "
                f"ncc.psum.{address.how} a physical PSUM tile cannot span banks ({bank} B on {target.name})",
                level=Level.ERROR, kernel=kernel,
                hint="split the free dimension into blocks of at most 512 fp32 values",
            )
            return
        if target.generation >= 4 and self._gen4_matmul_dst(ctx, t):
            return  # trn3 matmuls write multi-bank PSUM tiles; evicting them whole is the point
        whole = self._whole_access(ctx, t)
        if whole is None:
            return
        site = whole.site
        reporter.at_site(
            t.site,
            f"PSUM tensor {t.name} is {nbytes} B per partition ({fmt_count(elems)} x {dtype}), more than one bank "
            f"({bank} B on {target.name}), and {whole.label} at {ctx.model.line_ref(site)} accesses it "
            f"whole; a PSUM tile should fit in one bank (nl.tile_size.psum_bank_fmax = {target.psum_bank_fp32} fp32)",
            level=Level.WARNING, kernel=kernel,
            hint="access the tensor one bank-sized slice at a time, or allocate one PSUM tile per bank",
        )

    def _gen4_matmul_dst(self, ctx, t: Tensor) -> bool:
        limit, _ = self._limit(ctx, False)
        for op_id in t.graph.ops_writing(t.id):
            op = Op(t.graph, op_id)
            if op.api not in MATMUL_APIS or is_true(op.param("is_transpose")):
                continue
            dst = written_dst(op)
            b = node_bytes(dst.node)[0] if dst is not None else None
            hi = attainable_bytes(dst.node) if dst is not None else None
            if b is not None and (q.lower(b) or 0) <= limit and (hi is None or hi <= limit):
                return True
        return False

    def _whole_access(self, ctx, t: Tensor) -> Op | None:
        """An op (not a trn3 matmul within its limit, not a DMA) that reads or
        writes more than one bank of the tensor in one instruction."""
        g = t.graph
        bank = ctx.target.psum_bank_bytes
        for op_id in sorted(set(g.ops_reading(t.id)) | set(g.ops_writing(t.id)), key=g.seq):
            op = Op(g, op_id)
            if not is_compute(op):
                continue
            for o in op.operands():
                if o.base_id != t.id:
                    continue
                b, _, _ = node_bytes(o.node)
                lo = q.lower(b)
                if lo is None or lo <= bank:
                    continue
                if op.api in MATMUL_APIS and ctx.target.generation >= 4 and o.written:
                    limit, _ = self._limit(ctx, False)
                    if lo <= limit:
                        continue
                return op
        return None
