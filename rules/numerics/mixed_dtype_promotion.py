"""NKI513 mixed-dtype-promotion."""

from __future__ import annotations

from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.rule import invalid, valid

from ._spots import ARITH, NumericsRule, Spot


class MixedDtypePromotion(NumericsRule):
    id = "NKI513"
    name = "mixed-dtype-promotion"
    family = "numerics"
    level = Level.WARNING
    summary = "Legacy nl.* arithmetic mixes fp16 with bf16 (or int32 with uint32): NKI promotes to fp32"
    fix_hint = "pass dtype= explicitly or cast one operand first"
    explanation = """
A legacy `nki.language` arithmetic call or operator without `dtype=` whose
tensor operands are float16 and bfloat16, or int32 and uint32.

**Why on Trainium:** Legacy NKI's promotion table widens (float16,
bfloat16) to float32 and (int32, uint32) to float32 ("new widened type is
float32, since int64 isn't supported on the hardware"), where Triton gives
float16 and uint32. The port's intermediate is then fp32: twice the SBUF
bytes, different rounding and DMA sizes, and for the integer case a loss
of exactness above 2^24.

**Fix:** Give `dtype=` explicitly on the call, or cast one operand to the
other's dtype first.
"""
    references = ("aws-neuron-sdk general/nki/api/nki.api.shared.rst at 0521004c (NKI Type Promotion)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mix(a, b):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                ta = nl.zeros((128, 512), dtype=nl.float16, buffer=nl.sbuf)
                tb = nl.zeros((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nl.store(out, value=nl.add(ta, tb))
                return out
            """,
            lines=[9],
            title="legacy API",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mix(a, b):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                ta = nl.zeros((128, 512), dtype=nl.float16, buffer=nl.sbuf)
                tb = nl.zeros((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nl.store(out, value=nl.add(ta, tb, dtype=nl.float16))
                return out
            """,
            title="explicit dtype",
        ),
    )

    def spots(self, ctx: RuleContext):
        return legacy_promotion(ctx)


def legacy_promotion(ctx: RuleContext) -> Iterator[Spot]:
    if not ctx.model.legacy:
        return
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            api = data.get("api") or ""
            if not api.startswith("nki.language.") or data.get("engine") == "dma" or df.param(data, "dtype") is not None:
                continue
            if df.short(api) not in ARITH | {"maximum", "minimum"}:
                continue
            dtypes = {df.dtype_of(graph, n) for _, n in df.reads(graph, op)}
            if {"float16", "bfloat16"} <= dtypes:
                why = ("float16 with bfloat16 promotes to float32 in legacy NKI (Triton gives float16), doubling the "
                       "result's SBUF bytes and changing its rounding and DMA sizes")
            elif {"int32", "uint32"} <= dtypes:
                why = ("int32 with uint32 promotes to float32 in legacy NKI (Triton gives uint32), so values above "
                       "2^24 lose exactness")
            else:
                continue
            yield Spot(data.get("site"), (
                f"{df.short(api)} mixes {' and '.join(sorted(d for d in dtypes if d))}: {why}; pass dtype= explicitly "
                f"or cast one operand first"
            ), kernel=kernel.name)
