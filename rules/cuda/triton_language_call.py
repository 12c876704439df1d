"""NKI410 triton-language-call: a triton.language operation (tl.dot, tl.sum,
tl.where, tl.zeros, ...) in NKI kernel code."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import GpuNameRule


class TritonLanguageCall(GpuNameRule):
    id = "NKI410"
    name = "triton-language-call"
    family = "cuda"
    level = Level.ERROR
    summary = "A triton.language operation (tl.dot, tl.sum, tl.where, tl.zeros, ...) in NKI kernel code"
    categories = (gn.TRITON_CALL,)
    noun = "operation"
    fix_hint = "replace it with the nki.language / nki.isa operation named in the message"
    explanation = """
Any other `triton.language` operation (`tl.dot`, `tl.sum`, `tl.max`,
`tl.exp`, `tl.where`, `tl.zeros`, `tl.cdiv`, `tl.trans`, ...) or a host-side
`triton.*` utility in NKI kernel code. Program ids, memory access,
iterators, `arange`, `constexpr`, atomics, barriers, math intrinsics and
dtypes have their own rules.

**Why on Trainium.** `triton.language` builtins only work inside
`@triton.jit` (outside they raise "Did you forget to add @triton.jit?"), and
their semantics differ: `tl.dot(a, b)` contracts a's last axis while TensorE
contracts the partition axis of both operands; `tl.sum(x, axis=0)` reduces
the axis that NKI puts on partitions.

**Fix.** Use the NKI operation named in the message, e.g. `tl.dot` ->
`nisa.nc_matmul(dst=psum, stationary=aT, moving=b)` accumulating in an fp32
PSUM tile, `tl.sum(x, axis=1)` -> `nisa.tensor_reduce(dst, op=nl.add,
data=x, axis=1)`, `tl.where` -> `nl.where` / `nisa.affine_select`.
"""
    references = ("aws-neuron-sdk nki/api/nki.isa.rst", "aws-neuron-sdk nki/api/nki.language.rst")
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=ta, src=aT[0:128, 0:128])
                nisa.dma_copy(dst=tb, src=b[0:128, 0:512])
                acc = tl.dot(ta, tb)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[13],
            title="current API: tl.dot",
        ),
        invalid(
            """
            import triton.language as tl
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                nl.store(out, value=tl.sum(t, axis=1))
                return out
            """,
            lines=[9],
            title="legacy API: tl.sum",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                nl.store(out, value=nl.sum(t, axis=1, dtype=nl.float32))
                return out
            """,
            title="nl.sum over the free axis",
        ),
    )
