"""NKI309 fp32-matmul: matmuls on fp32 operands that run at a quarter of the bf16 rate."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid

from . import _dma as dma
from ._ops import dtype_of, matmul_operands
from ._report import OncePerSite, operand_text


# Dense TensorE peak (TFLOPS) for fp32 and for bf16/fp16/tf32 inputs, by
# NeuronCore version (the NeuronCore-v2/v3/v4 architecture pages,
# https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/arch/neuron-hardware/).
MATMUL_TFLOPS = {2: (23, 92), 3: (20, 79), 4: (20, 79)}


class Fp32Matmul(Rule):
    id = "NKI309"
    name = "fp32-matmul"
    family = "pipeline"
    level = Level.WARNING
    summary = "A TensorE matmul takes fp32 operands, about 4x slower than bf16"
    explanation = """
The rule reports `nisa.nc_matmul` and `nl.matmul(..., transpose_x=True)`
whose stationary and moving operands are both known to be fp32; transposes
(`is_transpose=True`, `nc_transpose`) are left out.

**Why on Trainium:** TensorE multiplies bf16, fp16, tf32 and fp8 at full rate;
with fp32 inputs "the instruction cost is roughly 4x higher" (architecture
guide, TensorE cost model): about 23 vs 92 dense TFLOPS on trn1 and 20 vs 79 on
trn2 and trn3. Accumulation in PSUM is fp32 either way. A common cause is an
SBUF tile allocated as `nl.float32` for data that arrives in bf16 (the tiling
overview does it for simplicity).

**Fix:** down-cast the operands before the matmul: allocate the SBUF tiles
as `nl.bfloat16` (the DMA casts while loading) or copy them with
`nisa.tensor_copy(dst=tile_bf16, src=tile_fp32)`; keep fp32 only where the
extra precision is required, and then suppress with `# noqa: NKI309`.
"""
    references = (
        "aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (TensorE cost model: fp32 ~4x)",
        "aws-neuron-sdk nki/guides/architecture/trainium2_arch.rst (TensorE throughput)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def project(xT, w):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x_sb = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                w_sb = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=x_sb, src=xT[0:128, 0:128])
                nisa.dma_copy(dst=w_sb, src=w[0:128, 0:512])
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=x_sb, moving=w_sb)
                o = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=o, src=ps)
                nisa.dma_copy(dst=out, src=o)
                return out
            """,
            lines=[13],
            title="current API: fp32 SBUF tiles feed the matmul (what they hold is unknown: a note)",
            level=Level.NOTE,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def project(xT, w):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x_bf = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=x_bf, src=xT[0:128, 0:128])
                x_sb = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=x_sb, src=x_bf)
                w_sb = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=w_sb, src=w[0:128, 0:512])
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=x_sb, moving=w_sb)
                o = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=o, src=ps)
                nisa.dma_copy(dst=out, src=o)
                return out
            """,
            lines=[15],
            title="current API: bf16 data widened to fp32 before the matmul (a warning)",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def column_sums(x):
                out = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                ones = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=ones, value=1.0)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                ps = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=ones, moving=t)
                o = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=o, src=ps)
                nisa.dma_copy(dst=out, src=o)
                return out
            """,
            title="an exact fp32 reduction with a constant ones vector",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def project(xT, w):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x_sb = nl.load(xT[0:128, 0:128], dtype=nl.float32)
                w_sb = nl.load(w[0:128, 0:512], dtype=nl.float32)
                res = nl.matmul(x_sb, w_sb, transpose_x=True)
                nl.store(out, value=res)
                return out
            """,
            lines=[9],
            title="legacy API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def project(xT, w):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                x_sb = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                w_sb = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=x_sb, src=xT[0:128, 0:128])
                nisa.dma_copy(dst=w_sb, src=w[0:128, 0:512])
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=x_sb, moving=w_sb)
                o = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=o, src=ps)
                nisa.dma_copy(dst=out, src=o)
                return out
            """,
            title="bf16 operands, fp32 accumulation",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = OncePerSite(ctx)
        slow, fast = MATMUL_TFLOPS.get(ctx.target.generation, (20, 79))
        for kernel in model.kernels:
            graph = kernel.graph
            for op_id, data in graph.ops():
                ops = matmul_operands(graph, op_id)
                if ops is None:
                    continue
                if dtype_of(graph, ops.stationary) != "float32" or dtype_of(graph, ops.moving) != "float32":
                    continue
                origins = {n: _precision_origin(graph, graph.base_tensor(n)) for n in (ops.stationary, ops.moving)}
                if {"constant", "integer"} & set(origins.values()):
                    continue  # a reduction/broadcast with a constant matrix, or exact integer data
                low = [n for n, o in origins.items() if o.startswith("low:")]
                cost = (f"TensorE runs fp32 at about 1/4 of the bf16 rate (est. {slow} vs {fast} dense TFLOPS on "
                        f"{ctx.target.name})")
                if low:
                    src = origins[low[0]][4:]
                    message = (f"matmul operand {operand_text(graph, low[0])} is an fp32 tile filled from {src} data, "
                               f"so fp32 adds no precision: {cost}")
                    level = Level.WARNING
                else:
                    message = (f"matmul of fp32 operands {operand_text(graph, ops.stationary)} (stationary) and "
                               f"{operand_text(graph, ops.moving)} (moving): {cost}")
                    level = Level.NOTE
                reporter.at_site(
                    data.get("site"),
                    message,
                    level=level,
                    hint="cast the operands to bf16 (allocate the SBUF tiles as nl.bfloat16 or tensor_copy them) "
                         "unless fp32 precision is required",
                    kernel=kernel.name,
                )


LOW_PRECISION = ("bfloat16", "float16", "float8_e4m3", "float8_e4m3fn", "float8_e5m2")


CONSTANT_WRITERS = ("memset", "iota", "affine_select", "shared_identity_matrix")


INTEGER_WRITERS = ("nc_n_gather", "local_gather", "nc_find_index8", "max8", "sequence_bounds", "nonzero_with_count")


def _precision_origin(graph, tensor_id: str, depth: int = 0) -> str:
    """Where an fp32 operand's values come from: ``constant`` (memset, iota,
    ones), ``integer`` (indices), ``low:<dtype>`` (a lower-precision float
    tensor copied or DMA'd in), or ``computed``/``unknown``."""
    data = graph.attrs(tensor_id)
    api = (data.get("api") or "").rsplit(".", 1)[-1]
    if data.get("origin") == "alloc" and api in ("ones", "zeros", "full", "shared_identity_matrix"):
        return "constant"
    writers = graph.ops_writing(tensor_id)
    if not writers:
        return "unknown"
    kinds = set()
    for w in writers:
        wd = graph.attrs(w)
        short = (wd.get("api") or "").rsplit(".", 1)[-1]
        if short in CONSTANT_WRITERS:
            kinds.add("constant")
            continue
        if short in INTEGER_WRITERS:
            kinds.add("integer")
            continue
        sources = [n for n, e in graph.reads(w) if e.get("param") in ("src", "data", "value", "x")]
        if short in ("dma_copy", "load", "tensor_copy", "copy") and sources:
            src_dtype = dma.side(graph, sources[0]).dtype
            if src_dtype in LOW_PRECISION:
                kinds.add("low:" + src_dtype)
            elif src_dtype and ("int" in src_dtype or src_dtype == "bool_"):
                kinds.add("integer")
            elif depth < 3 and short in ("tensor_copy", "copy"):
                kinds.add(_precision_origin(graph, graph.base_tensor(sources[0]), depth + 1))
            else:
                kinds.add("unknown")
            continue
        kinds.add("computed")
    for pick in ("integer", "constant"):
        if kinds == {pick}:
            return pick
    low = sorted(k for k in kinds if k.startswith("low:"))
    if low and kinds <= set(low):
        return low[0]
    if "integer" in kinds:
        return "integer"
    return "computed" if "computed" in kinds else "unknown"
