"""NKI210 compute-operand-in-hbm: a compute-engine instruction reads or writes an HBM tensor."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.api_semantics import MATMUL_APIS, TRANSPOSE_APIS
from nkilint.model.graph import HBM
from nkilint.model.views import kernel_role, ops_of
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._ops import is_compute
from ._text import assumed_text


class ComputeOperandInHbm(Rule):
    id = "NKI210"
    name = "compute-operand-in-hbm"
    family = "memory"
    level = Level.ERROR
    summary = "A compute instruction reads or writes a tensor in HBM (compute engines only access SBUF and PSUM)"
    explanation = """
Finds compute-engine calls (Vector, Scalar, GpSimd) with an operand in HBM.
Matmul and transpose operands are checked by NKI212; Python operators on
HBM tensors (`ptr + offsets`, pointer arithmetic left over from a CUDA or
Triton port) by the cuda family. Operands whose buffer the model does not
know (parameters of helpers analysed on their own) are never reported.

**Why on Trainium:** the Vector, Scalar, GpSimd and Tensor engines read and
write only on-chip memory (SBUF and PSUM). Kernel inputs and `nl.hbm` /
`nl.shared_hbm` tensors live in device memory (HBM) and must be copied on
chip with a DMA first; results go back with a DMA. The compiler rejects a
compute call with an HBM operand (legacy error `err_unsupported_memory`:
"Expected operand 'x' of 'exp' to be in address space 'psum|sbuf', but got a
tile in 'hbm' instead").

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
            role = kernel_role(ctx.model, kernel)
            for op in ops_of(kernel):
                if not is_compute(op) or op.api in MATMUL_APIS + TRANSPOSE_APIS or op.operator:
                    # `ptr + offsets` on an HBM tensor is CUDA/Triton pointer
                    # arithmetic, which the cuda family reports (NKI409).
                    continue
                bad = [o for o in op.operands(role) if o.buffer in HBM and o.param != "result"]
                if not bad:
                    continue
                names = ", ".join(f"{o.name} ({o.param}, {o.buffer})" for o in bad)
                assumed = all(o.assumed for o in bad)
                reporter.at_site(
                    op.site,
                    f"{op.label} runs on a compute engine but its operand{'s' if len(bad) > 1 else ''} "
                    f"{names} {'are' if len(bad) > 1 else 'is'} in HBM; compute engines access only SBUF and PSUM"
                    + assumed_text(kernel, bad if assumed else []),
                    level=Level.WARNING if assumed else Level.ERROR,
                    hint="copy HBM data into an SBUF tile with nisa.dma_copy (legacy: nl.load) and write results back "
                    "with a DMA",
                    kernel=kernel.name,
                )
