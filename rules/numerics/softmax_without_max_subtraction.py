"""NKI504 softmax-without-max-subtraction."""

from __future__ import annotations

from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.model.graph import KernelGraph
from nkilint.model.values import TensorV
from nkilint.rule import invalid, valid

from ._spots import ACT_DOC, NumericsRule, Spot, tile_name


class SoftmaxWithoutMax(NumericsRule):
    id = "NKI504"
    name = "softmax-without-max-subtraction"
    family = "numerics"
    level = Level.WARNING
    summary = "exp feeds a sum and a division (a softmax) without subtracting the row maximum first"
    fix_hint = "tensor_reduce(op=nl.maximum, negate=True) then activation(op=nl.exp, bias=neg_max, reduce_op=nl.add)"
    explanation = """
An `exp` (`nl.exp`, `nisa.activation(op=nl.exp)`, `nisa.exponential`)
whose result is summed and then divides (or is multiplied by the
reciprocal of the sum), with no maximum reduction upstream of its input and
no `bias=` / `max_value=` on the exp itself.

**Why on Trainium:** `exp` overflows to inf above about 88.7 in fp32 and
bf16 (11.1 in fp16); inf / inf gives NaN. GPU references (`tl.softmax`,
`torch.softmax`, the Triton tutorial's `row - tl.max(row, axis=0)`) subtract
the row maximum; a port that dropped it matches only for small logits.

**Fix:** `nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=x, axis=1,
negate=True)`, then `nisa.activation(dst=e, op=nl.exp, data=x,
bias=neg_max, reduce_op=nl.add, reduce_res=s)`, `nisa.reciprocal` and a
multiply (on trn3, `nisa.exponential(max_value=...)`). Legacy:
`nl.exp(x - nl.max(x, axis=1, keepdims=True))`.
"""
    references = (ACT_DOC, "aws-neuron-sdk nki/api/nki/isa/__init__.py (activation bias, exponential max_value)")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def softmax(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                e = nl.exp(t)
                s = nl.sum(e, axis=1, dtype=nl.float32)
                nl.store(out, value=e / s)
                return out
            """,
            lines=[8],
            title="legacy API",
            level=Level.WARNING,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def softmax(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=t, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=s)
                nisa.reciprocal(dst=s, data=s)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=s)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[11],
            title="current API: fused exp+sum without bias",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def softmax(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                neg_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=t, axis=1, negate=True)
                s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=t, op=nl.exp, data=t, bias=neg_max, reduce_op=nl.add, reduce_res=s)
                nisa.reciprocal(dst=s, data=s)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=s)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="max subtracted through bias=",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def softmax(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                m = nl.max(t, axis=1, keepdims=True)
                e = nl.exp(t - m)
                s = nl.sum(e, axis=1, dtype=nl.float32)
                nl.store(out, value=e / s)
                return out
            """,
            title="legacy API with the max subtracted",
        ),
    )

    def spots(self, ctx: RuleContext):
        return softmax_without_max(ctx)


def softmax_without_max(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            if not df.is_exp(data):
                continue
            after = df.consumers(graph, op, depth=4)
            sums = [c for c in after if df.is_sum_reduction(graph.attrs(c))]
            fused_sum = df.is_sum_reduction(data)
            if not sums and not fused_sum:
                continue
            divides = [c for c in after if df.is_division(graph.attrs(c))]
            if not divides:
                continue
            if df.max_subtracted(graph, op):
                continue
            src = df.exp_input(graph, op)
            dtype = df.dtype_of(graph, src[0]) if src else None
            limit = "11.1 in fp16" if dtype == "float16" else "88.7 in fp32/bf16"
            yield Spot(data.get("site"), (
                f"exp of {tile_name(graph, src[0]) if src else 'the logits'} feeds a sum and a division (a softmax) "
                f"without subtracting the row maximum first: exp overflows to inf above {limit} and the normalisation "
                f"gives NaN, where the GPU reference (tl.softmax / torch.softmax) subtracts the max; compute "
                f"nisa.tensor_reduce(op=nl.maximum, negate=True) and pass it as bias= to activation(op=nl.exp, "
                f"reduce_op=nl.add, reduce_res=...)"
            ), kernel=kernel.name)
