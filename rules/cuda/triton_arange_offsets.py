"""NKI412 triton-arange-offsets: triton offset vectors (tl.arange) in NKI kernel code."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import GpuNameRule, MIGRATION


class TritonArange(GpuNameRule):
    id = "NKI412"
    name = "triton-arange-offsets"
    family = "cuda"
    level = Level.ERROR
    summary = "Triton offset vectors (tl.arange) in NKI kernel code"
    categories = (gn.ARANGE,)
    noun = "offset vector"
    fix_hint = "index with slices x[r0:r0 + 128, :] or nl.ds(r0, 128)"
    explanation = """
`offs = pid * BLOCK + tl.arange(0, BLOCK)` in NKI kernel code.

**Why on Trainium.** Triton builds a 1-D vector of per-lane offsets and
masks it; NKI addresses 2-D tiles (partition x free) by slices. The builtin
raises outside `@triton.jit`; legacy `nl.arange` is an NKI construct with
its own rules (multi-dimensional, removed in current NKI — see the
migration family).

**Fix.** Integer slices (`x[r0:r0 + 128, :]`) or `nl.ds(r0, 128)`; bound the
last tile with `min()`.
"""
    references = ("aws-neuron-sdk nki/get-started/about/indexing-overview.rst", MIGRATION)
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                offs = tl.arange(0, 128)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
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
                cols = tl.arange(0, 512)
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[8],
            title="legacy API",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                i_p, i_f = nl.mgrid[0:128, 0:512]
                t = nl.load(x[i_p, i_f])
                nl.store(out[i_p, i_f], value=t)
                return out
            """,
            title="legacy NKI's own index helpers are not Triton leftovers",
        ),
    )
