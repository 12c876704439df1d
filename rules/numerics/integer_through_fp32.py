"""NKI510 integer-through-fp32."""

from __future__ import annotations

from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.rule import invalid, valid

from ._spots import ARITH, NumericsRule, Spot, tile_name


class IntegerThroughFp32(NumericsRule):
    id = "NKI510"
    name = "integer-through-fp32"
    family = "numerics"
    level = Level.WARNING
    summary = "int32 arithmetic on Vector/Scalar engines (through fp32) can exceed 2^24; 64-bit integer tiles"
    fix_hint = "keep index math at compile time (Python ints) or in access patterns; stay below 2^24 on device"
    explanation = """
Arithmetic (`add`, `subtract`, `multiply`, ...) on int32/uint32 tiles with a
constant large enough to push values past 2^24 (an add of at least 2^24, a
multiply by at least 2^12 — a stride), int32 mixed with uint32 in legacy
`nl.*` arithmetic, and on-chip int64/uint64 tiles.

**Why on Trainium:** CUDA/Triton int32 arithmetic is exact. Vector and
Scalar engine ALU operations convert operands to fp32, so integers above
2^24 = 16,777,216 lose exactness (hashes, RNG counters, flattened indices,
token id times stride); dtype-changing copies and DMA casts go through fp32
too. Trainium has no native int64 (trn1 downcasts to int32; trn2 only with
`--native-int64`), and legacy NKI promotes (int32, uint32) to fp32.

**Fix:** Compute offsets at compile time (Python ints are unbounded) or in
DMA access patterns (`.ap()`); use bit operations for hashing; keep device
integers below 2^24 or split them.
"""
    references = ("aws-neuron-sdk nki/api/nki.api.shared.rst (ALU operations)",)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def offsets(ids):
                out = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=ids)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=8192)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API: token id times a row stride",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def counters(x):
                out = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.shared_hbm)
                c = nl.zeros((128, 1), dtype=nl.int64, buffer=nl.sbuf)
                nl.store(out, value=c)
                return out
            """,
            lines=[7],
            title="legacy API: an int64 tile",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def offsets(ids):
                out = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=ids)
                nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="small-range integer arithmetic",
        ),
    )

    def spots(self, ctx: RuleContext):
        return integers_through_fp32(ctx)


_INT32 = {"int32", "uint32"}


def integers_through_fp32(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        for nid, data in graph.tensors():
            if data.get("origin") == "alloc" and data.get("buffer") in ("sbuf", "psum") and df.dtype_of(graph, nid) in ("int64", "uint64"):
                yield Spot(data.get("site"), (
                    f"on-chip tile {tile_name(graph, nid)} is {df.dtype_of(graph, nid)}: Trainium has no native 64-bit "
                    f"integers (trn1 downcasts to int32; trn2 only with --native-int64), and engine arithmetic goes "
                    f"through fp32; keep index math at compile time (Python ints) or in int32 below 2^24"
                ), kernel=kernel.name)
        for op, data in graph.ops():
            s = df.short(data.get("api"))
            funcs = set(df.func_params(data).values())
            arith = (s in ARITH) or (funcs & ARITH and s in ("tensor_tensor", "tensor_scalar", "scalar_tensor_tensor"))
            if not arith:
                continue
            reads = [n for _, n in df.reads(graph, op)]
            ints = [n for n in reads if df.dtype_of(graph, n) in _INT32]
            if not ints:
                continue
            params = data.get("params_v") or {}
            big = None
            for key in ("operand0", "operand1", "y", "x", "scalar"):
                v = df.const_number(params.get(key))
                if v is None:
                    continue
                is_mul = (s == "multiply") or ("multiply" in funcs)
                if abs(v) >= 2 ** 24 or (is_mul and abs(v) >= 2 ** 12):
                    big = v
            dtypes = {df.dtype_of(graph, n) for n in reads}
            mixed = {"int32", "uint32"} <= dtypes and ctx.model.legacy
            if big is None and not mixed:
                continue
            why = (f"the constant {big:g} makes values reach 2^24 = 16,777,216 easily" if big is not None
                   else "mixing int32 and uint32 promotes to fp32 in legacy NKI")
            yield Spot(data.get("site"), (
                f"integer arithmetic ({s if s in ARITH else '/'.join(sorted(funcs & ARITH))}) on int32 tile "
                f"{tile_name(graph, ints[0])} runs through fp32 on Vector/Scalar engines and is exact only below 2^24; {why}, "
                f"where CUDA/Triton int32 math is exact; keep index math at compile time, use bit operations, or split "
                f"the value"
            ), kernel=kernel.name)
