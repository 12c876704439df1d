"""NKI306 partition-underuse: a loop that walks tiles along fewer partitions than the engines have."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import nest_of
from nkilint.rule import Rule, invalid, valid

from . import _dma as dma
from ._ops import LANE_PARALLEL, is_compute, steps
from ._report import OncePerSite, line_of, operand_text
from ._reuse import repeating_loop


class PartitionUnderuse(Rule):
    id = "NKI306"
    name = "partition-underuse"
    family = "pipeline"
    level = Level.WARNING
    summary = "A loop processes 64 or fewer partitions per DMA or instruction where 128 would fit"
    explanation = """
The rule reports a loop whose consecutive iterations take *adjacent* blocks
of at most 64 rows (`x[i * 32:(i + 1) * 32, :]`): the data allows one
128-partition DMA or instruction where the loop issues 128/P of them. Both
the DMAs and the lane-parallel instructions (VectorE, ScalarE, GpSimdE;
legacy `nl.*` element-wise calls) on the tiles those DMAs fill or drain are
reported, and instructions that walk adjacent partition blocks of one
larger tile. It needs the block size and the loop index to be known, and
the blocks together to cover at least 128 rows (a known trip count times
the block size); a tile whose partition extent is the data's own (one
64-row head per plane) is left alone.

**Why on Trainium:** SBUF and PSUM have 128 partitions and every engine works
on all of them at once: a VectorE/ScalarE/GpSimdE instruction over 64
partitions takes as long as one over 128 (perf guide Opt #5b, "partition
vectorization"), and a DMA spreads its partitions over the 16 DMA engines, 8
partitions each, so a 32-partition transfer keeps only 4 engines busy (DMA
overview, Example 1; "Use full partitions (P=128)" in the bandwidth guide).

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
            lines=[10, 11, 12],
            title="current API: 32-row DMAs and a 32-partition activation in a loop over adjacent row blocks",
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
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def scale_rows(x, w):
                out = nl.ndarray((512, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
                w_t = nl.load(w[0:1, 0:1024])
                for i in nl.affine_range(16):
                    t = nl.load(x[i * 32:(i + 1) * 32, 0:1024])
                    y = nl.multiply(t, w_t)
                    nl.store(out[i * 32:(i + 1) * 32, 0:1024], value=y)
                return out
            """,
            lines=[9, 10, 11],
            title="legacy API: an element-wise op on the 32-row tiles (the 1-row weights broadcast)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def head_exp(q):
                H, D, S = q.shape
                out = nl.ndarray((8, 64, 2048), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                for h in range(8):
                    t = nl.ndarray((64, 2048), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=q[h, 0:64, 0:2048])
                    nisa.activation(dst=t, op=nl.exp, data=t)
                    nisa.dma_copy(dst=out[h, 0:64, 0:2048], src=t)
                return out
            """,
            title="64 partitions is the data's own extent (one 64-row head per iteration, heads in separate planes)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_rows(x):
                out = nl.ndarray((64, 2048), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                for i in range(2):
                    t = nl.ndarray((32, 2048), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 32:(i + 1) * 32, 0:2048])
                    nisa.activation(dst=t, op=nl.exp, data=t)
                    nisa.dma_copy(dst=out[i * 32:(i + 1) * 32, 0:2048], src=t)
                return out
            """,
            title="all the blocks together are fewer than 128 rows",
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
        reporter = OncePerSite(ctx)
        limit = ctx.target.partitions
        for kernel in model.kernels:
            graph = kernel.graph
            lf = nest_of(graph)
            # (loop id, on-chip base tensor) -> (partitions, line) of the
            # transfers that walk adjacent row blocks: their tiles are the
            # ones whose compute could run on all partitions.
            walked: dict[tuple[str, str], tuple[int, int | None]] = {}
            for t in dma.transfers(graph):
                if t.direction not in ("load", "store"):
                    continue
                parts = dma.exact(dma.partitions(t.onchip))
                if parts is None or parts <= 0 or parts > limit // 2:
                    continue  # unknown, empty (another rule's finding) or over half the partitions
                loop = repeating_loop(model, graph, lf, t.op_id)
                if loop is None or not _rows_fill(loop, parts, limit):
                    continue
                step = _partition_walk_hbm(graph, t.hbm.node_id, loop, parts)
                if step is None:
                    continue
                walked.setdefault((loop.loop_id, t.onchip.base_id), (parts, line_of(graph.attrs(t.op_id))))
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
                loop = repeating_loop(model, graph, lf, op_id)
                if loop is None:
                    continue
                parts = _partition_walk_onchip(graph, op_id, loop, limit)
                if parts is None:
                    fed = _fed_by_walk(graph, op_id, loop, walked)
                    if fed is not None:
                        self._report_fed(reporter, kernel.name, data, loop, fed, limit)
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


    def _report_fed(self, reporter, kernel: str, data: dict, loop, fed: tuple[int, int | None], limit: int) -> None:
        parts, line = fed
        short = (data.get("api") or "").rsplit(".", 1)[-1]
        where = f" (line {line})" if line is not None else ""
        reporter.at_site(
            data.get("site"),
            f"{short} works on {parts}-partition tiles in every iteration of `{loop.header()}`, which moves "
            f"adjacent {parts}-row blocks by DMA{where}: {limit - parts} of the {limit} lanes idle, and an "
            f"instruction takes as long for {parts} partitions as for {limit}; est. {limit // parts}x the "
            f"instructions needed",
            hint=f"move {limit} rows per DMA into {limit}-partition tiles so each instruction covers all "
                 f"{limit} partitions (partition vectorization, perf guide Opt #5b)",
            kernel=kernel,
        )


# Legacy nki.language calls that run one lane-parallel instruction over their
# tile operands (the element-wise and reduction families of nl.*).
LEGACY_LANE_PARALLEL = {
    "exp", "log", "tanh", "sigmoid", "relu", "gelu", "silu", "sqrt", "rsqrt", "square", "abs", "negative",
    "reciprocal", "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "copy", "sum", "max",
    "min", "mean", "softmax", "erf", "sin", "cos", "where", "invert", "exp2", "sign", "rms_norm",
}


def _compute_op(graph, op_id: str) -> bool:
    data = graph.attrs(op_id)
    api = data.get("api") or ""
    if data.get("assignment") or data.get("augmented") or data.get("operator"):
        return False
    short = api.rsplit(".", 1)[-1]
    if api.startswith("nki.isa.") and short in LANE_PARALLEL:
        return is_compute(graph, op_id)
    if api.startswith("nki.language.") and short in LEGACY_LANE_PARALLEL:
        return is_compute(graph, op_id)
    return False


def _rows_fill(loop, parts: int, limit: int) -> bool:
    """The loop's blocks together cover at least ``limit`` rows (a known trip
    count times ``parts``); an unknown trip count is taken to."""
    trips = dma.exact(loop.trip) if loop.trip is not None else None
    return trips is None or trips * parts >= limit


def _fed_by_walk(graph, op_id: str, loop, walked: dict) -> tuple[int, int | None] | None:
    """(P, DMA line) when every on-chip operand of the op has exactly P
    partitions (or one, broadcast along the partitions) and one of them is a
    tile a DMA of the same loop moves in adjacent P-row blocks."""
    sizes: set[int] = set()
    fed = None
    operands = [n for n, _ in graph.reads(op_id)] + [n for n, _ in graph.writes(op_id)]
    for node in operands:
        base_id = graph.base_tensor(node)
        if graph.attrs(base_id).get("buffer") not in ("sbuf", "psum"):
            continue
        p = dma.exact(dma.partitions(dma.side(graph, node)))
        if p is None:
            return None
        sizes.add(p)
        hit = walked.get((loop.loop_id, base_id))
        if hit is not None and hit[0] == p and fed is None:
            fed = hit
    # A one-partition operand broadcasts across the others (a row of weights).
    if fed is None or sizes - {1} != {fed[0]}:
        return None
    return fed
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
        base = graph.attrs(graph.base_tensor(node))
        if base.get("buffer") not in ("sbuf", "psum"):
            continue
        if _own_result(graph, op_id, base):
            continue  # a legacy call's fresh result tile takes its inputs' partitions
        p = _partition_walk_onchip_node(graph, node, loop, limit)
        if p is None or (found is not None and found != p):
            return None
        found = p
    return found


def _own_result(graph, op_id: str, base: dict) -> bool:
    """The tensor is the fresh result tile a legacy ``nl.*`` call creates."""
    return base.get("origin") == "result" and base.get("call") is not None \
        and base.get("call") is getattr(graph.attrs(op_id).get("site"), "node", None)
