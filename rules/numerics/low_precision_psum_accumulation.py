"""NKI501 low-precision-psum-accumulation: matmul partial sums accumulate in a bf16/fp16/fp8 PSUM tile instead of fp32."""

from __future__ import annotations

from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.rule import invalid, valid

from ._spots import MATMUL_DOC, TRN3, NumericsRule, Spot, is_low, is_matmul, loop_text, tile_name


class LowPrecisionPsumAccumulation(NumericsRule):
    id = "NKI501"
    name = "low-precision-psum-accumulation"
    family = "numerics"
    level = Level.WARNING
    summary = "Matmul partial sums accumulate in a bf16/fp16/fp8 PSUM tile instead of fp32"
    fix_hint = "declare the PSUM accumulator nl.float32; cast once when evicting to SBUF"
    explanation = """
`nc_matmul` writes the same low-precision (bf16, fp16, fp8) PSUM tile
across a contraction loop (or with `accumulate=True`), or legacy code adds
`nl.matmul` results into a low-precision PSUM tile (`acc += nl.matmul(...)`
with `acc = nl.zeros(..., dtype=nl.bfloat16, buffer=nl.psum)`).

**Why on Trainium:** TensorE accumulates in fp32 internally, and the
Triton/CUDA original kept its `tl.dot` / WMMA accumulator in fp32
registers. A bf16 PSUM accumulator is rounded back to bf16 after every
accumulation on NeuronCore-v4 (trn3), so a K loop of many tiles loses
precision step by step; on NeuronCore-v2/v3 (trn1/trn2) the matmul
destination must be fp32 anyway.

**Fix:** Accumulate all K tiles in one `nl.float32` PSUM tile (first
matmul overwrites, the rest accumulate) and cast once when evicting with
`nisa.tensor_copy` to a bf16 SBUF tile.
"""
    references = (MATMUL_DOC, TRN3)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                K, M = aT.shape
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.psum)
                for k in range(8):
                    ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=aT[k * 128:(k + 1) * 128, 0:128])
                    nisa.dma_copy(dst=tb, src=b[k * 128:(k + 1) * 128, 0:512])
                    nisa.nc_matmul(dst=acc, stationary=ta, moving=tb)
                res = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[15],
            title="current API, trn3: bf16 PSUM accumulated over 8 K tiles",
            target="trn3",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.bfloat16, buffer=nl.psum)
                for k in nl.affine_range(8):
                    ta = nl.load(aT[k * 128:(k + 1) * 128, 0:128])
                    tb = nl.load(b[k * 128:(k + 1) * 128, 0:512])
                    acc += nl.matmul(ta, tb, transpose_x=True)
                nl.store(out, value=acc)
                return out
            """,
            lines=[11],
            title="legacy API: acc += nl.matmul into a bf16 PSUM tile",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in range(8):
                    ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=aT[k * 128:(k + 1) * 128, 0:128])
                    nisa.dma_copy(dst=tb, src=b[k * 128:(k + 1) * 128, 0:512])
                    nisa.nc_matmul(dst=acc, stationary=ta, moving=tb)
                res = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="fp32 PSUM, one cast at eviction",
        ),
    )

    def spots(self, ctx: RuleContext):
        return psum_low_precision_accumulation(ctx)


def psum_low_precision_accumulation(ctx: RuleContext) -> Iterator[Spot]:
    trn3 = ctx.target.name == "trn3"
    for kernel, graph in ctx.model.graphs():
        by_dst: dict[str, list[tuple[str, str]]] = {}
        for op, data in graph.ops():
            # nc_matmul_mx (MX quantised, trn3) documents bf16 PSUM as a supported destination: not reported.
            if is_matmul(data) and df.short(data.get("api")) == "nc_matmul":
                for param, dst in df.writes(graph, op):
                    if param == "dst":
                        by_dst.setdefault(df.base(graph, dst), []).append((op, dst))
        for base, pairs in by_dst.items():
            bdata = graph.attrs(base)
            dtype = df.dtype_of(graph, base)
            if bdata.get("buffer") != "psum" or not is_low(dtype):
                continue
            ops = [op for op, _ in pairs]
            loops = [df.accumulation_loop(graph, op, base, dst) for op, dst in pairs]
            loop = next((lp for lp in loops if lp is not None), None)
            explicit = any(df.const_param(graph.attrs(op), "accumulate") is True for op in ops)
            same_place = len({graph.attrs(dst).get("index") for _, dst in pairs}) < len(pairs)
            if loop is None and not same_place and not explicit:
                continue
            first = min(ops, key=df.op_order)
            how = f"across {loop_text(graph, loop)}" if loop else "over several matmuls"
            extra = (
                "trn3 rounds the running sum back to bf16 after every accumulation"
                if trn3 else f"on {ctx.target.name} the matmul destination must be fp32 anyway (NeuronCore-v2/v3)"
            )
            yield Spot(graph.attrs(first).get("site"), (
                f"nc_matmul accumulates into PSUM tile {tile_name(graph, base)} of dtype {dtype} {how}: {extra}, while "
                f"the GPU original (tl.dot / WMMA) accumulated in fp32; accumulate in an fp32 PSUM tile and cast once "
                f"when evicting to SBUF"
            ), kernel=kernel.name)
        # Legacy: acc += nl.matmul(...) into a low-precision PSUM tile.
        for op, data in graph.ops():
            if df.short(data.get("api")) not in ("add",) or not (data.get("operator") or data.get("augmented")):
                continue
            reads = df.reads(graph, op)
            acc = [n for _, n in reads if graph.attrs(df.base(graph, n)).get("buffer") == "psum"
                   and graph.attrs(df.base(graph, n)).get("origin") == "alloc" and is_low(df.dtype_of(graph, n))]
            mm = [n for _, n in reads if any(is_matmul(graph.attrs(w)) for w in df.writers(graph, n))]
            if not acc or not mm:
                continue
            base = df.base(graph, acc[0])
            loop = df.repeats(graph, op, base)
            how = f"across {loop_text(graph, loop)}" if loop else "with +="
            yield Spot(data.get("site"), (
                f"matmul results are accumulated into PSUM tile {tile_name(graph, base)} of dtype "
                f"{df.dtype_of(graph, base)} {how}: each addition rounds to {df.dtype_of(graph, base)}, while the "
                f"GPU original accumulated in fp32; declare the PSUM accumulator nl.float32 and cast once when storing"
            ), kernel=kernel.name)
