"""NKI302 fixed-address-in-loop: an explicitly placed tile at the same address in every iteration."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import nest_of
from nkilint.rule import Rule, invalid, valid

from . import _buffers as buffers
from . import _dma as dma
from . import _serial as serial
from ._report import OncePerSite


class FixedAddressInLoop(Rule):
    id = "NKI302"
    name = "fixed-address-in-loop"
    family = "pipeline"
    level = Level.WARNING
    summary = "An explicitly placed tile gets the same address in every loop iteration (a single buffer)"
    explanation = """
The rule fires when the address (or the mod_alloc tile count of one) is
the same in every iteration and the tile is used as a pipeline stage in the
iteration: written first, then read by another engine (DMA, TensorE,
VectorE/ScalarE/GpSimd).

**Why on Trainium:** An explicit placement pins a tensor to one physical
location. When a tensor allocated inside a loop has an `address=` that does not
change with the loop (for example `address=(0, 0)`), every iteration uses the
*same* memory, even though it is a fresh tensor: iteration *i+1*'s producer (a
DMA load, a matmul into PSUM) must wait for iteration *i*'s consumer, and the
loop runs serialized. For PSUM this means TensorE waits for every eviction.
Legacy direct allocation has the same trap: `ncc.sbuf.mod_alloc(base_addr=...)`
without `num_free_tiles` allocates one physical tile, and the direct allocation
guide's first best practice shows exactly this loop "will be serialized because
t has only one tile alive". (The guide's remedy, a block dimension with
`num_free_tiles`, is a compile error since Neuron 2.25, when block dimensions
were removed.)

**Fix:** rotate the address with the loop index, e.g.
`address=(0, (i % 2) * size)` for two buffers (PSUM: one 2 KiB bank per
buffer, at most 8 banks), and make sure the copies still fit. Or drop the
explicit placement and let the compiler allocate (`buffer=nl.sbuf`), which
is the way in legacy code.
"""
    references = (
        "aws-neuron-sdk general/nki/nki_direct_allocation_guide.rst @0521004c (best practice #1, mod_alloc)",
        "aws-neuron-sdk nki/library/kernel-utils/allocator.rst (interleave_degree: multi-buffering)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def project(xT, w):
                out = nl.ndarray((512, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                w_sb = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=w_sb, src=w[0:128, 0:512])
                for m in range(4):
                    x_sb = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=x_sb, src=xT[0:128, m * 128:(m + 1) * 128])
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum, address=(0, 0))
                    nisa.nc_matmul(dst=ps, stationary=x_sb, moving=w_sb)
                    o = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=o, src=ps)
                    nisa.dma_copy(dst=out[m * 128:(m + 1) * 128, 0:512], src=o)
                return out
            """,
            lines=[13],
            title="current API: every matmul lands in PSUM bank 0",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.compiler as ncc

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((8, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(8):
                    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
                    t[...] = nl.load(x[i])
                    nl.store(out[i], value=nl.exp(t))
                return out
            """,
            lines=[9],
            title="legacy API: mod_alloc with one physical tile",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def project(xT, w):
                out = nl.ndarray((512, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                w_sb = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=w_sb, src=w[0:128, 0:512])
                for m in range(4):
                    x_sb = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=x_sb, src=xT[0:128, m * 128:(m + 1) * 128])
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum, address=(0, (m % 2) * 2048))
                    nisa.nc_matmul(dst=ps, stationary=x_sb, moving=w_sb)
                    o = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=o, src=ps)
                    nisa.dma_copy(dst=out[m * 128:(m + 1) * 128, 0:512], src=o)
                return out
            """,
            title="two PSUM banks in rotation",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((8, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(8):
                    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    t[...] = nl.load(x[i])
                    nl.store(out[i], value=nl.exp(t))
                return out
            """,
            title="legacy API: automatic allocation",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = nest_of(graph)
            acc = buffers.Accesses(graph)
            for tensor_id, data in graph.tensors():
                address = data.get("address")
                if address is None or data.get("buffer") not in ("sbuf", "psum"):
                    continue
                copies = buffers.placement_copies(address)
                for loop in lf.enclosing_ids(data.get("loops", ())):
                    if not loop.may_repeat():
                        continue
                    if copies is None and not buffers.fixed_address(address, lf, loop):
                        break
                    if copies is not None and (copies != 1 or (data.get("partition_axis") or 0) > 0):
                        break
                    stage = buffers.pipeline_stage(graph, lf, acc, tensor_id, loop)
                    if stage is None:
                        break
                    if stage[0] not in dma.COPY_SHORT and serial.independent_iterations(
                            model, graph, lf, loop, syntax=False) is not None:
                        break  # iterations depend on each other anyway (a layer loop): no overlap lost
                    self._report(ctx, reporter, kernel, graph, tensor_id, loop, address, stage)
                    break

    @staticmethod
    def _report(ctx, reporter, kernel, graph, tensor_id, loop, address, stage) -> None:
        data = graph.attrs(tensor_id)
        name = data.get("name") or "tile"
        buffer = (data.get("buffer") or "").upper()
        writer, reader = stage
        copies = buffers.placement_copies(address)
        if copies is not None:
            placed = "mod_alloc with a single physical tile"
            hint = f"use automatic allocation (buffer=nl.sbuf) for {name} so consecutive iterations get their own tiles"
        else:
            placed = f"a fixed address {_address_text(address)}"
            size = data.get("bytes_v")
            step = dma.exact(size)
            if data.get("buffer") == "psum":
                step = 2048 if step is None else max(2048, -(-step // 2048) * 2048)
            rot = f"(i % 2) * {step}" if step else "(i % 2) * <tile bytes>"
            hint = (f"rotate the address with the loop index, e.g. address=(0, {rot}) for two buffers, and check "
                    f"that the copies fit (PSUM: 8 banks of 2 KiB); or let the compiler allocate it")
        reporter.at_site(
            data.get("site"),
            f"{buffer} tensor {name} has {placed} in every iteration of `{loop.header()}`: one physical buffer, so "
            f"iteration i+1's {writer} waits until iteration i's {reader} has read it and the loop runs serialized",
            hint=hint,
            kernel=kernel.name,
        )


def _address_text(address) -> str:
    label = getattr(address, "label", None)
    if label:
        return label
    items = getattr(address, "items", None)
    if items is not None:
        return "(" + ", ".join(str(dma.exact(x)) if dma.exact(x) is not None else "?" for x in items) + ")"
    return "address"
