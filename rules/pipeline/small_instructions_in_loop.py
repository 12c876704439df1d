"""NKI311 small-instructions-in-loop: compute instructions over few free elements in a hot loop."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import INV, nest_of
from nkilint.rule import Rule, invalid, valid

from . import _dma as dma
from ._ops import LANE_PARALLEL, is_compute, matmul_operands, steps, walks
from ._report import OncePerSite, operand_text
from ._reuse import repeating_loop


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
The rule reports a loop that walks a tile's free dimension in adjacent
chunks of fewer than 128 elements (64 for matmuls), one instruction per
chunk, where one instruction over the whole range would do.

**Why on Trainium:** Every compute instruction pays a fixed cost: about 60
cycles to start an SBUF/PSUM access and a static instruction overhead of the
order of 100 cycles, while the useful work is about one cycle per element per
partition. "NeuronCore compute engines typically require at least 128
elements/partition in the source tensor to be efficient" (perf guide Opt #5a,
with a profile of back-to-back one-element ScalarE instructions that take ~264
cycles each). For TensorE, a matmul issues at best every `max(N, 64)` cycles,
so moving free sizes below 64 waste the turnaround.

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
        reporter = OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            lf = nest_of(graph)
            for op_id, data in graph.ops():
                if data.get("assignment") or data.get("augmented") or not is_compute(graph, op_id):
                    continue
                api = data.get("api") or ""
                mm = matmul_operands(graph, op_id)
                if mm is None and (api.rsplit(".", 1)[-1] not in ELEMENTWISE or data.get("operator")):
                    continue  # fixed-width ops (max8, ...) and transposes have their own shapes
                loop = repeating_loop(model, graph, lf, op_id)
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
            if free == 1 and lf.access_variance(node, loop) == INV:
                continue  # a shared (P, 1) scalar operand
            return None
        if free is None or free >= limit or step.extent >= limit:
            return None
        if found is not None and found[1] != free:
            return None
        found = (node, free)
    return found
