"""NKI408 triton-program-id: triton/Pallas program ids (tl.program_id,
tl.num_programs) in NKI kernel code."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import GpuNameRule, LNC, MIGRATION


class TritonProgramId(GpuNameRule):
    id = "NKI408"
    name = "triton-program-id"
    family = "cuda"
    level = Level.ERROR
    summary = "Triton/Pallas program ids (tl.program_id, tl.num_programs) in NKI kernel code"
    categories = (gn.PROGRAM_ID,)
    noun = "program id"
    fix_hint = "loop over 128-row tiles in the kernel; keep nl.program_id(0) only for the LNC split"
    explanation = """
`tl.program_id(axis)`, `tl.num_programs(axis)` (or Pallas `pl.program_id`)
in NKI kernel code.

**Why on Trainium.** Triton launches thousands of independent programs, one
per block; NKI launches one program per physical core of a logical
NeuronCore (1 or 2), and `nl.program_id(0)` only tells those cores apart
(in legacy NKI a larger SPMD grid ran its instances one after another on
one core). `triton.language` builtins raise outside `@triton.jit`, so the
kernel does not compile.

**Fix.** Loop over 128-partition tiles inside the kernel; optionally split
the outer loop across the LNC cores with `nl.program_id(0)` and
`nl.num_programs()`.
"""
    references = (LNC, MIGRATION)
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
                pid = tl.program_id(0)
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
                n = tl.num_programs(0)
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
                out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                i = nl.program_id(0)
                t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
                nl.store(out[i * 128:(i + 1) * 128, 0:512], value=t)
                return out
            """,
            title="legacy NKI's own nl.program_id is not a Triton leftover",
        ),
    )
