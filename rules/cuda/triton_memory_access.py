"""NKI409 triton-memory-access: triton pointer loads/stores and memory hints
(tl.load, tl.store, tl.make_block_ptr) in NKI kernel code."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import GpuNameRule, MIGRATION


class TritonMemoryAccess(GpuNameRule):
    id = "NKI409"
    name = "triton-memory-access"
    family = "cuda"
    level = Level.ERROR
    summary = "Triton pointer loads/stores and memory hints (tl.load, tl.store, tl.make_block_ptr) in NKI kernel code"
    categories = (gn.MEMORY,)
    noun = "memory access"
    fix_hint = "nisa.dma_copy(dst=tile, src=x[r0:r1, c0:c1]) (legacy nl.load / nl.store) on tensor slices"
    explanation = """
`tl.load(ptr + offs, mask=..., other=...)`, `tl.store`, `tl.make_block_ptr`,
`tl.advance` and the cache/alignment hints (`tl.multiple_of`,
`tl.max_contiguous`, `tl.assume`, `tl.swizzle2d`) in NKI kernel code.

**Why on Trainium.** NKI tensors are shaped views, not pointers: data moves
between HBM and SBUF by DMA on slices (`x[r0:r1, c0:c1]`, `nl.ds`, `.ap()`
access patterns). There is no fill value for masked lanes and no cache to
hint: SBUF is software-managed. Triton builtins raise outside
`@triton.jit`.

**Fix.** `nisa.dma_copy(dst=tile, src=x[r0:r1, c0:c1])` (legacy `nl.load` /
`nl.store`); bound the last tile with `min()` instead of a mask; drop the
hints.
"""
    references = ("aws-neuron-sdk nki/get-started/about/indexing-overview.rst", MIGRATION)
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl

            @nki.jit
            def copy_kernel(x, y):
                offs = nl.ds(0, 128)
                v = tl.load(x + 0)
                tl.store(y, v)
                return y
            """,
            lines=[8, 9],
            title="current API",
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
                t = tl.multiple_of(t, 16)
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[9],
            title="legacy API: an alignment hint",
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
            title="DMA on slices",
        ),
    )
