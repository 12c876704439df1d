"""NKI301 missing-double-buffering: one SBUF buffer refilled or drained by DMA in every iteration."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import NON_LOOPS, nest_of
from nkilint.rule import Rule, invalid, valid

from . import _buffers as buffers
from . import _dma as dma
from ._report import OncePerSite, line_of, old_loop_semantics
from ._reuse import total_bytes


def _exposed_ns(t: dma.Transfer, ctx: RuleContext) -> str:
    """Time the transfer takes at the target's peak DMA bandwidth (an estimate)."""
    moved = total_bytes(t)
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
A loop in which one SBUF tile is refilled by a DMA in every iteration while
compute reads it, or rewritten by compute and drained by a DMA in every
iteration: the iterations take turns on a single buffer.

**Why on Trainium:** Overlap between DMA and the compute engines comes from
having several buffers in flight: while compute reads tile *i*, a DMA fills
tile *i+1*. Dependencies follow *storage*. A tile allocated once **outside** a
loop and rewritten by a DMA in every iteration is a single buffer: the load of
iteration *i+1* must wait until every instruction of iteration *i* has read it
(write-after-read), so load and compute take turns instead of running in
parallel. The same holds for stores: a tile that compute rewrites every
iteration and a DMA then writes to HBM makes the next iteration's compute wait
for the store.

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
buffer is not used after the loop. Explicit placements are NKI302. It
stays quiet where a second buffer would not move the time: a barrier or a
collective ends each trip (trips cannot overlap anyway), the buffer waits
across a whole inner sweep that does not touch it, or the tile is tiny next
to another transfer of the same trip (16 times as much; an HBM-to-HBM copy
counts with the most it may move).

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
            def copy_rows(x, ids):
                n, hidden = x.shape
                out = nl.ndarray((n, hidden), dtype=x.dtype, buffer=nl.shared_hbm)
                idx = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                row = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
                for i in range(n):
                    nisa.dma_copy(dst=idx, src=ids[i:i + 1, 0:1])
                    nisa.tensor_scalar(dst=row, data=idx, op0=nl.multiply, operand0=hidden)
                    nisa.dma_copy(dst=out[i:i + 1, 0:hidden], src=x[i:i + 1, 0:hidden])
                return out
            """,
            title="current API: a 4 B index refilled next to a row copy HBM to HBM that dominates the trip",
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
        reporter = OncePerSite(ctx)
        old = old_loop_semantics(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = nest_of(graph)
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
        where = f"allocated at {ctx.model.line_ref(data['site'])}" if line_of(data) else "allocated once"
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
    the time; an HBM-to-HBM copy counts with the most it may move)."""
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
        if t.op_id == found.dma_op or t.op_id not in inside:
            continue
        if t.onchip is None:
            # An HBM-to-HBM copy (a row scattered by the index this tile
            # holds): as large as the code allows it to be, as for NKI305.
            moved = dma.total_bytes_upper(graph, t)
            if moved is not None and moved >= max(16 * tile_bytes, dma.MIN_BYTES):
                return True
            continue
        other = dma.bytes_per_partition(t.onchip)
        other_parts = dma.exact(dma.partitions(t.onchip))
        if other is not None and other_parts is not None and other[0] * other_parts >= 16 * tile_bytes:
            return True
    return False
