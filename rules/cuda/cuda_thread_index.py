"""NKI401 cuda-thread-index: a CUDA thread index (threadIdx, laneid) is used in NKI kernel code."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import ARCH, GpuNameRule, TILING


class CudaThreadIndex(GpuNameRule):
    id = "NKI401"
    name = "cuda-thread-index"
    family = "cuda"
    level = Level.ERROR
    summary = "A CUDA thread index (threadIdx, laneid) is used in NKI kernel code"
    categories = (gn.THREAD,)
    noun = "thread index"
    fix_hint = "delete the per-thread index and compute on a whole [128, F] tile"
    explanation = """
`threadIdx.x`, `cuda.threadIdx.x`, `cupyx.jit.threadIdx.x` or `cuda.laneid`
inside an NKI kernel (or a helper it calls), imported from numba/cupyx or
pasted from CUDA C without an import.

**Why on Trainium.** There are no threads. One NKI instruction processes a
whole tile: up to 128 partitions times a free dimension of many elements
per partition. A per-thread index has no meaning; the CUDA "thread"
dimension becomes the partition axis (or the free axis) of a tile. The name
is undefined (pasted) or a numba/cupyx stub that cannot be evaluated
outside a GPU JIT, so the kernel does not compile.

**Fix.** Delete the index and rewrite the body as tile operations over
`[P <= 128, F]` slices, e.g. `nisa.tensor_tensor(dst=o, data1=a, data2=b,
op=nl.add)` on a `[128, F]` tile (legacy: `nl.add(nl.load(a[...]), ...)`).
"""
    references = (TILING, ARCH)
    examples = (
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def scale_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                row = cuda.threadIdx.x
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t * 2.0)
                return out
            """,
            lines=[8],
            title="legacy API: numba's cuda.threadIdx.x",
            level=Level.ERROR,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                tid = threadIdx.x
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[8],
            title="current API: threadIdx pasted from CUDA C",
        ),
        valid(
            """
            from numba import cuda
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @cuda.jit
            def gpu_copy(x, out):
                i = cuda.threadIdx.x
                out[i] = x[i]

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="the GPU reference kernel in the same module is host code, not an NKI kernel",
        ),
    )
