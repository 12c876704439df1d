"""NKI402 cuda-block-grid-index: a CUDA block or grid index (blockIdx,
blockDim, gridDim, cuda.grid) is used in NKI kernel code."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import GpuNameRule, LNC, TILING


class CudaBlockIndex(GpuNameRule):
    id = "NKI402"
    name = "cuda-block-grid-index"
    family = "cuda"
    level = Level.ERROR
    summary = "A CUDA block or grid index (blockIdx, blockDim, gridDim, cuda.grid) is used in NKI kernel code"
    categories = (gn.BLOCK,)
    noun = "block/grid index"
    fix_hint = "loop over 128-row tiles inside the kernel: for t in range(n // 128): x[t * 128:(t + 1) * 128, :]"
    explanation = """
`blockIdx`, `blockDim`, `gridDim`, `cuda.grid(n)`, `cuda.gridsize(n)` and the
idiom `i = blockIdx.x * blockDim.x + threadIdx.x` in NKI kernel code.

**Why on Trainium.** There is no hardware block scheduler. A CUDA thread
block maps to one iteration of a tile loop *inside* a single kernel
instance; work is split across at most the two physical cores of a logical
NeuronCore with `nl.program_id(0)`. The names are undefined or numba/cupyx
stubs outside a GPU JIT, so the kernel does not compile.

**Fix.** Loop over tiles in the kernel: `for t in range(n // 128):` with
offsets `t * 128:(t + 1) * 128` (legacy: `nl.affine_range`).
"""
    references = (TILING, LNC)
    examples = (
        invalid(
            """
            from numba import cuda
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                row0 = cuda.blockIdx.x * cuda.blockDim.x
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API: blockIdx * blockDim from numba",
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                base = blockIdx.x * 128
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[7],
            title="legacy API: pasted blockIdx",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n, f = x.shape
                out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
                for t in range(n // 128):
                    tile = nl.ndarray((128, f), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=tile, src=x[t * 128:(t + 1) * 128, :])
                    nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=tile)
                return out
            """,
            title="a tile loop replaces the block index",
        ),
    )
