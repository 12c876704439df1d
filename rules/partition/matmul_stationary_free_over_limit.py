"""NKI106 matmul-stationary-free-over-limit: a matmul's stationary operand is wider than 128 columns."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.views import Op, ops
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._matmul import NC_MATMUL, NL_MATMUL, double_row, matmul_operands, nl_matmul_transposed, tile_size
from ._shapes import SDK_STUBS, free_dims, over_always, over_maybe, product


class MatmulStationaryFreeOverLimit(Rule):
    id = "NKI106"
    name = "matmul-stationary-free-over-limit"
    family = "partition"
    level = Level.ERROR
    summary = "A matmul's stationary operand has more than 128 columns (its free size)"
    explanation = """
Finds matmuls whose stationary operand has a free size (all free dimensions
flattened) above 128, or above `column_size` when `tile_size` selects column
tiling. For legacy `nl.matmul(x, y, transpose_x=True)` this is `x`'s free
size; without `transpose_x`, `x`'s partition dimension plays that role and
is limited by the partition count.

**Why on Trainium:** the stationary operand of `nc_matmul` is loaded into
the 128x128 systolic array: its free size becomes the output's partition
dimension and may not exceed 128 (`nl.tile_size.gemm_stationary_fmax`).

**Fix:** split the stationary operand's free dimension into 128-column
slices (`a[:, m * 128:(m + 1) * 128]`), one matmul (and one PSUM tile) per
slice.
"""
    references = (
        f"{SDK_STUBS} (nc_matmul: tile size)",
        "aws-neuron-sdk nki/get-started/about/tiling-overview.rst (tile size constraint #3)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 256), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                return out
            """,
            lines=[13],
            title="current API: a 256-column stationary operand",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(xT, y):
                out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                xt = nl.load(xT[0:128, 0:256])
                yt = nl.load(y[0:128, 0:512])
                r = nl.matmul(xt, yt, transpose_x=True)
                return out
            """,
            lines=[9],
            title="legacy nl.matmul: x is [K, 256]",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 256), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                for m in range(2):
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=a[:, m * 128:(m + 1) * 128], moving=b)
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        limit = ctx.target.gemm_stationary_fmax
        for op in ops(ctx.model, apis=NC_MATMUL):
            st = matmul_operands(op).get("stationary")
            if st is None or not st.node.on_chip:
                continue
            double = double_row(op)
            if double is None:
                continue
            dims = free_dims(st.node)
            if dims is None:
                continue
            if double:
                dims = dims[1:]  # the first free dim (2) belongs to the contraction
            size = product(dims) if len(dims) != 1 else dims[0]
            tiles = tile_size(op)
            cap, why = limit, f"{limit} on {ctx.target.name}"
            if tiles is not None and tiles[1] < limit:
                cap, why = tiles[1], f"the column tile size {tiles[1]} (tile_size={tiles})"
            self._judge(reporter, op, "nisa.nc_matmul", f"stationary {st.node.label}",
                        q.fmt_shape(st.node.shape), size, cap, why)
        for op in ops(ctx.model, apis=NL_MATMUL):
            x = matmul_operands(op).get("x")
            if x is None or not x.node.on_chip or nl_matmul_transposed(op) is not True:
                continue
            xs = x.node.shape
            if xs is None or len(xs) != 2:
                continue
            self._judge(reporter, op, "nl.matmul", f"x {x.node.label} (transpose_x=True)",
                        q.fmt_shape(xs), xs[1], limit, f"{limit} on {ctx.target.name}")

    def _judge(self, reporter, op: Op, api, what, shape, size, cap, why) -> None:
        if size is None:
            return
        if over_always(size, cap):
            reporter.at_site(
                op.site,
                f"{api}: {what} {shape} has a free size of {q.fmt_dim(size)}; the stationary operand is limited to {why}",
                level=Level.ERROR,
                hint=f"split it into {cap}-column slices, one matmul per slice",
                kernel=op.kernel.name,
            )
            return
        hi = over_maybe(size, cap)
        if hi is not None:
            reporter.at_site(
                op.site,
                f"{api}: {what} {shape} may have a free size of up to {int(hi)}; the stationary operand is limited "
                f"to {why}",
                level=Level.WARNING,
                hint=f"assert the free size is <= {cap} (nl.tile_size.gemm_stationary_fmax), or tile it",
                kernel=op.kernel.name,
            )
