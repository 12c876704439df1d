"""NKI310 short-stationary: matmuls whose stationary operand fills few rows of the systolic array."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import nest_of
from nkilint.rule import Rule, invalid, valid

from . import _dma as dma
from ._ops import matmul_operands, onchip_free
from ._report import OncePerSite, operand_text


class ShortStationary(Rule):
    id = "NKI310"
    name = "short-stationary"
    family = "pipeline"
    level = Level.WARNING
    summary = "A matmul in a loop puts the short matrix on the stationary side; swapping them is about 2x faster"
    explanation = """
The rule reports `nc_matmul` (and `nl.matmul(..., transpose_x=True)`)
inside loops, where back-to-back instructions make TensorE throughput
matter, when the stationary free size is at most 32 and the moving free
size at least 128.

**Why on Trainium:** TensorE loads the *stationary* matrix (LoadStationary) and
streams the *moving* one through it (MultiplyMoving). LoadStationary is up to
4x faster than MultiplyMoving for the same free size, and a MultiplyMoving
issues at best every `max(N, 64)` cycles for a moving free size N. With a short
stationary (free size M much below 128: a vector, a few tokens) and a long
moving matrix (N >= 128), each matmul costs about N cycles; swapped, the long
matrix is loaded fast as stationary (128 columns at a time) and the short one
moves in about 64 cycles. The perf guide (Opt #7, matrix-vector products in
token generation) puts it at roughly half the TensorE time.

**Fix:** swap the operands: `nc_matmul(dst=ps_T, stationary=long[:, j*128:(j+1)*128],
moving=short)`, one call per 128 columns; the result comes out transposed
(`(A B)^T = B^T A^T`), which often removes a transpose elsewhere.
"""
    references = (
        "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst (Opt #7: leverage fast weight load)",
        "aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (Fast LoadStationary)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def gemv(vT, w):
                out = nl.ndarray((1, 4096), dtype=nl.float32, buffer=nl.shared_hbm)
                v_sb = nl.ndarray((128, 1), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=v_sb, src=vT[0:128, 0:1])
                for n in range(8):
                    w_sb = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=w_sb, src=w[0:128, n * 512:(n + 1) * 512])
                    ps = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=v_sb, moving=w_sb)
                    o = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=o, src=ps)
                    nisa.dma_copy(dst=out[0:1, n * 512:(n + 1) * 512], src=o)
                return out
            """,
            lines=[14],
            title="current API: a vector as the stationary operand",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gemv(vT, w):
                out = nl.ndarray((4, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
                v_sb = nl.load(vT[0:128, 0:4])
                for n in nl.affine_range(4):
                    w_sb = nl.load(w[0:128, n * 512:(n + 1) * 512])
                    res = nl.matmul(v_sb, w_sb, transpose_x=True)
                    nl.store(out[0:4, n * 512:(n + 1) * 512], value=res)
                return out
            """,
            lines=[10],
            title="legacy API: four tokens as the stationary operand",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def gemv(vT, w):
                out = nl.ndarray((4096, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                v_sb = nl.ndarray((128, 1), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=v_sb, src=vT[0:128, 0:1])
                for n in range(32):
                    w_sb = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=w_sb, src=w[0:128, n * 128:(n + 1) * 128])
                    ps = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=w_sb, moving=v_sb)
                    o = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=o, src=ps)
                    nisa.dma_copy(dst=out[n * 128:(n + 1) * 128, 0:1], src=o)
                return out
            """,
            title="the vector moves, the weight block is stationary (output transposed)",
        ),
    )

    SHORT = 32
    LONG = 128
    MM_INIT = 64  # MM_INIT_LATENCY, TensorE cycles (architecture guide)

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = nest_of(graph)
            for op_id, data in graph.ops():
                ops = matmul_operands(graph, op_id)
                if ops is None:
                    continue
                m, n = onchip_free(graph, ops.stationary), onchip_free(graph, ops.moving)
                m_hi = dma.int_bounds(m)[1] if m is not None and dma.int_bounds(m) else None
                n_lo = dma.int_bounds(n)[0] if n is not None and dma.int_bounds(n) else None
                if m_hi is None or n_lo is None or m_hi > self.SHORT or n_lo < self.LONG:
                    continue
                loop = next((lp for lp in lf.enclosing(op_id) if lp.may_repeat()), None)
                if loop is None:
                    continue
                n_exact = dma.exact(n)
                if n_exact is not None:
                    now = max(n_exact, self.MM_INIT)
                    swapped = -(-n_exact // 128) * self.MM_INIT
                    est = f"est. ~{now} TensorE cycles per call now vs ~{swapped} swapped ({now / swapped:.1f}x)"
                else:
                    est = "est. about 2x less TensorE time swapped"
                reporter.at_site(
                    data.get("site"),
                    f"matmul in `{loop.header()}` has a short stationary operand "
                    f"{operand_text(graph, ops.stationary)} (free size {dma.fmt_dim(m)}) and a long moving operand "
                    f"{operand_text(graph, ops.moving)} (free size {dma.fmt_dim(n)}): {est}",
                    hint="swap them: the long matrix as stationary in 128-column blocks, the short one moving; the "
                         "result comes out transposed (perf guide Opt #7)",
                    kernel=kernel.name,
                )
