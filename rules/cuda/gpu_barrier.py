"""NKI404 gpu-barrier: a GPU barrier or fence (__syncthreads, cuda.syncthreads,
tl.debug_barrier) in NKI kernel code."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import GpuNameRule


class CudaBarrier(GpuNameRule):
    id = "NKI404"
    name = "gpu-barrier"
    family = "cuda"
    level = Level.ERROR
    summary = "A GPU barrier or fence (__syncthreads, cuda.syncthreads, tl.debug_barrier) in NKI kernel code"
    categories = (gn.BARRIER,)
    noun = "barrier/fence"
    fix_hint = "delete the barrier; the compiler synchronises engines from data dependencies"
    explanation = """
`cuda.syncthreads()`, `cuda.syncwarp()`, `cuda.threadfence*()`, cooperative
group syncs, `tl.debug_barrier()`, `torch.cuda.synchronize()` or a pasted
`__syncthreads()` in NKI kernel code.

**Why on Trainium.** NKI has a sequential program model: "programmers do
not need to program engine synchronization manually. The Neuron Compiler
can automatically insert the required synchronizations during compilation,
based on data dependencies" (architecture guide). Ordering hints
(`nl.no_reorder()`, scheduling APIs) are for performance only, and
`nisa.core_barrier` synchronises the two cores of an LNC on shared HBM.
The GPU calls are undefined or raise outside a GPU JIT.

**Fix.** Delete the barrier. If it separated two phases that run on
different LNC cores, use `nisa.core_barrier` on the shared tensor.
"""
    references = ("aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (engine synchronization)",)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                __syncthreads()
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API: pasted __syncthreads()",
        ),
        invalid(
            """
            import triton.language as tl
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                tl.debug_barrier()
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[9],
            title="legacy API: tl.debug_barrier()",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="no barrier: the compiler orders the two DMAs",
        ),
    )
