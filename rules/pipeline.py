"""Pipeline family (NKI3xx): missing double-buffering and legal-but-slow patterns.

Every finding of this family is a warning or a note: the kernels compile,
they only leave performance on the table. Facts: ../shared/NKI-REFERENCE.md
sections 2.4, 2.6, 2.8 and 3.D/3.F/3.H, checked against aws-neuron-sdk
nki/deep-dives/nki_perf_guide.rst, nki/deep-dives/nki-dma-bandwidth-guide.rst,
nki/get-started/about/nki-dma-overview.rst, nki/migration/index.rst (block
dimensions), nki/deep-dives/nki-dynamic-loops.rst and the architecture
guides. Loop facts (which values change between iterations) come from
``_pipeline_loops``; DMA operands and sizes from ``_pipeline_dma``.
"""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.values import TupleV, int_binop, int_bounds
from nkilint.rule import Rule, invalid, valid
from nkilint.versions import V0_3

from . import _pipeline_buffers as buffers
from . import _pipeline_dma as dma
from . import _pipeline_serial as serial
from ._common import Reporter
from ._pipeline_loops import INV, NON_LOOPS, facts, runs_every_iteration, syms_of
from ._pipeline_ops import (
    dtype_of, is_compute, matmul_operands, onchip_free, slice_step_over_one, steps, walks,
)
from ._pipeline_text import line_of, loop_words, operand_text


class _OncePerSite(Reporter):
    """One finding per reported place: a helper analysed in several contexts
    (two kernels, or a kernel and on its own) may get different messages for
    the same line; the first (kernels are analysed in source order) wins."""

    def __init__(self, ctx: RuleContext) -> None:
        super().__init__(ctx)
        self.places: set[int] = set()

    def at_site(self, site, message: str, **kwargs) -> bool:
        node = self.ctx.model.report_node(site)
        if node is None or id(node) in self.places:
            return False
        if super().at_site(site, message, **kwargs):
            self.places.add(id(node))
            return True
        return False


def _old_loop_semantics(ctx: RuleContext) -> bool:
    """Legacy NKI and NKI 0.2 keep affine_range/sequential_range loops rolled
    (0.3 and later unroll every static loop)."""
    return ctx.model.legacy or ctx.nki_version < V0_3


def _exposed_ns(t: dma.Transfer, ctx: RuleContext) -> str:
    """Time the transfer takes at the target's peak DMA bandwidth (an estimate)."""
    moved = _total_bytes(t)
    rate = dma.DMA_BYTES_PER_NS.get(ctx.target.generation)
    if moved is None or rate is None:
        return ""
    ns = moved / rate
    return (f"; est. {dma.fmt_bytes(moved)} per iteration, about {ns:,.0f} ns at the {ctx.target.name} DMA peak "
            f"of {rate} GB/s (plus ~{dma.FIXED_COST_NS} ns fixed cost) that compute waits for instead of overlapping")


class MissingDoubleBuffering(Rule):
    id = "NKI301"
    name = "missing-double-buffering"
    family = "pipeline"
    level = Level.WARNING
    summary = "A loop refills (or drains) one SBUF buffer by DMA every iteration, so DMA cannot overlap compute"
    explanation = """
Overlap between DMA and the compute engines comes from having several
buffers in flight: while compute reads tile *i*, a DMA fills tile *i+1*.
Dependencies follow *storage*. A tile allocated once **outside** a loop and
rewritten by a DMA in every iteration is a single buffer: the load of
iteration *i+1* must wait until every instruction of iteration *i* has read
it (write-after-read), so load and compute take turns instead of running in
parallel. The same holds for stores: a tile that compute rewrites every
iteration and a DMA then writes to HBM makes the next iteration's compute
wait for the store.

What the compiler does instead, and when this rule stays quiet:

* **Current NKI (0.3+)**: every static loop is unrolled; a tile allocated
  *inside* the loop is a new tensor per iteration and the backend's address
  rotation (always on) gives consecutive iterations different buffers. The
  migration guide's `sb_blocks_migrated_incorrect` example (one buffer
  allocated above the loop) "will be serialized".
* **Legacy NKI / 0.2**: a tile allocated inside the loop is a new logical
  tile per iteration that the allocator maps to several physical tiles
  (double buffering; the direct allocation guide walks through it). A single
  buffer rewritten in every `affine_range` iteration is a frontend error
  (`err_unexpected_output_dependencies`, reported by the semantics family),
  so this rule covers legacy `sequential_range` and Python `range` loops.
* **Dynamic loops** (`nl.fori_loop`, `dynamic_range`, `while`): the body is
  emitted once, so even tiles allocated inside it are allocated once and
  reused (dynamic loops guide); the rule reports those too.

It only fires when the buffer's first access in each iteration is that
write (so it is not loop-carried state such as a running sum), the write
covers the same region every iteration, it runs unconditionally, and the
buffer is not used after the loop. Explicit placements are NKI302.

**Fix:** allocate the tile inside the loop body (one tile per iteration;
the compiler rotates buffers), or give it an extra free dimension indexed
by the loop variable (`buf[:, i, :]`). In a dynamic loop, software-pipeline
by hand: keep two buffers and load tile *i+1* into one while computing on
the other.
"""
    references = (
        "aws-neuron-sdk nki/migration/index.rst (Removing block dimensions: sb_blocks_migrated_incorrect is serialized)",
        "aws-neuron-sdk general/nki/nki_direct_allocation_guide.rst @0521004c (double buffering of logical tiles)",
        "aws-neuron-sdk nki/deep-dives/nki-dynamic-loops.rst (Register Allocation Implications)",
        "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst (Opt #4: overlap data loading with computation)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                buf = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                res = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                for i in range(8):
                    nisa.dma_copy(dst=buf, src=x[i * 128:(i + 1) * 128, 0:512])
                    nisa.activation(dst=res, op=nl.exp, data=buf)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=res)
                return out
            """,
            lines=[11, 13],
            title="current API: one input and one output buffer for every iteration",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_rows(x):
                n_tiles, rows, cols = x.shape
                out = nl.ndarray((8, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                buf = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.sequential_range(8):
                    buf[...] = nl.load(x[i])
                    nl.store(out[i], value=nl.exp(buf))
                return out
            """,
            lines=[10],
            title="legacy API: sequential_range over one SBUF buffer",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_rows(x, n_tiles):
                out = nl.ndarray((4096, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)

                def body(i):
                    buf = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=buf, src=x.ap([[512, 128], [1, 512]], scalar_offset=i, indirect_dim=0))
                    nisa.activation(dst=buf, op=nl.exp, data=buf)
                    nisa.dma_copy(dst=out.ap([[512, 128], [1, 512]], scalar_offset=i, indirect_dim=0), src=buf)

                nl.fori_loop(0, n_tiles, body)
                return out
            """,
            lines=[11],
            title="dynamic loop: a body tile is allocated once for all trips",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                for i in range(8):
                    buf = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    res = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=buf, src=x[i * 128:(i + 1) * 128, 0:512])
                    nisa.activation(dst=res, op=nl.exp, data=buf)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=res)
                return out
            """,
            title="tiles allocated per iteration",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for i in range(8):
                    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[0:128, i * 512:(i + 1) * 512])
                    part = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_reduce(dst=part, op=nl.add, data=t, axis=1)
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=part, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            title="loop-carried accumulator: read before it is written in each iteration",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.shared_hbm)
                buf = nl.ndarray((128, 8, 512), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.sequential_range(8):
                    buf[:, i, :] = nl.load(x[0:128, i * 512:(i + 1) * 512])
                    nl.store(out[0:128, i * 512:(i + 1) * 512], value=nl.exp(buf[:, i, :]))
                return out
            """,
            title="legacy API: each iteration uses its own slot of a free dimension",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = _OncePerSite(ctx)
        old = _old_loop_semantics(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = facts(graph)
            acc = buffers.Accesses(graph)
            for tensor_id, data in graph.tensors():
                if data.get("buffer") != "sbuf" or data.get("origin") not in ("alloc", "result"):
                    continue
                if data.get("address") is not None:
                    continue  # explicit placement: NKI302
                found = self._find(model, graph, lf, acc, tensor_id, old)
                if found is None:
                    continue
                self._report(ctx, reporter, kernel, graph, found, old)

    @staticmethod
    def _find(model, graph, lf, acc, tensor_id: str, old: bool):
        data = graph.attrs(tensor_id)
        own = set(data.get("loops", ()))
        candidates: dict[str, int] = {}
        for op, _ in acc.touching(tensor_id):
            for depth, lid in enumerate(graph.attrs(op).get("loops", ())):
                candidates[lid] = depth
        for lid in sorted(candidates, key=lambda x: -candidates[x]):
            loop = lf.loops.get(lid)
            if loop is None or loop.kind == "comprehension" or not loop.may_repeat():
                continue
            inside = lid in own
            if inside and not loop.dynamic:
                continue
            if inside and any(lf.loops[x].may_repeat() for x in data.get("loops", ())[
                    data.get("loops", ()).index(lid) + 1:] if x in lf.loops):
                continue  # an unrolled loop inside the dynamic body already gives several tiles per trip
            if old and loop.kind == "affine_range" and not inside:
                continue  # a frontend error in legacy/0.2 (semantics family)
            found = buffers.single_buffer_use(model, graph, lf, acc, tensor_id, loop, allow_inside=inside)
            if found is not None and inside and found.pattern == "load" and found.transfer.src is not None:
                # A dynamic body that loads the same tensor into several
                # buffers per trip is pipelined by hand (two tiles per trip).
                source = found.transfer.src.base_id
                loads = [t for t in acc.transfers if t.direction == "load" and t.src is not None
                         and t.src.base_id == source and lf.inside(t.op_id, lid)]
                if len(loads) > 1:
                    continue
            if found is not None:
                if _stall_hidden(graph, lf, acc, found):
                    return None
                return found
        return None

    @staticmethod
    def _report(ctx, reporter, kernel, graph, found, old: bool) -> None:
        data = graph.attrs(found.tensor_id)
        name = data.get("name") or "tile"
        loop = found.loop
        line = line_of(data)
        where = f"allocated at line {line}" if line else "allocated once"
        if loop.loop_id in data.get("loops", ()):
            where = "allocated in the loop body, which a dynamic loop allocates once for all trips"
        if found.pattern == "load":
            what = (f"SBUF tile {name} ({where}) is refilled by this DMA in every iteration of `{loop.header()}` "
                    f"while compute reads it: one buffer, so the load for iteration i+1 waits until iteration i "
                    f"has finished reading it")
        else:
            what = (f"SBUF tile {name} ({where}) is rewritten by compute in every iteration of `{loop.header()}` "
                    f"and stored by this DMA: one buffer, so iteration i+1's compute waits until iteration i's "
                    f"store has read it")
        if loop.dynamic:
            hint = (f"keep two buffers for {name} and alternate them (load tile i+1 into one while computing on "
                    f"the other); a dynamic loop body is emitted once, so allocating inside it is not enough")
        elif old:
            hint = (f"allocate {name} inside the loop (one logical tile per iteration); use nl.affine_range if the "
                    f"iterations are independent")
        else:
            hint = (f"allocate {name} inside the loop body so each iteration gets its own tile (the compiler "
                    f"rotates buffers), or use two buffers alternating between iterations")
        reporter.at_site(
            graph.attrs(found.dma_op).get("site"),
            what + _exposed_ns(found.transfer, ctx),
            hint=hint,
            kernel=kernel.name,
        )


# Ops after which no DMA of the next trip can start early: the trips of a
# loop that contains one cannot overlap whatever the buffering.
def _is_barrier(api: str) -> bool:
    return api.endswith("core_barrier") or api.startswith("nki.collectives.")


def _stall_hidden(graph, lf, acc, found) -> bool:
    """A single buffer that costs nothing: another iteration cannot start
    early anyway (a barrier ends each trip), the buffer waits across a whole
    inner sweep that does not touch it (the store or the reads of trip i
    finish while trip i+1 runs that sweep), or the tile is tiny next to the
    other transfers of the same iteration (a second buffer would not move
    the time)."""
    loop = found.loop
    ops = lf.ops_in(loop.loop_id)
    if any(_is_barrier(graph.attrs(op).get("api") or "") for op in ops):
        return True
    inside = set(ops)
    touching = [op for op, _ in acc.touching(found.tensor_id) if op in inside]
    if touching:
        first, last = graph.seq(touching[0]), graph.seq(touching[-1])
        for op in ops:
            if first <= graph.seq(op) <= last:
                continue  # the buffer is busy here: not part of the gap between two trips' uses
            chain = tuple(graph.attrs(op).get("loops", ()))
            nested = chain[chain.index(loop.loop_id) + 1:] if loop.loop_id in chain else ()
            if any(lid in lf.loops and lf.loops[lid].kind not in NON_LOOPS and lf.loops[lid].may_repeat()
                   for lid in nested):
                return True
    side = found.transfer.onchip
    per = dma.bytes_per_partition(side) if side is not None else None
    parts = dma.exact(dma.partitions(side)) if side is not None else None
    if per is None or parts is None:
        return False
    tile_bytes = per[1] * parts
    for t in acc.transfers:
        if t.op_id == found.dma_op or t.op_id not in inside or t.onchip is None:
            continue
        other = dma.bytes_per_partition(t.onchip)
        other_parts = dma.exact(dma.partitions(t.onchip))
        if other is not None and other_parts is not None and other[0] * other_parts >= 16 * tile_bytes:
            return True
    return False


class FixedAddressInLoop(Rule):
    id = "NKI302"
    name = "fixed-address-in-loop"
    family = "pipeline"
    level = Level.WARNING
    summary = "An explicitly placed tile gets the same address in every loop iteration (a single buffer)"
    explanation = """
An explicit placement pins a tensor to one physical location. When a
tensor allocated inside a loop has an `address=` that does not change with
the loop (for example `address=(0, 0)`), every iteration uses the *same*
memory, even though it is a fresh tensor: iteration *i+1*'s producer (a DMA
load, a matmul into PSUM) must wait for iteration *i*'s consumer, and the
loop runs serialized. For PSUM this means TensorE waits for every eviction.
Legacy direct allocation has the same trap: `ncc.sbuf.mod_alloc(base_addr=...)`
without `num_free_tiles` allocates one physical tile, and the direct
allocation guide's first best practice shows exactly this loop "will be
serialized because t has only one tile alive". (The guide's remedy, a block
dimension with `num_free_tiles`, is a compile error since Neuron 2.25, when
block dimensions were removed.)

The rule fires when the address (or the mod_alloc tile count of one) is
the same in every iteration and the tile is used as a pipeline stage in the
iteration: written first, then read by another engine (DMA, TensorE,
VectorE/ScalarE/GpSimd).

**Fix:** rotate the address with the loop index, e.g.
`address=(0, (i % 2) * size)` for two buffers (PSUM: one 2 KiB bank per
buffer, at most 8 banks), and make sure the copies still fit. Or drop the
explicit placement and let the compiler allocate (`buffer=nl.sbuf`), which
is the way in legacy code.
"""
    references = (
        "../shared/NKI-REFERENCE.md 3.H DB02 fixed-address-in-loop",
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
        reporter = _OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = facts(graph)
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


class LoopInvariantDma(Rule):
    id = "NKI303"
    name = "loop-invariant-dma"
    family = "pipeline"
    level = Level.WARNING
    summary = "A DMA inside a loop loads the same HBM data in every iteration"
    explanation = """
A load (`nisa.dma_copy`, legacy `nl.load`) inside a loop whose source slice
does not depend on the loop's index (nor on anything else that changes
between iterations) moves the same bytes from HBM every iteration. Each
repetition costs DMA bandwidth and a fixed ~1.3 us DMA overhead, and the
compute that waits for it stalls. The perf guide calls this *input data
reloading* (Opt #1, "Exploit temporal locality"); the matmul tutorial's
"Removing Redundant Loads" step is the textbook case.

The rule reports the outermost loop of the nest that the load does not
depend on, only when the load runs in every iteration (not under an `if`
that may depend on the iteration) and nothing in the loop writes the HBM
tensor it reads. It also sees the matmul tutorial's case, where an inner
loop walks a strip of blocks (`lhsT[k * 128:(k + 1) * 128, m_block]` in a
`k` loop) and an outer loop (`n`) repeats the whole strip: reported when the
strip fits in a quarter of the usable SBUF per partition (a warning), or as
a note when its size is unknown; larger re-read sets (a whole weight matrix)
are the normal price of tiling and stay quiet.

**Fix:** hoist the load above the loop and reuse the SBUF tile in every
iteration. Keeping it resident costs SBUF for the loop's duration; when SBUF
is tight the perf guide treats reloading as a deliberate trade-off, in which
case suppress the finding with `# noqa: NKI303`.
"""
    references = (
        "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst (Opt #1: minimize input data reloading)",
        "aws-neuron-sdk nki/guides/tutorials/matrix_multiplication.rst (Removing Redundant Loads)",
        "aws-neuron-sdk nki/deep-dives/nki-dma-bandwidth-guide.rst (~1300 ns fixed cost per DMA)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale_rows(x, w):
                out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                for i in range(8):
                    wt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=wt, src=w[0:128, 0:512])
                    xt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=xt, src=x[i * 128:(i + 1) * 128, 0:512])
                    nisa.tensor_tensor(dst=xt, data1=xt, data2=wt, op=nl.multiply)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=xt)
                return out
            """,
            lines=[10],
            title="current API: the weight tile is reloaded in every iteration",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def matmul(lhsT, rhs):
                out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
                for n in nl.affine_range(4):
                    lhs_tile = nl.load(lhsT[0:128, 0:128])
                    rhs_tile = nl.load(rhs[0:128, n * 512:(n + 1) * 512])
                    res = nl.matmul(lhs_tile, rhs_tile, transpose_x=True)
                    nl.store(out[0:128, n * 512:(n + 1) * 512], value=res)
                return out
            """,
            lines=[8],
            title="legacy API: the stationary tile is loaded once per output block",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale_rows(x, w):
                out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                wt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=wt, src=w[0:128, 0:512])
                for i in range(8):
                    xt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=xt, src=x[i * 128:(i + 1) * 128, 0:512])
                    nisa.tensor_tensor(dst=xt, data1=xt, data2=wt, op=nl.multiply)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=xt)
                return out
            """,
            title="hoisted: loaded once",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def first_row_special(x, bias):
                out = nl.ndarray((1024, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in range(8):
                    xt = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=xt, src=x[i * 128:(i + 1) * 128, 0:512])
                    if i == 0:
                        nisa.dma_copy(dst=xt, src=bias[0:128, 0:512])
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=xt)
                return out
            """,
            title="runs in one iteration only",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = _OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = facts(graph)
            for t in dma.transfers(graph):
                if t.direction != "load":
                    continue
                chosen = _reload_loop(ctx, graph, lf, t)
                if chosen is None:
                    continue
                self._report(ctx, reporter, kernel, graph, lf, t, *chosen)

    @staticmethod
    def _report(ctx, reporter, kernel, graph, lf, t, loop, fixed, level) -> None:
        src = t.hbm
        moved = _total_bytes(t)
        used = _mentioned_syms(graph, src.node_id) & fixed
        nest = [lp for lp in lf.enclosing(t.op_id) if lp.may_repeat()]
        nest = nest[:nest.index(loop) + 1] if loop in nest else [loop]
        varying = [lp for lp in nest if lp.sym in used]
        runs = _product(lp.trip for lp in nest)
        distinct = _product(lp.trip for lp in varying)
        estimate = ""
        if runs is not None and distinct is not None:
            extra = runs - distinct
            if moved is not None:
                estimate = (f"; est. {dma.fmt_bytes(moved * extra)} of redundant HBM reads ({extra} extra DMAs of "
                            f"{dma.fmt_bytes(moved)})")
            else:
                estimate = f"; est. {extra} extra DMAs"
        elif moved is not None:
            estimate = f"; est. {dma.fmt_bytes(moved)} of redundant HBM reads per repeated DMA"
        text = operand_text(graph, src.node_id)
        loops_text = " / ".join(f"`{lp.header()}`" for lp in reversed(nest))
        if not varying:
            message = (f"{text} is loaded again in every iteration of {loops_text}: the source does not depend on "
                       f"the loop{'s' if len(nest) > 1 else ''}{estimate}")
            hint = f"load it once before `{loop.header()}` and reuse the tile (perf guide Opt #1)"
        else:
            names = ", ".join(f"`{lp.header()}`" for lp in reversed(varying))
            side = t.onchip
            per = dma.bytes_per_partition(side) if side is not None else None
            cost = ""
            if per is not None and per[2] and distinct is not None:
                cost = f" (about {dma.fmt_bytes(per[1] * distinct)} per partition)"
            message = (f"the loads of {text} in {names} read the same blocks in every iteration of "
                       f"`{loop.header()}` ({loop_words(loop.trip_text())}): the source does not depend on that "
                       f"loop{estimate}")
            hint = (f"load those blocks once, before `{loop.header()}`, and keep them in SBUF{cost} "
                    f"(perf guide Opt #1; matmul tutorial)")
        reporter.at_site(graph.attrs(t.op_id).get("site"), message, hint=hint, level=level, kernel=kernel.name)


def _reload_loop(ctx: RuleContext, graph, lf, t: dma.Transfer):
    """(loop, inner indices, level) of the outermost loop whose iterations
    load the same HBM data again with this transfer, or None."""
    model = ctx.model
    src = t.hbm
    site = graph.attrs(t.op_id).get("site")
    chosen = None
    for loop in lf.enclosing(t.op_id):
        if not loop.may_repeat():
            continue
        fixed = lf.inner_indices(t.op_id, loop)
        if fixed is None:
            break
        if any(lf.inside(w, loop.loop_id) for w in graph.ops_writing(src.base_id)):
            break
        if not runs_every_iteration(model, site, loop):
            break
        dep = lf.access_dependence(src.node_id, loop, fixed)
        if dep == "variant":
            continue  # an outer loop may still repeat this whole nest
        if dep != INV:
            break
        level = Level.WARNING
        if fixed:
            fits = _cache_fits(ctx, lf, t, fixed, _mentioned_syms(graph, src.node_id))
            if fits is False:
                break  # keeping the nest's blocks resident would not fit comfortably
            if fits is None:
                level = Level.NOTE  # one strip of blocks of unknown size: worth a look
        chosen = (loop, fixed, level)
    return chosen


def _product(values) -> int | None:
    total = 1
    for v in values:
        n = dma.exact(v)
        if n is None:
            return None
        total *= n
    return total


def _mentioned_syms(graph, node_id: str) -> set:
    """Symbols the index items / access pattern of a view chain mention."""
    out: set = set()
    for _ in range(32):
        data = graph.attrs(node_id)
        if data.get("kind") != "view":
            break
        syms_of(data.get("index_v"), out)
        syms_of(list((data.get("ap_v") or {}).values()), out)
        nxt = [v for _, v, d in graph.g.out_edges(node_id, data=True) if d.get("kind") == "view_of"]
        if not nxt:
            break
        node_id = nxt[0]
    return out


def _cache_fits(ctx: RuleContext, lf, t: dma.Transfer, fixed, mentioned: set) -> bool | None:
    """Whether the blocks an inner loop nest loads fit in a quarter of the
    usable SBUF per partition (keeping them resident is then a realistic
    fix). None when their size is unknown but they form a single strip
    (one inner loop moves the source); False otherwise."""
    varying = [lp for lp in lf.enclosing(t.op_id) if lp.sym in fixed and lp.sym in mentioned]
    side = t.onchip
    per = dma.bytes_per_partition(side) if side is not None else None
    trips = _product(lp.trip for lp in varying)
    if per is None or not per[2] or trips is None:
        return None if len(varying) == 1 else False
    return per[1] * trips <= ctx.target.sbuf_usable_bytes_per_partition // 4


def _total_bytes(t: dma.Transfer) -> float | None:
    """Bytes one execution of the transfer moves, if known exactly."""
    side = t.onchip
    if side is None:
        return None
    per = dma.bytes_per_partition(side)
    parts = dma.exact(dma.partitions(side))
    if per is None or parts is None or per[0] != per[1] or not per[2]:
        return None
    return per[0] * parts


def _repeating_loop(model, graph, lf, op_id: str):
    """The innermost loop around an op that may run more than once, if the
    op runs in every iteration of it."""
    site = graph.attrs(op_id).get("site")
    for loop in lf.enclosing(op_id):
        if not loop.may_repeat():
            continue
        return loop if runs_every_iteration(model, site, loop) else None
    return None


# A DMA moving at most this much per partition carries one value per
# partition (an index, a target, a scale), not a tile's data.
METADATA_BYTES = 8


def _largest_transfer_in(graph, lf, loop, transfers, exclude: str) -> float | None:
    """The most bytes another DMA inside ``loop`` (nested loops included,
    gathers and HBM-to-HBM copies too) may move: a chunk sized by a
    parameter counts as large when the code allows it to be; a DMA that is
    small per partition itself does not count."""
    inside = set(lf.ops_in(loop.loop_id))
    best = None
    for other in transfers:
        if other.op_id == exclude or other.op_id not in inside:
            continue
        side = other.onchip
        per = dma.bytes_per_partition(side) if side is not None else None
        if per is not None and per[1] < dma.MIN_BYTES:
            continue  # itself a small DMA: it does not hide this one
        total = dma.total_bytes_upper(graph, other)
        if total is not None and (best is None or total > best):
            best = total
    return best


def _indirect(graph, node_id: str) -> bool:
    """A gather/scatter access (an index tensor or vector offset)."""
    for _ in range(16):
        data = graph.attrs(node_id)
        if data.get("kind") != "view":
            return False
        values = list(data.get("index_v") or []) + list((data.get("ap_v") or {}).values())
        if any(isinstance(v, dma.TensorV) for v in values):
            return True
        nxt = [v for _, v, d in graph.g.out_edges(node_id, data=True) if d.get("kind") == "view_of"]
        if not nxt:
            return False
        node_id = nxt[0]
    return False


class SmallDma(Rule):
    id = "NKI305"
    name = "small-dma"
    family = "pipeline"
    level = Level.WARNING
    summary = "A DMA in a loop moves less than 2 KiB per partition (under 256 B: severely overhead-bound)"
    explanation = """
Every DMA pays a fixed cost (descriptor generation, cross-engine
semaphores: about 1.3 us) and each of the 16 DMA engines moves data in
per-partition chunks. The DMA bandwidth guide gives the curve: below 256 B
per partition a transfer is *severely overhead-bound* (a small fraction of
peak bandwidth), 256 B–2 KiB is still below peak, 2 KiB per partition
(512 fp32, 1024 bf16, 2048 fp8 elements) is the recommended minimum and
4 KiB saturates the engines. The perf guide (Opt #9) asks to maximize both
the partition and the free size of every transfer.

The rule looks at DMAs between HBM and SBUF that repeat in a loop, where the
fixed cost adds up; a one-off small load outside loops is not reported.
Below 256 B per partition the finding is a warning, from 256 B to 2 KiB a
note. When the element type is unknown the size is bounded with 4-byte
elements. Gathers and scatters (index tensors) are left out: their row size
is the data's. Loads that NKI303 reports (the same data every iteration) are
left to it: hoisting them is the fix. A DMA of one value per partition (at
most 8 B: an index, a target, a scale) next to a transfer of the same
iteration that moves at least 16 times as much in all (and at least
2 KiB) is only a note: the large transfers
dominate the iteration, and the small one is usually inherent to the
algorithm (it feeds an indirect DMA or scales the tile).

**Fix:** coalesce: move the data of several iterations with one DMA (a
larger free dimension, e.g. a whole row block of 512+ elements), then work
on slices of the SBUF tile; hoist small per-iteration loads (scales, biases)
out of the loop into one transfer.
"""
    references = (
        "aws-neuron-sdk nki/deep-dives/nki-dma-bandwidth-guide.rst (bandwidth vs payload size)",
        "aws-neuron-sdk nki/get-started/about/nki-dma-overview.rst (16 engines, 4 KiB per partition)",
        "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst (Opt #9: sufficiently large DMA transfers)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_columns(a):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                for j in range(64):
                    t = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=a[0:128, j * 16:(j + 1) * 16])
                    nisa.activation(dst=t, op=nl.exp, data=t)
                    nisa.dma_copy(dst=out[0:128, j * 16:(j + 1) * 16], src=t)
                return out
            """,
            lines=[10, 12],
            title="current API: 64 B per partition per transfer (fp32)",
            level=Level.WARNING,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_columns(a):
                out = nl.ndarray((128, 4096), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                for j in nl.affine_range(16):
                    t = nl.load(a[0:128, j * 256:(j + 1) * 256])
                    nl.store(out[0:128, j * 256:(j + 1) * 256], value=nl.exp(t))
                return out
            """,
            lines=[8, 9],
            title="legacy API: at most 1 KiB (element type unknown, bounded by 4 bytes) is a note",
            level=Level.NOTE,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_columns(a):
                out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=a[0:128, 0:1024])
                for j in range(64):
                    nisa.activation(dst=t[0:128, j * 16:(j + 1) * 16], op=nl.exp, data=t[0:128, j * 16:(j + 1) * 16])
                nisa.dma_copy(dst=out[0:128, 0:1024], src=t)
                return out
            """,
            title="one 4 KiB-per-partition transfer each way",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale_rows(a, scales):
                out = nl.ndarray((1024, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in range(8):
                    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=s, src=scales[i * 128:(i + 1) * 128, 0:1])
                    t = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
                    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=s)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
                return out
            """,
            lines=[10],
            title="one scale per partition next to 8 KiB-per-partition rows: a note, not a warning",
            level=Level.NOTE,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = _OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = facts(graph)
            transfers = dma.transfers(graph)
            for t in transfers:
                if t.direction not in ("load", "store") or t.kind == "transpose":
                    continue
                side, hbm = t.onchip, t.hbm
                if _indirect(graph, hbm.node_id) or _indirect(graph, side.node_id):
                    continue
                per = dma.bytes_per_partition(side)
                if per is None or per[1] >= dma.MIN_BYTES:
                    continue
                loop = _repeating_loop(model, graph, lf, t.op_id)
                if loop is None:
                    continue
                if t.direction == "load" and _reload_loop(ctx, graph, lf, t) is not None:
                    continue  # NKI303 says to hoist it
                severe = per[1] < dma.SEVERE_BYTES
                metadata = None
                parts_upper = dma.partitions(side)
                parts_bound = int_bounds(parts_upper) if parts_upper is not None else None
                if per[1] <= METADATA_BYTES:
                    # An unknown partition count is still at most the
                    # partitions the target has.
                    most_parts = min(parts_bound[1] if parts_bound is not None else float("inf"),
                                     ctx.target.partitions)
                    larger = _largest_transfer_in(graph, lf, loop, transfers, t.op_id)
                    if larger is not None and larger >= max(dma.MIN_BYTES, 16 * per[1] * most_parts):
                        # One index, target or scale per partition next to much
                        # larger transfers of the same iteration: inherent to
                        # the algorithm, and the big DMAs dominate the time.
                        metadata = larger
                        severe = False
                size = dma.fmt_bytes(per[1])
                amount = size if per[0] == per[1] and per[2] else f"at most {size}"
                parts = dma.exact(dma.partitions(side))
                moved = per[1] * parts if parts is not None else None
                detail = f"{amount} per partition"
                if parts is not None:
                    detail += f" x {parts} partition{'s' if parts != 1 else ''}"
                rate = dma.DMA_BYTES_PER_NS.get(ctx.target.generation)
                estimate = ""
                if moved is not None and rate:
                    ns = moved / rate
                    took = "under 1 ns" if ns < 1 else f"{ns:,.0f} ns"
                    estimate = (f"; est. {took} of data movement at the {ctx.target.name} peak of "
                                f"{rate} GB/s against ~{dma.FIXED_COST_NS} ns fixed cost per DMA")
                band = ("below 256 B per partition a DMA is severely overhead-bound" if severe
                        else "below the recommended 2 KiB per partition (4 KiB saturates the DMA engines)")
                if metadata is not None:
                    larger = ("larger transfers" if metadata == float("inf")
                              else f"transfers of up to {dma.fmt_bytes(metadata)}")
                    band = (f"a per-partition value next to {larger} in the same iteration, which dominate; "
                            "batch it with them only if the loop is hot")
                    estimate = ""
                direction = "load of" if t.direction == "load" else "store to"
                reporter.at_site(
                    graph.attrs(t.op_id).get("site"),
                    f"DMA {direction} {operand_text(graph, hbm.node_id)} moves {detail} in each of "
                    f"{loop_words(loop.trip_text())} of `{loop.header()}`: {band}{estimate}",
                    level=Level.WARNING if severe else Level.NOTE,
                    hint="move >= 2 KiB (ideally 4 KiB) per partition per DMA: coalesce several iterations into one "
                         "transfer and work on slices of the SBUF tile",
                    kernel=kernel.name,
                )


class PartitionUnderuse(Rule):
    id = "NKI306"
    name = "partition-underuse"
    family = "pipeline"
    level = Level.WARNING
    summary = "A loop processes 64 or fewer partitions per DMA or instruction where 128 would fit"
    explanation = """
SBUF and PSUM have 128 partitions and every engine works on all of them at
once: a VectorE/ScalarE/GpSimdE instruction over 64 partitions takes as long
as one over 128 (perf guide Opt #5b, "partition vectorization"), and a DMA
spreads its partitions over the 16 DMA engines, 8 partitions each, so a
32-partition transfer keeps only 4 engines busy (DMA overview, Example 1;
"Use full partitions (P=128)" in the bandwidth guide).

The rule reports a loop whose consecutive iterations take *adjacent* blocks
of at most 64 rows (`x[i * 32:(i + 1) * 32, :]`): the data allows one
128-partition DMA or instruction where the loop issues 128/P of them. It
needs the block size and the loop index to be known.

**Fix:** process 128 rows per DMA/instruction: load `x[i * 128:(i + 1) * 128, :]`
into a 128-partition tile (or merge the partition blocks of one tile into a
single instruction), and keep the per-block structure, if needed, in the
free dimension.
"""
    references = (
        "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst (Opt #5b: partition dimension)",
        "aws-neuron-sdk nki/get-started/about/nki-dma-overview.rst (Example 1: 4 partitions use one DMA engine)",
        "aws-neuron-sdk nki/deep-dives/nki-dma-bandwidth-guide.rst (Use full partitions)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((512, 2048), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                for i in range(16):
                    t = nl.ndarray((32, 2048), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 32:(i + 1) * 32, 0:2048])
                    nisa.activation(dst=t, op=nl.exp, data=t)
                    nisa.dma_copy(dst=out[i * 32:(i + 1) * 32, 0:2048], src=t)
                return out
            """,
            lines=[10, 12],
            title="current API: 32-row DMAs in a loop over adjacent row blocks",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_halves(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                for h in range(2):
                    nisa.activation(dst=t[h * 64:(h + 1) * 64, 0:512], op=nl.exp, data=t[h * 64:(h + 1) * 64, 0:512])
                nisa.dma_copy(dst=out[0:128, 0:512], src=t)
                return out
            """,
            lines=[11],
            title="current API: two 64-partition instructions over one 128-partition tile",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((256, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(8):
                    t = nl.load(x[i * 32:(i + 1) * 32, 0:1024])
                    nl.store(out[i * 32:(i + 1) * 32, 0:1024], value=nl.exp(t))
                return out
            """,
            lines=[8, 9],
            title="legacy API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((512, 2048), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                for i in range(4):
                    t = nl.ndarray((128, 2048), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, 0:2048])
                    nisa.activation(dst=t, op=nl.exp, data=t)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:2048], src=t)
                return out
            """,
            title="128 rows per transfer and instruction",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = _OncePerSite(ctx)
        limit = ctx.target.partitions
        for kernel in model.kernels:
            graph = kernel.graph
            lf = facts(graph)
            for t in dma.transfers(graph):
                if t.direction not in ("load", "store"):
                    continue
                parts = dma.exact(dma.partitions(t.onchip))
                if parts is None or parts > limit // 2:
                    continue
                loop = _repeating_loop(model, graph, lf, t.op_id)
                if loop is None:
                    continue
                step = _partition_walk_hbm(graph, t.hbm.node_id, loop, parts)
                if step is None:
                    continue
                if parts == 1 and _partition_walk_onchip_node(graph, t.onchip.node_id, loop, limit) is None:
                    continue  # a single row into its own tile is usually a row to broadcast
                engines = max(1, -(-parts // dma.PARTITIONS_PER_ENGINE))
                reporter.at_site(
                    graph.attrs(t.op_id).get("site"),
                    f"DMA of {operand_text(graph, t.hbm.node_id)} moves {parts} partitions per transfer while "
                    f"`{loop.header()}` walks adjacent {parts}-row blocks: est. {engines} of the "
                    f"{dma.DMA_ENGINES} DMA engines busy (8 partitions each), {limit // parts}x the DMAs of a "
                    f"{limit}-partition transfer",
                    hint=f"move {limit} rows per DMA into a {limit}-partition tile ({limit // parts} iterations at once)",
                    kernel=kernel.name,
                )
            for op_id, data in graph.ops():
                if not _compute_op(graph, op_id):
                    continue
                loop = _repeating_loop(model, graph, lf, op_id)
                if loop is None:
                    continue
                parts = _partition_walk_onchip(graph, op_id, loop, limit)
                if parts is None:
                    continue
                short = (data.get("api") or "").rsplit(".", 1)[-1]
                reporter.at_site(
                    data.get("site"),
                    f"{short} works on {parts} partitions per instruction while `{loop.header()}` walks adjacent "
                    f"{parts}-partition blocks of the same tiles: an instruction takes as long for {parts} "
                    f"partitions as for {limit}; est. {limit // parts}x the instructions needed",
                    hint=f"issue one instruction over all {limit} partitions (partition vectorization, perf guide "
                         f"Opt #5b)",
                    kernel=kernel.name,
                )


# Instructions that process up to 128 partitions at once, one lane per
# partition (nc_stream_shuffle, VectorE transposes and the like work on
# 32-partition quadrants and are not listed).
LANE_PARALLEL = {
    "activation", "activation_reduce", "tensor_tensor", "tensor_scalar", "tensor_copy", "tensor_reduce", "memset",
    "scalar_tensor_tensor", "reciprocal", "exponential", "tensor_scalar_reduce", "tensor_tensor_scan", "iota",
    "select", "affine_select", "range_select", "bn_stats", "bn_aggr", "max8", "dropout",
}


def _compute_op(graph, op_id: str) -> bool:
    data = graph.attrs(op_id)
    api = data.get("api") or ""
    if data.get("assignment") or data.get("augmented") or data.get("operator"):
        return False
    if not api.startswith("nki.isa.") or api.rsplit(".", 1)[-1] not in LANE_PARALLEL:
        return False
    return is_compute(graph, op_id)


def _partition_walk_onchip_node(graph, node: str, loop, limit: int) -> int | None:
    """The on-chip view takes adjacent partition blocks of a larger tile."""
    data = graph.attrs(node)
    if data.get("kind") != "view":
        return None
    base = graph.attrs(graph.base_tensor(node))
    st = steps(graph, node, loop)
    part = [s for s in st or () if s.role == "partition"]
    if not part:
        return None
    p = part[0]
    if p.coeff == 0 or p.extent is None or p.coeff != p.extent or p.extent > limit // 2:
        return None
    shape = base.get("shape_v")
    base_parts = dma.exact(shape[base.get("partition_axis") or 0]) if shape else None
    if base_parts is None or base_parts < 2 * p.extent:
        return None
    return p.extent


def _partition_walk_hbm(graph, node_id: str, loop, parts: int):
    """The HBM item that maps to partitions moves by exactly ``parts`` rows
    per iteration."""
    st = steps(graph, node_id, loop)
    if not st:
        return None
    kept = [s for s in st if not s.integer]
    if not kept:
        return None
    first = kept[0]
    if first.coeff == parts and first.extent == parts:
        return first
    return None


def _partition_walk_onchip(graph, op_id: str, loop, limit: int) -> int | None:
    """Every on-chip operand of the op takes adjacent blocks of P <= limit/2
    partitions of a tile with at least 2P partitions; returns P."""
    found = None
    operands = [n for n, _ in graph.reads(op_id)] + [n for n, _ in graph.writes(op_id)]
    for node in operands:
        if graph.attrs(graph.base_tensor(node)).get("buffer") not in ("sbuf", "psum"):
            continue
        p = _partition_walk_onchip_node(graph, node, loop, limit)
        if p is None or (found is not None and found != p):
            return None
        found = p
    return found


class StridedDma(Rule):
    id = "NKI307"
    name = "strided-dma"
    family = "pipeline"
    level = Level.WARNING
    summary = "A DMA reads or writes HBM with a strided innermost dimension (element-sized contiguous runs)"
    explanation = """
HBM is linear and a DMA moves contiguous runs: each SBUF partition is a
separate destination region, and "if the tensor data slice within each SBUF
partition is not contiguous in the F dimension, more DMA buffers will need
to be unrolled along the F dim" (architecture guide, data movement between
HBM and SBUF). An HBM access whose innermost index is fixed while an outer
dimension is sliced (`x[0:128, 0:64, j]`), that steps the innermost
dimension (`x[:, ::2]`), or an access pattern (`.ap()`) whose innermost
stride is not 1, turns every element into its own descriptor: runs of 2-4
bytes, far below the 256 B per partition where DMAs are already severely
overhead-bound. "HBM is always more performant when accessed sequentially"
(indexing overview). One-off transfers of fewer than 64 elements per
partition (a small vector read as a column) are left out; repeated or
larger ones are reported.

**Fix:** load contiguous rows (make the innermost HBM dimension the
innermost dimension of the transfer) and rearrange on chip, where strided
free-dimension access patterns are cheap (a `tensor_copy` with a strided
view, or a TensorE transpose); or change the HBM layout of the input.
"""
    references = (
        "aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (Data movement between HBM and SBUF)",
        "aws-neuron-sdk nki/get-started/about/indexing-overview.rst (sequential HBM access)",
        "aws-neuron-sdk nki/deep-dives/nki-dma-bandwidth-guide.rst (< 256 B per partition)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def pick_channel(x):
                B, S, C = x.shape
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512, 3])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API: the innermost HBM dimension is fixed",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def load_transposed(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x.ap([[1, 128], [128, 512]], offset=0))
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API: an access pattern with innermost stride 128",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def even_columns(x):
                R, C = x.shape
                out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512:2])
                nl.store(out, value=t)
                return out
            """,
            lines=[8],
            title="legacy API: a stepped innermost slice",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def pick_channel(x):
                B, S, C = x.shape
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[3, 0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="contiguous rows",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = _OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            for t in dma.transfers(graph):
                if t.direction not in ("load", "store") or t.kind == "transpose":
                    continue
                hbm = t.hbm
                if _indirect(graph, hbm.node_id):
                    continue
                why = _strided(graph, hbm)
                if why is None:
                    continue
                # A one-off gather of a few elements (a small vector loaded as
                # a column) costs little: report repeated or large transfers.
                elems = dma.free_elements(t.onchip) if t.onchip is not None else None
                few = elems is None or (dma.int_bounds(elems) or (0, 0))[0] < 64
                if few and _repeating_loop(ctx.model, graph, facts(graph), t.op_id) is None:
                    continue
                direction = "reads" if t.direction == "load" else "writes"
                reporter.at_site(
                    graph.attrs(t.op_id).get("site"),
                    f"DMA {direction} {operand_text(graph, hbm.node_id)} with {why}: every element is its own "
                    f"contiguous run ({dma.itemsize(hbm.dtype) or '2-4'} B), far below the 256 B per partition "
                    f"where DMAs are already severely overhead-bound",
                    hint="move contiguous rows (innermost HBM dimension innermost in the transfer) and rearrange "
                         "on chip with a strided tensor_copy or a TensorE transpose",
                    kernel=kernel.name,
                )


def _strided(graph, hbm: dma.Side) -> str | None:
    """Why the HBM side of a transfer has a strided innermost dimension."""
    data = graph.attrs(hbm.node_id)
    ap = data.get("ap_v")
    if ap is not None:
        pattern = ap.get("pattern")
        if not isinstance(pattern, TupleV) or len(pattern.items) < 2:
            return None
        last = pattern.items[-1]
        if not isinstance(last, TupleV) or len(last.items) != 2:
            return None
        stride, count = last.items
        lo_s = dma.int_bounds(stride)
        lo_c = dma.int_bounds(count)
        if lo_s is None or lo_c is None or lo_s[0] < 2 or lo_c[0] < 2:
            return None
        return f"an access pattern whose innermost stride is {dma.exact(stride) or 'at least ' + str(int(lo_s[0]))} elements"
    items = dma.hbm_items(graph, hbm)
    base = graph.attrs(hbm.base_id)
    shape = base.get("shape_v")
    if not items or shape is None or len(items) != len(shape):
        return None
    last = items[-1]
    outer_sliced = [i for i, it in enumerate(items[:-1]) if not dma.is_integer_index(it)
                    and (dma.int_bounds(dma.item_extent(it, shape[i]) or dma.Const(0)) or (0, 0))[0] >= 2]
    if slice_step_over_one(last):
        step = dma.exact(last.step)
        start = dma.item_start(last)
        stop = shape[-1] if isinstance(last.stop, dma.Const) and last.stop.value is None else last.stop
        span = dma.int_bounds(int_binop(ast.Sub, stop, start)) if start is not None else None
        if step and span is not None and span[0] > step:  # at least two elements picked
            return f"a stepped innermost slice (step {step})"
    if dma.is_integer_index(last) and outer_sliced:
        dim = dma.int_bounds(shape[-1])
        index = dma.int_bounds(last)
        # The dimension has at least two elements (an in-bounds index >= 1 implies it).
        if (dim is not None and dim[0] >= 2) or (index is not None and index[0] >= 1):
            return "the innermost dimension fixed by an integer index while an outer dimension is sliced"
    return None


class DmaTransposeMemoryBound(Rule):
    id = "NKI308"
    name = "dma-transpose-without-tensor-engine"
    family = "pipeline"
    level = Level.NOTE
    summary = "A kernel with an idle TensorE transposes through DMA in a loop"
    explanation = """
DMA transposes (`nisa.dma_transpose`, legacy `nl.load_transpose2d`) run
below copy bandwidth: on Trainium2 an HBM-to-SBUF transpose reaches up to
90 % and an SBUF-to-SBUF transpose up to 50 % of DMA throughput (trn2
architecture guide); the perf guide (Opt #10) says `load_transpose2d` has
"much lower DMA bandwidth" and "should certainly be avoided in memory-bound
kernels", and recommends `dma_copy` plus a TensorE transpose "especially
... when TensorE is otherwise idle".

The rule reports DMA transposes that repeat in a loop in kernels that do no
TensorE work at all (no matmul or TensorE transpose): there the kernel is
bound by data movement and the transpose can move to the idle engine. DMA
transposes next to matmuls are left alone: the NKI library uses them on
purpose in kernels where VectorE/ScalarE or TensorE are the bottleneck.

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
        reporter = _OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            # Only a whole kernel shows that TensorE is idle: a helper analysed
            # on its own, or a graph cut short, may miss the matmuls.
            if kernel.kind != "root" or kernel.error or graph.truncated:
                continue
            if any(_uses_tensor_engine(d) for _, d in graph.ops()):
                continue
            lf = facts(graph)
            for t in dma.transfers(graph):
                if t.kind != "transpose":
                    continue
                loop = _repeating_loop(model, graph, lf, t.op_id)
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


# Dense TensorE peak (TFLOPS) for fp32 and for bf16/fp16/tf32 inputs, by
# NeuronCore version (architecture guides; NKI-REFERENCE.md 2.1).
MATMUL_TFLOPS = {2: (23, 92), 3: (20, 79), 4: (20, 79)}


class Fp32Matmul(Rule):
    id = "NKI309"
    name = "fp32-matmul"
    family = "pipeline"
    level = Level.WARNING
    summary = "A TensorE matmul takes fp32 operands, about 4x slower than bf16"
    explanation = """
TensorE multiplies bf16, fp16, tf32 and fp8 at full rate; with fp32 inputs
"the instruction cost is roughly 4x higher" (architecture guide, TensorE
cost model): about 23 vs 92 dense TFLOPS on trn1 and 20 vs 79 on trn2 and
trn3. Accumulation in PSUM is fp32 either way. A common cause is an SBUF
tile allocated as `nl.float32` for data that arrives in bf16 (the tiling
overview does it for simplicity).

The rule reports `nisa.nc_matmul` and `nl.matmul(..., transpose_x=True)`
whose stationary and moving operands are both known to be fp32; transposes
(`is_transpose=True`, `nc_transpose`) are left out.

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
        reporter = _OncePerSite(ctx)
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


class ShortStationary(Rule):
    id = "NKI310"
    name = "short-stationary"
    family = "pipeline"
    level = Level.WARNING
    summary = "A matmul in a loop puts the short matrix on the stationary side; swapping them is about 2x faster"
    explanation = """
TensorE loads the *stationary* matrix (LoadStationary) and streams the
*moving* one through it (MultiplyMoving). LoadStationary is up to 4x faster
than MultiplyMoving for the same free size, and a MultiplyMoving issues at
best every `max(N, 64)` cycles for a moving free size N. With a short
stationary (free size M much below 128: a vector, a few tokens) and a long
moving matrix (N >= 128), each matmul costs about N cycles; swapped, the
long matrix is loaded fast as stationary (128 columns at a time) and the
short one moves in about 64 cycles. The perf guide (Opt #7, matrix-vector
products in token generation) puts it at roughly half the TensorE time.

The rule reports `nc_matmul` (and `nl.matmul(..., transpose_x=True)`)
inside loops, where back-to-back instructions make TensorE throughput
matter, when the stationary free size is at most 32 and the moving free
size at least 128.

**Fix:** swap the operands: `nc_matmul(dst=ps_T, stationary=long[:, j*128:(j+1)*128],
moving=short)`, one call per 128 columns; the result comes out transposed
(`(A B)^T = B^T A^T`), which often removes a transpose elsewhere.
"""
    references = (
        "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst (Opt #7: leverage fast weight load)",
        "aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (Fast LoadStationary)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def gemv(vT, w):
                out = nl.ndarray((1, 4096), dtype=nl.float32, buffer=nl.shared_hbm)
                v_sb = nl.ndarray((128, 1), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=v_sb, src=vT[0:128, 0:1])
                for n in range(8):
                    w_sb = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=w_sb, src=w[0:128, n * 512:(n + 1) * 512])
                    ps = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=v_sb, moving=w_sb)
                    o = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=o, src=ps)
                    nisa.dma_copy(dst=out[0:1, n * 512:(n + 1) * 512], src=o)
                return out
            """,
            lines=[14],
            title="current API: a vector as the stationary operand",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def gemv(vT, w):
                out = nl.ndarray((4, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
                v_sb = nl.load(vT[0:128, 0:4])
                for n in nl.affine_range(4):
                    w_sb = nl.load(w[0:128, n * 512:(n + 1) * 512])
                    res = nl.matmul(v_sb, w_sb, transpose_x=True)
                    nl.store(out[0:4, n * 512:(n + 1) * 512], value=res)
                return out
            """,
            lines=[10],
            title="legacy API: four tokens as the stationary operand",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def gemv(vT, w):
                out = nl.ndarray((4096, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                v_sb = nl.ndarray((128, 1), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=v_sb, src=vT[0:128, 0:1])
                for n in range(32):
                    w_sb = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=w_sb, src=w[0:128, n * 128:(n + 1) * 128])
                    ps = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=w_sb, moving=v_sb)
                    o = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=o, src=ps)
                    nisa.dma_copy(dst=out[n * 128:(n + 1) * 128, 0:1], src=o)
                return out
            """,
            title="the vector moves, the weight block is stationary (output transposed)",
        ),
    )

    SHORT = 32
    LONG = 128
    MM_INIT = 64  # MM_INIT_LATENCY, TensorE cycles (architecture guide)

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = _OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = facts(graph)
            for op_id, data in graph.ops():
                ops = matmul_operands(graph, op_id)
                if ops is None:
                    continue
                m, n = onchip_free(graph, ops.stationary), onchip_free(graph, ops.moving)
                m_hi = dma.int_bounds(m)[1] if m is not None and dma.int_bounds(m) else None
                n_lo = dma.int_bounds(n)[0] if n is not None and dma.int_bounds(n) else None
                if m_hi is None or n_lo is None or m_hi > self.SHORT or n_lo < self.LONG:
                    continue
                loop = next((lp for lp in lf.enclosing(op_id) if lp.may_repeat()), None)
                if loop is None:
                    continue
                n_exact = dma.exact(n)
                if n_exact is not None:
                    now = max(n_exact, self.MM_INIT)
                    swapped = -(-n_exact // 128) * self.MM_INIT
                    est = f"est. ~{now} TensorE cycles per call now vs ~{swapped} swapped ({now / swapped:.1f}x)"
                else:
                    est = "est. about 2x less TensorE time swapped"
                reporter.at_site(
                    data.get("site"),
                    f"matmul in `{loop.header()}` has a short stationary operand "
                    f"{operand_text(graph, ops.stationary)} (free size {dma.fmt_dim(m)}) and a long moving operand "
                    f"{operand_text(graph, ops.moving)} (free size {dma.fmt_dim(n)}): {est}",
                    hint="swap them: the long matrix as stationary in 128-column blocks, the short one moving; the "
                         "result comes out transposed (perf guide Opt #7)",
                    kernel=kernel.name,
                )


# Ops whose cost per instruction is dominated by fixed overhead below ~128
# elements per partition (architecture guide; perf guide Opt #5a).
MIN_FREE = 128
# Element-wise and reducing instructions whose free size the caller chooses
# (nki.isa, and the nki.language forms of legacy code).
ELEMENTWISE = LANE_PARALLEL - {"iota", "memset", "bn_aggr", "max8"} | {
    "exp", "log", "tanh", "sigmoid", "relu", "gelu", "silu", "add", "subtract", "multiply", "divide", "maximum",
    "minimum", "copy", "sqrt", "rsqrt", "square", "negative", "abs",
}


class SmallInstructions(Rule):
    id = "NKI311"
    name = "small-instructions-in-loop"
    family = "pipeline"
    level = Level.NOTE
    summary = "A loop issues one instruction per small chunk (< 128 elements per partition) of a tile"
    explanation = """
Every compute instruction pays a fixed cost: about 60 cycles to start an
SBUF/PSUM access and a static instruction overhead of the order of 100
cycles, while the useful work is about one cycle per element per
partition. "NeuronCore compute engines typically require at least 128
elements/partition in the source tensor to be efficient" (perf guide Opt
#5a, with a profile of back-to-back one-element ScalarE instructions that
take ~264 cycles each). For TensorE, a matmul issues at best every
`max(N, 64)` cycles, so moving free sizes below 64 waste the turnaround.

The rule reports a loop that walks a tile's free dimension in adjacent
chunks of fewer than 128 elements (64 for matmuls), one instruction per
chunk, where one instruction over the whole range would do.

**Fix:** issue one instruction over the whole free range (or over large
chunks of at least 512 elements); for recurrences that forced the per-element
loop, use the dedicated instructions (`nisa.tensor_tensor_scan`,
`activation` with `reduce_op`, `tensor_reduce`).
"""
    references = (
        "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst (Opt #5a: sufficiently large input tiles in free dimension)",
        "aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (tensor access overhead; MM_INIT_LATENCY)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                for j in range(512):
                    nisa.tensor_scalar(dst=t[0:128, j:j + 1], data=t[0:128, j:j + 1], op0=nl.multiply, operand0=2.0)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[11],
            title="current API: one instruction per column",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def scale(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                for j in nl.affine_range(16):
                    t[:, j * 32:(j + 1) * 32] = nisa.activation(op=nl.exp, data=t[:, j * 32:(j + 1) * 32])
                nl.store(out, value=t)
                return out
            """,
            lines=[10],
            title="legacy API: 32-element chunks",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="one instruction over the whole tile",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        model = ctx.model
        reporter = _OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = facts(graph)
            for op_id, data in graph.ops():
                if data.get("assignment") or data.get("augmented") or not is_compute(graph, op_id):
                    continue
                api = data.get("api") or ""
                mm = matmul_operands(graph, op_id)
                if mm is None and (api.rsplit(".", 1)[-1] not in ELEMENTWISE or data.get("operator")):
                    continue  # fixed-width ops (max8, ...) and transposes have their own shapes
                loop = _repeating_loop(model, graph, lf, op_id)
                if loop is None or loop.sym is None:
                    continue
                limit = 64 if mm is not None else MIN_FREE
                chunk = _free_walk(graph, lf, op_id, loop, mm, limit)
                if chunk is None:
                    continue
                node, free = chunk
                trips = dma.exact(loop.trip)
                total = f"{trips} instructions" if trips is not None else "one instruction per iteration"
                short = api.rsplit(".", 1)[-1]
                if mm is not None:
                    cost = (f"a matmul issues at best every max(N, 64) TensorE cycles, so {free} columns use about "
                            f"{100 * free // 64} % of TensorE's issue rate")
                else:
                    cost = (f"each instruction pays ~60 cycles of SBUF/PSUM access plus ~100 cycles of static "
                            f"overhead for about {free} cycles of work")
                reporter.at_site(
                    data.get("site"),
                    f"{short} handles {free} elements per partition of {operand_text(graph, node)} per instruction "
                    f"while `{loop.header()}` walks the free dimension in adjacent chunks ({total}): {cost} (est.)",
                    hint="issue one instruction over the whole free range (or chunks of at least 512 elements); use "
                         "tensor_tensor_scan or reduce_op forms for per-element recurrences",
                    kernel=kernel.name,
                )


def _free_walk(graph, lf, op_id: str, loop, mm, limit: int):
    """(operand, elements per partition) when the op's on-chip operands take
    adjacent free-dimension chunks of fewer than ``limit`` elements of
    larger tiles in consecutive iterations (so one instruction could cover
    them all). For a matmul only the moving operand and the result count; a
    loop-invariant per-partition scalar operand ((P, 1) bias or scale) may
    stay put."""
    if mm is not None:
        nodes = [mm.moving]
    else:
        nodes = [n for n, _ in graph.reads(op_id)]
        for n, e in graph.writes(op_id):
            if e.get("param") != "result":
                nodes.append(n)
                continue
            # A legacy result tile: where the assignment puts it.
            landing = [w for op2 in graph.ops_reading(n) if graph.attrs(op2).get("assignment")
                       and any(r == n for r, _ in graph.reads(op2))
                       for w, e2 in graph.writes(op2) if e2.get("param") == "dst"]
            if not landing:
                return None
            nodes.append(landing[0])
    found = None
    for node in nodes:
        if graph.attrs(graph.base_tensor(node)).get("buffer") not in ("sbuf", "psum"):
            continue
        free = dma.exact(dma.free_elements(dma.side(graph, node)))
        st = steps(graph, node, loop) if graph.attrs(node).get("kind") == "view" else None
        step = walks(st, "free")
        if step is None:
            if free == 1 and lf.access_dependence(node, loop) == INV:
                continue  # a shared (P, 1) scalar operand
            return None
        if free is None or free >= limit or step.extent >= limit:
            return None
        if found is not None and found[1] != free:
            return None
        found = (node, free)
    return found


class SerializedLegacyLoop(Rule):
    id = "NKI304"
    name = "serialized-loop"
    family = "pipeline"
    level = Level.WARNING
    summary = "Legacy NKI: a sequential_range/range loop whose iterations are independent (use affine_range)"
    explanation = """
In legacy NKI (`neuronxcc.nki`, and NKI 0.2), the loop iterator tells the
compiler what it may do across iterations: `nl.affine_range` declares the
iterations independent, so the compiler may pipeline them across engines
(and vectorize), while `nl.sequential_range` "informs Neuron compiler to
respect inter-loop dependency and perform much more conservative loop-level
optimizations". A Python `range()` is turned into `sequential_range()` by
the compiler. The programming model calls `affine_range` "the default loop
iterator choice, when the loop has no loop-carried dependency"
(associative reductions such as matmul accumulation into PSUM do not
count).

The rule reports `sequential_range` and `range` loops whose iterations the
model proves independent: every tensor the loop writes is allocated in its
body, or each iteration writes (and reads back) its own block of it, or it
is a matmul accumulation into PSUM; no Python variable carries a value from
one iteration to the next; every call in the body is understood. From NKI
0.3 on, every static loop is unrolled and the iterator no longer matters,
so the rule is off there.

**Fix:** use `nl.affine_range(...)` for this loop. Keep `sequential_range`
where an iteration really needs the previous one's result (a running
max/sum, a scan).
"""
    references = (
        "aws-neuron-sdk general/nki/programming_model.rst @0521004c (range is lowered to sequential_range)",
        "aws-neuron-sdk general/nki/api/nki/language/__init__.py @0521004c (affine_range, sequential_range)",
        "aws-neuron-sdk nki/api/nki/language/__init__.py @337e6041 (NKI 0.2: same semantics)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((8, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in range(8):
                    t = nl.load(x[i])
                    nl.store(out[i], value=nl.exp(t))
                return out
            """,
            lines=[7],
            title="legacy API: Python range (lowered to sequential_range)",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def matmul(lhsT, rhs):
                out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
                for n in nl.sequential_range(4):
                    ps = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(4):
                        a = nl.load(lhsT[k * 128:(k + 1) * 128, 0:128])
                        b = nl.load(rhs[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                        ps += nl.matmul(a, b, transpose_x=True)
                    nl.store(out[0:128, n * 512:(n + 1) * 512], value=ps)
                return out
            """,
            lines=[7],
            title="legacy API: sequential_range over independent output blocks",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((1024, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.sequential_range(8):
                    t = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, 0:2048])
                    nisa.activation(dst=t, op=nl.exp, data=t)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:2048], src=t)
                return out
            """,
            lines=[8],
            title="NKI 0.2 (nki namespace, first new compiler): still a rolled sequential loop",
            nki_version="0.2",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((8, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(8):
                    t = nl.load(x[i])
                    nl.store(out[i], value=nl.exp(t))
                return out
            """,
            title="legacy API: affine_range",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def prefix_sum(x):
                out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
                carry = nl.zeros((128, 1), dtype=nl.float32)
                for i in nl.sequential_range(4):
                    t = nl.load(x[0:128, i * 512:(i + 1) * 512])
                    ones = nl.ones((128, 512), dtype=nl.float32)
                    s = nisa.tensor_tensor_scan(t, ones, initial=carry, op0=nl.multiply, op1=nl.add)
                    carry[...] = s[0:128, 511:512]
                    nl.store(out[0:128, i * 512:(i + 1) * 512], value=s)
                return out
            """,
            title="legacy API: a scan carried between iterations",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((1024, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.sequential_range(8):
                    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, 0:512])
                    nisa.activation(dst=t, op=nl.exp, data=t)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=t)
                return out
            """,
            title="NKI 0.3+: every static loop is unrolled, the iterator does not matter",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if not _old_loop_semantics(ctx):
            return
        model = ctx.model
        reporter = _OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            if kernel.error or graph.truncated:
                continue
            lf = facts(graph)
            for loop_id, loop in lf.loops.items():
                if loop.kind not in ("range", "sequential_range") or not loop.may_repeat():
                    continue
                if any(lf.loops[a].dynamic for a in loop.ancestors if a in lf.loops):
                    continue
                why = serial.independent_iterations(model, graph, lf, loop)
                if why is not None:
                    continue
                how = ("Python range() is lowered to nl.sequential_range()" if loop.kind == "range"
                       else "nl.sequential_range keeps them in order")
                era = "legacy NKI" if model.legacy else f"NKI {ctx.nki_version}"
                reporter.at_site(
                    loop.site,
                    f"the iterations of `{loop.header()}` are independent (each writes only its own tiles or "
                    f"blocks), but in {era} {how}: the compiler will not pipeline them across engines",
                    hint="use nl.affine_range(...) for this loop",
                    kernel=kernel.name,
                )
