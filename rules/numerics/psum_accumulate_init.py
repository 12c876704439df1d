"""NKI508 psum-accumulate-init."""

from __future__ import annotations

from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.model.graph import KernelGraph
from nkilint.rule import invalid, valid

from ._spots import MATMUL_DOC, NumericsRule, Spot, tile_name


class PsumAccumulateInit(NumericsRule):
    id = "NKI508"
    name = "psum-accumulate-init"
    family = "numerics"
    level = Level.WARNING
    summary = "nc_matmul(accumulate=True) onto a value-initialised (zeros/memset) or uninitialised PSUM tile"
    fix_hint = "allocate PSUM with nl.ndarray and pass accumulate=(k > 0), or omit accumulate"
    explanation = """
The Triton/CUDA `acc = zeros(); for k: acc += dot(a, b)` idiom ported
literally to current NKI: a PSUM tile initialised by `nl.zeros` /
`nisa.memset` / `tensor_copy` and then the `dst` of
`nisa.nc_matmul(..., accumulate=True)` (on trn1/trn2), or
`accumulate=True` on the first matmul that writes a PSUM tile (all
targets). Legacy code (`psum += nl.matmul(...)` into `nl.zeros(psum)`) is
the documented legacy idiom and is not reported.

**Why on Trainium:** The `nc_matmul` documentation: "Using
`accumulate=True` on an uninitialized PSUM location is undefined behavior
on all targets", and "On NeuronCore-v2 and NeuronCore-v3, matmul
accumulating into a PSUM location that was value-initialized by a
non-matmul instruction (e.g., memset, tensor_copy) is not supported and is
undefined behavior on hardware." The simulator may still pass.

**Fix:** `acc = nl.ndarray(..., buffer=nl.psum)` (no initialisation) and
`nisa.nc_matmul(dst=acc, ..., accumulate=(k > 0))`, or omit `accumulate`
and let the compiler make the first write overwrite.
"""
    references = (MATMUL_DOC,)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.memset(dst=acc, value=0.0)
                for k in range(4):
                    ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=aT[k * 128:(k + 1) * 128, 0:128])
                    nisa.dma_copy(dst=tb, src=b[k * 128:(k + 1) * 128, 0:512])
                    nisa.nc_matmul(dst=acc, stationary=ta, moving=tb, accumulate=True)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[15],
            title="current API on trn2: memset then accumulate=True",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=ta, src=aT[0:128, 0:128])
                nisa.dma_copy(dst=tb, src=b[0:128, 0:512])
                nisa.nc_matmul(dst=acc, stationary=ta, moving=tb, accumulate=True)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            lines=[13],
            title="current API: accumulate=True on the first write (trn3 too)",
            target="trn3",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_kernel(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in range(4):
                    ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=aT[k * 128:(k + 1) * 128, 0:128])
                    nisa.dma_copy(dst=tb, src=b[k * 128:(k + 1) * 128, 0:512])
                    nisa.nc_matmul(dst=acc, stationary=ta, moving=tb, accumulate=(k > 0))
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="uninitialised PSUM, first matmul overwrites",
        ),
    )

    def spots(self, ctx: RuleContext):
        return psum_accumulate_init(ctx)


def psum_accumulate_init(ctx: RuleContext) -> Iterator[Spot]:
    if ctx.model.legacy:
        return
    v4 = ctx.target.name == "trn3"
    for kernel, graph in ctx.model.graphs():
        for op, data in graph.ops():
            if df.short(data.get("api")) not in ("nc_matmul", "nc_matmul_mx"):
                continue
            if df.const_param(data, "accumulate") is not True:
                continue
            dst = next((n for p, n in df.writes(graph, op) if p == "dst"), None)
            if dst is None:
                continue
            base = df.base(graph, dst)
            bdata = graph.attrs(base)
            if bdata.get("buffer") != "psum":
                continue
            where = graph.attrs(dst).get("index") if dst != base else None
            earlier = [w for w in df.writers(graph, base) if df.op_order(w) < df.op_order(op)
                       and _same_location(graph, w, base, where)]
            matmul_before = [w for w in earlier if df.short(graph.attrs(w).get("api")) in ("nc_matmul", "nc_matmul_mx")]
            value_init = [w for w in earlier if w not in matmul_before]
            zeros_alloc = df.short(bdata.get("api")) in ("zeros", "full", "ones", "zeros_like", "ones_like", "full_like")
            name = tile_name(graph, base)
            if (value_init or zeros_alloc) and not v4:
                how = (f"{df.short(graph.attrs(value_init[0]).get('api'))} ({ctx.model.line_ref(graph.attrs(value_init[0]).get('site'))})"
                       if value_init else f"nl.{df.short(bdata.get('api'))}")
                yield Spot(data.get("site"), (
                    f"nc_matmul(accumulate=True) adds onto PSUM tile {name}, which was initialised by {how}: on "
                    f"NeuronCore-v2/v3 ({ctx.target.name}) accumulating onto a value-initialised PSUM location is "
                    f"undefined behaviour (the Triton 'acc = zeros(); acc += dot()' idiom does not carry over); allocate "
                    f"with nl.ndarray and pass accumulate=(k > 0), or omit it"
                ), kernel=kernel.name)
            elif not earlier and not zeros_alloc:
                yield Spot(data.get("site"), (
                    f"nc_matmul(accumulate=True) is the first write to PSUM tile {name}: accumulating onto an "
                    f"uninitialised PSUM location is undefined behaviour on all targets; let the first matmul overwrite "
                    f"(accumulate=(k > 0), or omit accumulate)"
                ), kernel=kernel.name)


def _same_location(graph: KernelGraph, writer: str, base: str, where: str | None) -> bool:
    """The writer writes the whole tensor, or the same view text as the matmul
    (a write to another region of a shared PSUM tile is another location)."""
    for _, node in df.writes(graph, writer):
        if df.base(graph, node) != base:
            continue
        if node == base or where is None or graph.attrs(node).get("index") == where:
            return True
    return False
