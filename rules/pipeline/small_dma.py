"""NKI305 small-dma: DMAs that move too few bytes per partition to amortize their fixed cost."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import NON_LOOPS, Loop, nest_of
from nkilint.model.values import int_bounds
from nkilint.rule import Rule, invalid, valid

from . import _dma as dma
from ._report import OncePerSite, loop_words, operand_text
from ._reuse import indirect, reload_loop, repeating_loop


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



def _inner_sweep(graph, lf, loop, op_id: str, transfers) -> Loop | None:
    """A loop nested in ``loop`` (not around the op itself) that may repeat
    and issues DMAs of its own: each iteration of ``loop`` pays many DMA
    fixed costs besides this op's (an inner loop of compute alone does not
    count: the small DMAs may then be most of the iteration's cost)."""
    own = set(graph.attrs(op_id).get("loops", ()))
    dmas = {t.op_id for t in transfers}
    for other in lf.ops_in(loop.loop_id):
        if other != op_id and other in dmas:
            chain = tuple(graph.attrs(other).get("loops", ()))
            inner = chain[chain.index(loop.loop_id) + 1:] if loop.loop_id in chain else ()
            for lid in inner:
                nested = lf.loops.get(lid)
                if lid not in own and nested is not None and nested.kind not in NON_LOOPS and nested.may_repeat():
                    return nested
    return None

class SmallDma(Rule):
    id = "NKI305"
    name = "small-dma"
    family = "pipeline"
    level = Level.WARNING
    summary = "A DMA in a loop moves less than 2 KiB per partition (under 256 B: severely overhead-bound)"
    explanation = """
The rule looks at DMAs between HBM and SBUF that repeat in a loop, where the
fixed cost adds up; a one-off small load outside loops is not reported.
Below 256 B per partition the finding is a warning, from 256 B to 2 KiB a
note. When the element type is unknown the size is bounded with 4-byte
elements. Gathers and scatters (index tensors) are left out: their row size
is the data's. Loads that NKI303 reports (the same data every iteration) are
left to it: hoisting them is the fix. A DMA of one value per partition (at
most 8 B: an index, a target, a scale) next to a transfer of the same
iteration that moves at least 16 times as much in all (and at least
2 KiB), or next to an inner loop that issues DMAs of its own, is only a
note: the large transfers (or the inner loop's many fixed costs)
dominate the iteration, and the small one is usually inherent to the
algorithm (it feeds an indirect DMA or scales the tile).

**Why on Trainium:** Every DMA pays a fixed cost (descriptor generation,
cross-engine semaphores: about 1.3 us) and each of the 16 DMA engines moves
data in per-partition chunks. The DMA bandwidth guide gives the curve: below
256 B per partition a transfer is *severely overhead-bound* (a small fraction
of peak bandwidth), 256 B–2 KiB is still below peak, 2 KiB per partition (512
fp32, 1024 bf16, 2048 fp8 elements) is the recommended minimum and 4 KiB
saturates the engines. The perf guide (Opt #9) asks to maximize both the
partition and the free size of every transfer.

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
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scan_states(delta, A, B):
                out = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.shared_hbm)
                d = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=d, src=delta[0:128, 0:4096])
                acc = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for s in nl.affine_range(16):
                    a = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=a, src=A[0:128, s:s + 1])
                    for j in nl.static_range(8):
                        b = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.sbuf)
                        nisa.dma_copy(dst=b, src=B[s, j:j + 1, 0:512])
                        e = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                        nisa.activation(dst=e, op=nl.exp, data=d[0:128, j * 512:(j + 1) * 512], scale=a)
                        nisa.tensor_tensor(dst=e, data1=e, data2=nl.broadcast_to(b, (128, 512)), op=nl.multiply)
                        nisa.tensor_tensor(dst=acc[0:128, j * 512:(j + 1) * 512], data1=acc[0:128, j * 512:(j + 1) * 512],
                                           data2=e, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[14],
            title="one scale per partition next to an inner loop of DMAs: a note",
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
        reporter = OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = nest_of(graph)
            transfers = dma.transfers(graph)
            for t in transfers:
                if t.direction not in ("load", "store") or t.kind == "transpose":
                    continue
                side, hbm = t.onchip, t.hbm
                if indirect(graph, hbm.node_id) or indirect(graph, side.node_id):
                    continue
                per = dma.bytes_per_partition(side)
                if per is None or per[1] >= dma.MIN_BYTES:
                    continue
                loop = repeating_loop(model, graph, lf, t.op_id)
                if loop is None:
                    continue
                if t.direction == "load" and reload_loop(ctx, graph, lf, t) is not None:
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
                    elif (sweep := _inner_sweep(graph, lf, loop, t.op_id, transfers)) is not None:
                        # Loaded once per iteration of a loop whose body runs
                        # a whole inner loop of work: the sweep dominates.
                        metadata = sweep
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
                if isinstance(metadata, Loop):
                    band = (f"a per-partition value loaded once per iteration, next to the inner loop "
                            f"`{metadata.header()}` whose own DMAs dominate the iteration; batch these loads into one "
                            "transfer before the loop only if it is hot")
                    estimate = ""
                elif metadata is not None:
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
