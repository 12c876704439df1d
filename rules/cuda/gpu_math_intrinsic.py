"""NKI429 gpu-math-intrinsic: a GPU math intrinsic (tl.exp2, tl.math.*,
libdevice, __expf, rsqrtf) in NKI kernel code."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import GpuNameRule


class GpuMathIntrinsic(GpuNameRule):
    id = "NKI429"
    name = "gpu-math-intrinsic"
    family = "cuda"
    level = Level.ERROR
    summary = "A GPU math intrinsic (tl.exp2, tl.math.*, libdevice, __expf, rsqrtf) in NKI kernel code"
    categories = (gn.MATH,)
    noun = "math intrinsic"
    fix_hint = "nisa.activation(dst, op=nl.exp, data=t, scale=...) or the nl.* math function; exp2(x) = exp(x * ln 2)"
    explanation = """
`tl.exp2`, `tl.math.*`, `tl.extra.cuda.libdevice.*`, `tl.fma`, `tl.umulhi`,
`tl.fdiv`, `tl.div_rn`, `tl.inline_asm_elementwise`, numba
`cuda.libdevice` / `cuda.fp16`, and pasted CUDA intrinsics (`__expf`,
`__fdividef`, `rsqrtf`, `exp2f`) in NKI kernel code.

**Why on Trainium.** ScalarE evaluates a fixed table of activation
functions (piecewise-polynomial `exp`, `log`, `tanh`, `gelu`, ...) and
VectorE/GpSimd provide ALU operations; there are no libdevice functions,
no inline assembly and no per-operation rounding modes. `exp2` in
particular must be rewritten, and its `log2(e)` scale factor with it (see
NKI505).

**Fix.** `nisa.activation(dst, op=nl.exp, data=t, scale=math.log(2))` for
`exp2`; `nl.rsqrt` / `nisa.activation(op=nl.rsqrt)`; plain ALU ops via
`nisa.tensor_tensor` / `nisa.tensor_scalar`.
"""
    references = ("aws-neuron-sdk nki/api/nki.api.shared.rst (activation functions)",)
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp2_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                e = tl.exp2(t)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[11],
            title="current API",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                nl.store(out, value=__expf(t))
                return out
            """,
            lines=[8],
            title="legacy API: a pasted CUDA intrinsic",
        ),
        valid(
            """
            import math
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp2_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.exp, data=t, scale=math.log(2))
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="exp2 as exp with scale ln 2",
        ),
    )
