"""NKI511 engine-precision-choice."""

from __future__ import annotations

from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.rule import invalid, valid

from ._spots import NumericsRule, Spot, activation_func


class EnginePrecisionChoice(NumericsRule):
    id = "NKI511"
    name = "engine-precision-choice"
    family = "numerics"
    level = Level.NOTE
    summary = "reciprocal/rsqrt on ScalarE (activation) is less precise than the VectorE/GpSimd versions"
    fix_hint = "use nisa.reciprocal (VectorE) or nl.rsqrt (GpSimd) where precision matters"
    explanation = """
`nisa.activation(op=nl.reciprocal)` or `nisa.activation(op=nl.rsqrt)`:
ScalarE's polynomial approximation, typically in a LayerNorm/RMSNorm or
softmax port where the GPU used `1.0f / x` or `rsqrtf` in fp32. A note.

**Why on Trainium:** The NKI docs: "Vector Engine performs reciprocal at a
higher precision compared to Scalar Engine", about 8x slower for large
tiles but comparable below 64 elements per partition; NKI 0.5 moved
`nl.rsqrt` to GpSimd for precision. Normalisations computed on ScalarE can
drift from the GPU reference beyond tight tolerances.

**Fix:** `nisa.reciprocal` (VectorE) for per-row statistics (usually `[128,
1]` tiles, where it costs nothing extra); `nl.rsqrt` for rsqrt.
"""
    references = ("aws-neuron-sdk nki/api/nki.api.shared.rst (NKI engine selection)",)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def inv(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.activation(dst=t, op=nl.reciprocal, data=t)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API",
            level=Level.NOTE,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def inv(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.reciprocal(dst=t, data=t)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="VectorE reciprocal",
        ),
    )

    def spots(self, ctx: RuleContext):
        return engine_precision(ctx)


def engine_precision(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            func = activation_func(data)
            if func not in ("reciprocal", "rsqrt"):
                continue
            better = "nisa.reciprocal (VectorE)" if func == "reciprocal" else "nl.rsqrt (GpSimd, NKI 0.5+)"
            yield Spot(data.get("site"), (
                f"nisa.activation(op=nl.{func}) runs on ScalarE's polynomial approximation, less precise than "
                f"{better}; a normalisation ported from rsqrtf / 1.0f / x in fp32 may drift from the GPU result; the "
                f"docs suggest VectorE when the tile has fewer than 64 elements per partition (comparable speed)"
            ), Level.NOTE, kernel.name)
