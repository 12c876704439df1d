"""NKI403 cuda-shared-memory: cUDA shared/local memory (cuda.shared.array,
cuda.local.array, __shared__) in NKI kernel code."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import ARCH, GpuNameRule


class CudaSharedMemory(GpuNameRule):
    id = "NKI403"
    name = "cuda-shared-memory"
    family = "cuda"
    level = Level.ERROR
    summary = "CUDA shared/local memory (cuda.shared.array, cuda.local.array, __shared__) in NKI kernel code"
    categories = (gn.SHARED,)
    noun = "shared-memory declaration"
    fix_hint = "allocate an SBUF tile: nl.ndarray((128, F), dtype=..., buffer=nl.sbuf)"
    explanation = """
`cuda.shared.array(shape, dtype)`, `cuda.local.array`, `cuda.const.array_like`,
`cupyx.jit.shared_memory` or a pasted `__shared__` in NKI kernel code.

**Why on Trainium.** Shared memory maps to SBUF (24 MiB on trn1, 28 MiB on
trn2, 128 partitions), which is software-managed and explicitly allocated;
there is no per-block scratchpad and no cache. The numba/cupyx calls are
stubs that only exist inside a GPU JIT, so the kernel does not compile.

**Fix.** Allocate an SBUF tile with `nl.ndarray(shape, dtype,
buffer=nl.sbuf)` and fill it with one DMA (`nisa.dma_copy`, legacy
`nl.load`) instead of a cooperative per-thread copy.
"""
    references = ("aws-neuron-sdk nki/get-started/about/memory-hierarchy-overview.rst", ARCH)
    examples = (
        invalid(
            """
            from numba import cuda
            import numpy as np
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                smem = cuda.shared.array((32, 32), np.float32)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API",
        ),
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                tile = cuda.local.array(16, nl.float32)
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[8],
            title="legacy API: cuda.local.array",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                smem = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=smem, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=smem)
                return out
            """,
            title="an SBUF tile",
        ),
    )
