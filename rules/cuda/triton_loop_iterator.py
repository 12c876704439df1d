"""NKI411 triton-loop-iterator: a Triton loop iterator (tl.range,
tl.static_range) in NKI kernel code."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import GpuNameRule, LANG_GUIDE


class TritonIterator(GpuNameRule):
    id = "NKI411"
    name = "triton-loop-iterator"
    family = "cuda"
    level = Level.ERROR
    summary = "A Triton loop iterator (tl.range, tl.static_range) in NKI kernel code"
    categories = (gn.ITERATOR,)
    noun = "loop iterator"
    fix_hint = "use range(...) (legacy: nl.affine_range / nl.sequential_range)"
    explanation = """
`for k in tl.range(0, K, BLOCK_K, num_stages=3)` or `tl.static_range(...)`
in NKI kernel code.

**Why on Trainium.** Wrong namespace: the builtin raises outside
`@triton.jit`. Software pipelining is not a loop attribute on Trainium: the
NKI compiler schedules engines from data dependencies, and the programmer
overlaps DMA with compute through tiles allocated inside the loop
(multi-buffering). Current NKI unrolls every `range` loop at compile time.

**Fix.** `for k in range(...)` (legacy: `nl.affine_range` for independent
iterations, `nl.sequential_range` for carried ones).
"""
    references = (LANG_GUIDE,)
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((512, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in tl.range(0, 4, num_stages=2):
                    t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
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
                out = nl.ndarray((512, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in tl.static_range(4):
                    t = nl.load(x[i * 128:(i + 1) * 128, :])
                    nl.store(out[i * 128:(i + 1) * 128, :], value=t)
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
                out = nl.ndarray((512, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    t = nl.load(x[i * 128:(i + 1) * 128, :])
                    nl.store(out[i * 128:(i + 1) * 128, :], value=t)
                return out
            """,
            title="legacy nl.affine_range",
        ),
    )
