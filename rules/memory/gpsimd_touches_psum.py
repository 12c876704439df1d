"""NKI213 gpsimd-touches-psum: a GpSimd instruction reads or writes PSUM."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.views import kernel_role, ops_of
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._ops import is_gpsimd


class GpsimdTouchesPsum(Rule):
    id = "NKI213"
    name = "gpsimd-touches-psum"
    family = "memory"
    level = Level.ERROR
    summary = "A GpSimd instruction reads or writes PSUM (GpSimd can only access SBUF)"
    explanation = """
Finds GpSimd instructions with a PSUM operand: `iota`, `affine_select`,
`local_gather`, `nc_n_gather`, `tensor_partition_reduce`,
`nonzero_with_count`, `topk` and the other GpSimd-only instructions, any
instruction given `engine=nisa.engine.gpsimd` (legacy `nisa.gpsimd_engine`),
and `tensor_tensor(op=nl.power)` (which only GpSimd implements). In legacy
(`neuronxcc.nki`) code an instruction that runs on GpSimd only implicitly
(`affine_select`, `iota`, ...) is a warning: production legacy kernels
(nki-samples' sliding-window flash attention) applied `affine_select` to a
PSUM tile and compiled, so the legacy compiler moved the data itself. An
explicit `engine=` GpSimd, and current-API instructions, are errors.

**Why on Trainium:** the GpSimd engine has no path to PSUM ("GpSimd Engine
cannot access PSUM"): its instructions need SBUF operands.

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
            role = kernel_role(ctx.model, kernel)
            for op in ops_of(kernel):
                if not is_gpsimd(op):
                    continue
                bad = [o for o in op.operands(role) if o.buffer == "psum"]
                if not bad:
                    continue
                names = ", ".join(f"{o.name} ({o.param})" for o in bad)
                explicit = "engine" in op.params
                # Legacy kernels in production (nki-samples' sliding-window flash
                # attention, NXDI) ran nisa.affine_select on a PSUM tile: the
                # legacy compiler moved the data itself. Only an explicit GpSimd
                # engine, or a current-API instruction (one call, one
                # instruction), is certain to fail.
                certain = explicit or not ctx.model.legacy
                message = (f"{op.label} runs on GpSimd, which cannot access PSUM, but {names} "
                           f"{'are' if len(bad) > 1 else 'is'} in PSUM")
                if not certain:
                    message += " (the legacy compiler may insert a copy; it costs a PSUM-to-SBUF move either way)"
                reporter.at_site(
                    op.site,
                    message,
                    level=Level.ERROR if certain else Level.WARNING,
                    hint="copy the data to SBUF with nisa.tensor_copy first, or use the Vector/Scalar engine",
                    kernel=kernel.name,
                )
