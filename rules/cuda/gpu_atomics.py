"""NKI405 gpu-atomics: a GPU atomic (cuda.atomic.add, tl.atomic_add, atomicAdd)
in NKI kernel code."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import GpuNameRule


class GpuAtomics(GpuNameRule):
    id = "NKI405"
    name = "gpu-atomics"
    family = "cuda"
    level = Level.ERROR
    summary = "A GPU atomic (cuda.atomic.add, tl.atomic_add, atomicAdd) in NKI kernel code"
    categories = (gn.ATOMIC,)
    noun = "atomic"
    fix_hint = "accumulate per-tile partials and combine them with a reduction or a PSUM matmul accumulation"
    explanation = """
`cuda.atomic.add/max/cas/...`, `tl.atomic_add/max/cas/xchg/...`,
`cupyx.jit.atomic_*` or a pasted `atomicAdd` in NKI kernel code.

**Why on Trainium.** There are no general atomics. Accumulation is
structured: within a partition by VectorE/ScalarE reductions, across
partitions by TensorE (ones-vector matmul) or GpSimd, across matmul tiles by
PSUM accumulation, into HBM by DMA read-modify-write (`nisa.dma_compute`,
add only and unique indices only; legacy `nl.atomic_rmw`). Scatter-add with
duplicate indices (histograms, `index_add`) needs an algorithm change. The
GPU reference itself is order-dependent for float atomics.

**Fix.** Two-phase reduction: per-tile partials in SBUF, then
`nisa.tensor_reduce` or a ones-vector `nisa.nc_matmul` into an fp32 PSUM
tile; for duplicate-index scatter, sort + segment reduce or a one-hot
matmul.
"""
    references = ("aws-neuron-sdk nki/api/nki/isa/__init__.py (dma_compute)",)
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def sum_kernel(x, total):
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                tl.atomic_add(total, t)
                return total
            """,
            lines=[10],
            title="current API: tl.atomic_add",
        ),
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def hist_kernel(x, bins):
                t = nl.load(x[0:128, 0:1])
                cuda.atomic.add(bins, 0, 1)
                return bins
            """,
            lines=[8],
            title="legacy API: cuda.atomic.add",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def sum_kernel(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                nisa.dma_copy(dst=out, src=s)
                return out
            """,
            title="a free-axis reduction instead of atomics",
        ),
    )
