"""NKI308 dma-transpose-without-tensor-engine: transposes done by the DMA engines in a hot loop."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import nest_of
from nkilint.rule import Rule, invalid, valid

from . import _dma as dma
from ._report import OncePerSite
from ._reuse import repeating_loop


class DmaTransposeMemoryBound(Rule):
    id = "NKI308"
    name = "dma-transpose-without-tensor-engine"
    family = "pipeline"
    level = Level.NOTE
    summary = "A kernel with an idle TensorE transposes through DMA in a loop"
    explanation = """
The rule reports DMA transposes that repeat in a loop in kernels that do no
TensorE work at all (no matmul or TensorE transpose): there the kernel is
bound by data movement and the transpose can move to the idle engine. DMA
transposes next to matmuls are left alone: the NKI library uses them on
purpose in kernels where VectorE/ScalarE or TensorE are the bottleneck.

**Why on Trainium:** DMA transposes (`nisa.dma_transpose`, legacy
`nl.load_transpose2d`) run below copy bandwidth: on Trainium2 an HBM-to-SBUF
transpose reaches up to 90 % and an SBUF-to-SBUF transpose up to 50 % of DMA
throughput (trn2 architecture guide); the perf guide (Opt #10) says
`load_transpose2d` has "much lower DMA bandwidth" and "should certainly be
avoided in memory-bound kernels", and recommends `dma_copy` plus a TensorE
transpose "especially ... when TensorE is otherwise idle".

**Fix:** load `[128, 128]` blocks with a plain `dma_copy` and transpose each
with `nisa.nc_transpose` on TensorE (PSUM, then copy to SBUF), as in the
perf guide's Option 2.
"""
    references = (
        "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst (Opt #10: minimize use of DMA transposes)",
        "aws-neuron-sdk nki/guides/architecture/trainium2_arch.rst (DMA Transpose performance)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def transpose_exp(x):
                out = nl.ndarray((128, 4096), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                for i in range(8):
                    t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_transpose(dst=t, src=x[i * 512:(i + 1) * 512, 0:128])
                    nisa.activation(dst=t, op=nl.exp, data=t)
                    nisa.dma_copy(dst=out[0:128, i * 512:(i + 1) * 512], src=t)
                return out
            """,
            lines=[10],
            title="current API: memory-bound, TensorE idle",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def transpose_exp(x):
                out = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(32):
                    t = nl.load_transpose2d(x[i * 128:(i + 1) * 128, 0:128])
                    nl.store(out[0:128, i * 128:(i + 1) * 128], value=nl.exp(t))
                return out
            """,
            lines=[8],
            title="legacy API: load_transpose2d",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def transpose_exp(x):
                out = nl.ndarray((128, 4096), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                for i in range(32):
                    t = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, 0:128])
                    tp = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.psum)
                    nisa.nc_transpose(dst=tp, data=t)
                    e = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.activation(dst=e, op=nl.exp, data=tp)
                    nisa.dma_copy(dst=out[0:128, i * 128:(i + 1) * 128], src=e)
                return out
            """,
            title="plain loads, transposed on TensorE",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            # Only a whole kernel shows that TensorE is idle: a helper analysed
            # on its own, or a graph cut short, may miss the matmuls.
            if kernel.kind != "root" or kernel.error or graph.truncated:
                continue
            if any(_uses_tensor_engine(d) for _, d in graph.ops()):
                continue
            lf = nest_of(graph)
            for t in dma.transfers(graph):
                if t.kind != "transpose":
                    continue
                loop = repeating_loop(model, graph, lf, t.op_id)
                if loop is None:
                    continue
                src = t.src
                onchip_src = src is not None and src.buffer in dma.ON_CHIP
                share = "50 %" if onchip_src else "90 %"
                where = "SBUF-to-SBUF" if onchip_src else "HBM-to-SBUF"
                short = (graph.attrs(t.op_id).get("api") or "").rsplit(".", 1)[-1]
                reporter.at_site(
                    graph.attrs(t.op_id).get("site"),
                    f"{short} in every iteration of `{loop.header()}` in a kernel without TensorE work: an {where} DMA "
                    f"transpose runs at up to {share} of DMA copy throughput on trn2 (est.), while TensorE could "
                    f"transpose for free",
                    hint="load [128, 128] blocks with dma_copy and transpose them with nisa.nc_transpose on TensorE",
                    kernel=kernel.name,
                )


def _uses_tensor_engine(data: dict) -> bool:
    api = data.get("api") or ""
    if api in ("nki.isa.nc_matmul", "nki.isa.nc_matmul_mx", "nki.language.matmul", "nki.language.transpose"):
        return True
    return api == "nki.isa.nc_transpose" and data.get("engine") in ("tensor", "any")
