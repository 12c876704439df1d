"""NKI503 low-precision-reduction: a sum/mean reduction result is kept in bf16/fp16/fp8 and used in further arithmetic."""

from __future__ import annotations

from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.model.values import DType
from nkilint.rule import invalid, valid

from ._spots import NumericsRule, Spot, is_low, tile_name


class LowPrecisionReduction(NumericsRule):
    id = "NKI503"
    name = "low-precision-reduction"
    family = "numerics"
    level = Level.WARNING
    summary = "A sum/mean reduction result is kept in bf16/fp16/fp8 and used in further arithmetic"
    fix_hint = "reduce into an nl.float32 tile (dtype=nl.float32) and cast only the final output"
    explanation = """
`nl.sum(t, axis=1, dtype=nl.bfloat16)`, `nl.mean` on a bf16 tile without
`dtype=`, `nisa.tensor_reduce(dst=bf16_tile, op=nl.add, ...)` or an
activation `reduce_res` in low precision, whose result is then used in
arithmetic (a softmax denominator, a mean or variance that normalises the
data). Reductions stored directly to the output are not reported (one
rounding at the end is expected).

**Why on Trainium:** The reduction itself runs in fp32, but its result is
rounded to the destination dtype before it is used: a bf16 denominator
carries a relative error up to 2^-8 into every normalised element.
`nl.sum/mean/var` default to the input dtype. Triton's `tl.sum` upcasts to
fp32 and the GPU original kept the statistic in fp32 registers.

**Fix:** Reduce into an `nl.float32` tile (`dtype=nl.float32`, an fp32
`dst`/`reduce_res`), compute the normalisation in fp32, cast only the
final output.
"""
    references = ("aws-neuron-sdk nki/api/nki.language.rst (nl.sum dtype)", "aws-neuron-sdk nki/api/nki/isa/__init__.py (tensor_reduce)")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def normalize(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                den = nl.sum(t, axis=1, dtype=nl.bfloat16)
                nl.store(out, value=t / den)
                return out
            """,
            lines=[8],
            title="legacy API",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def normalize(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                s = nl.ndarray((128, 1), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                nisa.reciprocal(dst=s, data=s)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=s)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[11],
            title="current API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def normalize(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                nisa.reciprocal(dst=s, data=s)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=s)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="fp32 statistic",
        ),
    )

    def spots(self, ctx: RuleContext):
        return low_precision_reductions(ctx)


_ARITH_CONSUMERS = {"divide", "multiply", "subtract", "add", "reciprocal", "rsqrt", "sqrt", "log", "exp",
                    "tensor_tensor", "tensor_scalar", "activation", "scalar_tensor_tensor", "power"}


def low_precision_reductions(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            if not df.is_sum_reduction(data) or df.short(data.get("api")) in ("bn_stats", "bn_aggr", "tensor_partition_reduce"):
                continue
            outs = [n for p, n in df.writes(graph, op) if p in ("result", "dst", "reduce_res")]
            if df.short(data.get("api")) in ("activation", "activation_reduce", "exponential", "tensor_scalar_reduce"):
                outs = [n for p, n in df.writes(graph, op) if p == "reduce_res"]
            for out in outs:
                dtype = df.dtype_of(graph, out)
                if not is_low(dtype):
                    continue
                users = [u for u in df.readers(graph, out) if u != op and graph.attrs(u).get("engine") != "dma"
                         and df.short(graph.attrs(u).get("api")) in _ARITH_CONSUMERS]
                if not users:
                    continue
                user = graph.attrs(users[0])
                explicit = isinstance(df.param(data, "dtype"), DType)
                how = f"dtype={dtype}" if explicit else f"a {dtype} result"
                yield Spot(data.get("site"), (
                    f"{df.short(data.get('api'))} produces the reduction {tile_name(graph, out)} as {how} and "
                    f"{df.short(user.get('api'))} ({ctx.model.line_ref(user.get('site'))}) computes with it: the "
                    f"sum is rounded to {dtype} before it normalises the data, while tl.sum / torch reductions keep "
                    f"fp32; reduce into an nl.float32 tile and cast only the final output"
                ), kernel=kernel.name)
                break
