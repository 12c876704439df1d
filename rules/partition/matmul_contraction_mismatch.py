"""NKI105 matmul-contraction-mismatch: a matmul's operands have different contraction sizes."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.views import Op, Operand, ops
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._matmul import NC_MATMUL, NL_MATMUL, matmul_operands, nl_matmul_transposed, tile_size
from ._shapes import SDK_STUBS, fmt, limit_text, over_always, over_maybe, provably_different


class MatmulContractionMismatch(Rule):
    id = "NKI105"
    name = "matmul-contraction-mismatch"
    family = "partition"
    level = Level.ERROR
    summary = "A matmul's contraction dimension is not the shared partition dimension of both operands"
    explanation = """
Finds matmuls whose operands disagree on the contraction dimension:
`nc_matmul` operands whose partition dimensions differ (or exceed the
`row_size` that `tile_size` selects), and legacy `nl.matmul(x, y)` calls
whose contraction sizes differ or, without `transpose_x=True`, whose `x` has
a free dimension above 128.

**Why on Trainium:** TensorE computes `stationary.T @ moving`: the
contraction dimension is the partition dimension of **both** operands, so
`stationary.shape[0]` must equal `moving.shape[0]`, and it is at most 128 (at
most `row_size` when `tile_size` selects row tiling). Legacy
`nl.matmul(x, y)` without `transpose_x=True` computes `x @ y` and transposes
`x` first: `x`'s free dimension is then the contraction, must equal `y`'s
partition dimension and is limited to 128; with `transpose_x=True` `x` is
already `[K, M]`.

**Fix:** lay both operands out as `[K, ...]` with K on the partitions
(transpose one of them with `nc_transpose` or a DMA transpose), and for
K > 128 loop over 128-row slices of K, accumulating into the same PSUM tile.
"""
    references = (
        f"{SDK_STUBS} (nc_matmul: layout, tile size)",
        "aws-neuron-sdk nki/get-started/about/tiling-overview.rst (layout constraint #1)",
        "aws-neuron-sdk general/nki/api/nki/language/__init__.py at commit 0521004c (nl.matmul)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                b = nl.ndarray((64, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT)
                nisa.dma_copy(dst=b, src=rhs)
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=ps)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[13],
            title="current API: K = 128 for the stationary, 64 for the moving operand",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(x, y):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                xt = nl.load(x[0:128, 0:256])
                yt = nl.load(y[0:128, 0:512])
                r = nl.matmul(xt, yt)
                nl.store(out[0:128, 0:512], value=r)
                return out
            """,
            lines=[9],
            title="legacy nl.matmul without transpose_x: x's free dimension (256) is the contraction",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm(xT, y):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                xt = nl.load(xT[0:128, 0:128])
                yt = nl.load(y[0:128, 0:512])
                r = nl.matmul(xt, yt, transpose_x=True)
                nl.store(out[0:128, 0:512], value=r)
                return out
            """,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm(lhsT, rhs):
                K, M = lhsT.shape
                out = nl.ndarray((M, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                ps = nl.ndarray((M, 512), dtype=nl.float32, buffer=nl.psum)
                for k in range(K // 128):
                    a = nl.ndarray((128, M), dtype=nl.bfloat16, buffer=nl.sbuf)
                    b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=a, src=lhsT[k * 128:(k + 1) * 128, :])
                    nisa.dma_copy(dst=b, src=rhs[k * 128:(k + 1) * 128, :])
                    nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                res = nl.ndarray((M, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=ps)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="K tiled in 128-row slices",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        limit = ctx.target.partitions
        for op in ops(ctx.model, apis=NC_MATMUL):
            both = matmul_operands(op)
            st, mv = both.get("stationary"), both.get("moving")
            if st is None or mv is None or not (st.node.on_chip and mv.node.on_chip):
                continue
            ks, km = st.node.partition_size, mv.node.partition_size
            if st.node.shape is None or mv.node.shape is None:
                continue
            if provably_different(ks, km):
                reporter.at_site(
                    op.site,
                    f"nisa.nc_matmul: stationary {st.node.label} {q.fmt_shape(st.node.shape)} and moving "
                    f"{mv.node.label} {q.fmt_shape(mv.node.shape)} have different partition dimensions "
                    f"({fmt(ks)} vs {fmt(km)}); the contraction runs over the partitions of both and they "
                    f"must be equal",
                    hint="put the contraction dimension first in both operands, with the same size",
                    kernel=op.kernel.name,
                )
                continue
            tiles = tile_size(op)
            if tiles is not None and tiles[0] < limit and over_always(ks, tiles[0]):
                reporter.at_site(
                    op.site,
                    f"nisa.nc_matmul: the contraction (partition) size {fmt(ks)} exceeds the row tile size "
                    f"{tiles[0]} given in tile_size={tiles}",
                    hint="slice the contraction dimension to the row tile size, or use a larger tile_size",
                    kernel=op.kernel.name,
                )
        for op in ops(ctx.model, apis=NL_MATMUL):
            both = matmul_operands(op)
            x, y = both.get("x"), both.get("y")
            if x is None or y is None or not (x.node.on_chip and y.node.on_chip):
                continue
            xs, ys = x.node.shape, y.node.shape
            if xs is None or ys is None or len(xs) != 2 or len(ys) != 2:
                continue
            transposed = nl_matmul_transposed(op)
            if transposed is None:
                continue
            kx = xs[0] if transposed else xs[1]
            ky = ys[0]
            layout = "x is [K, M]" if transposed else "x is [M, K] (no transpose_x)"
            if provably_different(kx, ky):
                reporter.at_site(
                    op.site,
                    f"nl.matmul: the contraction sizes differ: {layout} gives K = {fmt(kx)} for "
                    f"{x.node.label} {q.fmt_shape(xs)}, but y {y.node.label} {q.fmt_shape(ys)} "
                    f"has {fmt(ky)} partitions",
                    hint="lay out x as [K, M] with transpose_x=True and K equal to y's partition dimension",
                    kernel=op.kernel.name,
                )
                continue
            if not transposed:
                self._contraction_limit(ctx, reporter, op, x, xs, kx, limit)

    def _contraction_limit(self, ctx, reporter, op: Op, x: Operand, xs, kx, limit) -> None:
        msg = (
            f"nl.matmul without transpose_x: x {x.node.label} {q.fmt_shape(xs)} is transposed first, so its "
            f"free dimension {fmt(kx)} becomes the contraction on the partitions"
        )
        if over_always(kx, limit):
            reporter.at_site(op.site, f"{msg}; it is limited to {limit_text(ctx)}", level=Level.ERROR,
                             hint="slice K into 128-wide blocks and accumulate, or pass x as [K, M] with transpose_x=True",
                             kernel=op.kernel.name)
            return
        hi = over_maybe(kx, limit)
        if hi is not None:
            reporter.at_site(op.site, f"{msg}; it may reach {int(hi)} but is limited to {limit_text(ctx)}",
                             level=Level.WARNING, hint="assert K <= 128 or tile K", kernel=op.kernel.name)
