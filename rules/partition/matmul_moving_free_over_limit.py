"""NKI107 matmul-moving-free-over-limit: a matmul's moving operand is wider than the engine takes."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.views import Op, Operand, ops
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._matmul import NC_MATMUL, NL_MATMUL, double_row, matmul_operands
from ._shapes import SDK_STUBS, free_dims, over_always, over_maybe, product


class MatmulMovingFreeOverLimit(Rule):
    id = "NKI107"
    name = "matmul-moving-free-over-limit"
    family = "partition"
    level = Level.ERROR
    summary = "A matmul's moving operand has more columns than one matmul can stream (512 on trn1/trn2)"
    explanation = """
Finds matmuls whose moving operand has a free size (all free dimensions
flattened) above what the target's TensorE takes in one instruction; legacy
`nl.matmul(x, y)` limits `y`'s free size the same way.

**Why on Trainium:** the moving operand of `nc_matmul` streams through the
systolic array, and its free size becomes the output's free size. On trn1
and trn2 (NeuronCore-v2/v3) it may not exceed 512
(`nl.tile_size.gemm_moving_fmax`, the fp32 elements of one PSUM bank). On
trn3 (NeuronCore-v4) it may go up to 4096 with an fp32 `dst` or 8192 with a
bfloat16 `dst` (all eight PSUM banks).

**Fix:** split the moving operand's free dimension into slices of at most
512 columns (`b[:, n * 512:(n + 1) * 512]`), one matmul and one PSUM tile per
slice.
"""
    references = (
        f"{SDK_STUBS} (nc_matmul: tile size, NeuronCore-v4 limits)",
        "aws-neuron-sdk nki/get-started/about/tiling-overview.rst (tile size constraint #2)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                return out
            """,
            lines=[13],
            title="current API: 1024 moving columns on trn2",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(xT, y):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                xt = nl.load(xT[0:128, 0:128])
                yt = nl.load(y[0:128, 0:1024])
                r = nl.matmul(xt, yt, transpose_x=True)
                return out
            """,
            lines=[9],
            title="legacy nl.matmul: y is [K, 1024]",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                return out
            """,
            title="trn3 streams up to 4096 fp32 columns",
            target="trn3",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                for n in range(2):
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=a, moving=b[:, n * 512:(n + 1) * 512])
                return out
            """,
            title="512-column slices on trn2",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        target = ctx.target
        for op in ops(ctx.model, apis=NC_MATMUL):
            both = matmul_operands(op)
            mv = both.get("moving")
            if mv is None or not mv.node.on_chip:
                continue
            double = double_row(op)
            if double is None:
                continue
            dims = free_dims(mv.node)
            if dims is None:
                continue
            if double:
                dims = dims[1:]
            size = product(dims) if len(dims) != 1 else dims[0]
            cap, why = self._cap(target, both.get("dst"))
            self._judge(reporter, op, "nisa.nc_matmul", f"moving {mv.node.label}",
                        q.fmt_shape(mv.node.shape), size, cap, why)
        for op in ops(ctx.model, apis=NL_MATMUL):
            y = matmul_operands(op).get("y")
            if y is None or not y.node.on_chip:
                continue
            ys = y.node.shape
            if ys is None or len(ys) != 2:
                continue
            cap = target.gemm_moving_fmax
            self._judge(reporter, op, "nl.matmul", f"y {y.node.label}", q.fmt_shape(ys), ys[1], cap,
                        f"{cap} on {target.name}")

    @staticmethod
    def _cap(target, dst: Operand | None) -> tuple[int, str]:
        fp32, bf16 = target.gemm_moving_fmax, target.gemm_moving_fmax_bf16_dst
        if fp32 == bf16:
            return fp32, f"{fp32} on {target.name}"
        dtype = dst.node.dtype if dst is not None else None
        if dtype == "float32":
            return fp32, f"{fp32} on {target.name} with a float32 dst"
        if dtype == "bfloat16":
            return bf16, f"{bf16} on {target.name} with a bfloat16 dst"
        return max(fp32, bf16), f"{max(fp32, bf16)} on {target.name}"

    def _judge(self, reporter, op: Op, api, what, shape, size, cap, why) -> None:
        if size is None:
            return
        if over_always(size, cap):
            reporter.at_site(
                op.site,
                f"{api}: {what} {shape} has a free size of {q.fmt_dim(size)}; the moving operand is limited to {why}",
                level=Level.ERROR,
                hint=f"split it into slices of at most {cap} columns, one matmul and PSUM tile per slice",
                kernel=op.kernel.name,
            )
            return
        hi = over_maybe(size, cap)
        if hi is not None:
            reporter.at_site(
                op.site,
                f"{api}: {what} {shape} may have a free size of up to {int(hi)}; the moving operand is limited to {why}",
                level=Level.WARNING,
                hint=f"assert the free size is <= {cap} (nl.tile_size.gemm_moving_fmax), or tile it",
                kernel=op.kernel.name,
            )
