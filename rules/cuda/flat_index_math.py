"""NKI424 flat-index-math: a tensor is indexed with flat row-major offsets
computed from strides (row * stride + col)."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.rule import invalid, valid

from ._base import Spot, SpotRule


def flat_index_math(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    for fn in device.outermost:
        for node in device.nodes(fn):
            if not isinstance(node, ast.Subscript):
                continue
            strides = [
                n for n in astwalk.walk(node.slice)
                if (isinstance(n, ast.Name) and re.search(r"(?i)^stride|stride_|_stride$", n.id))
                or (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "stride")
            ]
            if not strides or not any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) for n in astwalk.walk(node.slice)):
                continue
            owner = device.owner(node) or fn
            yield Spot(node, (
                f"{ast.unparse(node)[:80]} computes a flat row-major offset with {ast.unparse(strides[0])}: Trainium "
                f"tiles are 2-D (partition x free) and HBM is read by strided DMA over views; keep the tensor "
                f"multi-dimensional (reshape the HBM view to [P, F]) and slice it"
            ), kernel=owner.name)


class FlatIndexMath(SpotRule):
    id = "NKI424"
    name = "flat-index-math"
    family = "cuda"
    level = Level.WARNING
    summary = "A tensor is indexed with flat row-major offsets computed from strides (row * stride + col)"
    fix_hint = "keep the tensor 2-D: reshape the HBM view to [P, F] and slice it"
    explanation = """
Subscripts whose index multiplies by a stride (`x[row * stride_xm + col]`,
`x[i * x.stride(0) + j]`): the flat pointer-space addressing of CUDA and
Triton (`offs_m[:, None] * stride_m + offs_n[None, :] * stride_n`).

**Why on Trainium.** Trainium tiles have a physical 2-D layout (partition x
free) and HBM is read by strided DMA over views. Flattening and re-deriving
coordinates typically produces 1-D tiles and per-element DMAs. Stride
arithmetic inside `.ap(...)` access patterns and `nl.ds` is legitimate and
is not reported (it is not a subscript).

**Fix.** Keep tensors multi-dimensional: reshape the HBM view to a `[P, F]`
shape (free on HBM), then slice `x[r0:r1, c0:c1]`.
"""
    references = ("aws-neuron-sdk nki/get-started/about/indexing-overview.rst",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x, stride_xm):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[3 * stride_xm + 5])
                nl.store(out[0:1, 0:1], value=t)
                return out
            """,
            lines=[7],
            title="legacy API",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, row, stride_row):
                out = nl.ndarray((1, 1), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((1, 1), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[row * stride_row:row * stride_row + 1])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n = x.shape[0]
                x2 = x.reshape((n // 512, 512))
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x2[0:128, :])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="reshape the HBM view and slice it",
        ),
    )

    def spots(self, ctx: RuleContext):
        return flat_index_math(ctx)
