"""NKI502 low-precision-accumulator."""

from __future__ import annotations

from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.model.graph import KernelGraph
from nkilint.model.values import int_bounds
from nkilint.rule import invalid, valid

from ._spots import NumericsRule, Spot, is_low, is_matmul, loop_text, tile_name


class LowPrecisionAccumulator(NumericsRule):
    id = "NKI502"
    name = "low-precision-accumulator"
    family = "numerics"
    level = Level.WARNING
    summary = "A running sum accumulates in bf16/fp16/fp8 across loop iterations, or adds partials cast down in the loop"
    fix_hint = "accumulate in an nl.float32 tile and cast once at the end"
    explanation = """
A loop adds into the same low-precision tile every iteration:
`nisa.tensor_tensor(dst=acc, data1=acc, data2=x, op=nl.add)`, `acc[...] +=
x`, or legacy `acc = acc + x` / `acc = nl.add(acc, x)` with `acc`
allocated outside the loop in bf16, fp16 or fp8 — including PSUM results
evicted to bf16 inside the K loop and summed there. The same rule reports
an fp32 accumulator fed by matmul partials that were cast down to a
low-precision tile (`tensor_copy` from PSUM) inside the loop: split-K
partials rounded before the sum. A warning when the loop
runs at least 8 times for every value the code allows; a note when the
trip count is smaller or unknown (a handful of roundings, e.g. combining a
few expert outputs, is often an accepted trade-off).

**Why on Trainium:** VectorE/ScalarE compute in fp32 but round their output
to the destination dtype, so a bf16 running sum is rounded to 8 significant
bits after every iteration: long loops drift and small addends vanish.
The GPU original kept its accumulator in fp32 registers (`tl.sum` and
`tl.dot` accumulate in fp32), so results differ beyond bf16 tolerance.

**Fix:** Keep the running sum in an `nl.float32` tile (or in fp32 PSUM for
matmul partials) and cast once when storing.
"""
    references = ("aws-neuron-sdk nki/api/nki.api.shared.rst (ALU ops compute in fp32)",)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def col_sum(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for i in range(16):
                    t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[13],
            title="current API",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def col_sum(x):
                out = nl.ndarray((128, 512), dtype=nl.float16, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float16, buffer=nl.sbuf)
                for i in nl.sequential_range(16):
                    t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
                    acc = nl.add(acc, t)
                nl.store(out, value=acc)
                return out
            """,
            lines=[10],
            title="legacy API: rebinding acc = nl.add(acc, t)",
            level=Level.WARNING,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def combine(expert_out, n_experts):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for e in range(n_experts):
                    t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=expert_out[e])
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[13],
            title="unknown trip count: a note",
            level=Level.NOTE,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def mm_split_k(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for k in range(16):
                    ta = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=aT[k * 128:(k + 1) * 128, 0:128])
                    nisa.dma_copy(dst=tb, src=b[k * 128:(k + 1) * 128, 0:512])
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=ta, moving=tb)
                    part = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=part, src=ps)
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=part, op=nl.add)
                nisa.dma_copy(dst=out, src=acc)
                return out
            """,
            lines=[19],
            title="split-K partials cast to bf16 inside the loop, summed in fp32",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def col_sum(x):
                out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.memset(dst=acc, value=0.0)
                for i in range(16):
                    t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
                    nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
                res = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
            """,
            title="fp32 accumulator, one cast",
        ),
    )

    def spots(self, ctx: RuleContext):
        return low_precision_accumulators(ctx)


_ACC_FUNCS = {"add", "subtract"}


LONG_ACCUMULATION = 8  # roundings after which a low-precision running sum is a warning


def _accumulates(data: dict) -> bool:
    s = df.short(data.get("api"))
    if s in _ACC_FUNCS:
        return True
    funcs = df.func_params(data)
    if s in ("tensor_tensor",) and funcs.get("op") in _ACC_FUNCS:
        return True
    if s == "scalar_tensor_tensor" and funcs.get("op1") in _ACC_FUNCS:
        return True
    return False


def low_precision_accumulators(ctx: RuleContext) -> Iterator[Spot]:
    for kernel, graph in ctx.model.graphs():
        seen: set[str] = set()
        for op, data in graph.ops():
            if not _accumulates(data) or not data.get("loops"):
                continue
            reads = df.reads(graph, op)
            writes = df.writes(graph, op)
            read_bases = {df.base(graph, n): n for _, n in reads}
            for param, dst in writes:
                dbase = df.base(graph, dst)
                ddata = graph.attrs(dbase)
                target = None
                if dbase in read_bases:
                    target = dbase  # dst=acc, data1=acc
                elif param == "result" and ddata.get("name"):
                    # legacy rebinding: acc = acc + x
                    target = next((b for b in read_bases if graph.attrs(b).get("name") == ddata.get("name")
                                   and graph.attrs(b).get("origin") in ("alloc", "result")), None)
                if target is None or target in seen:
                    continue
                tdata = graph.attrs(target)
                dtype = df.dtype_of(graph, target)
                if tdata.get("buffer") not in ("sbuf", "psum"):
                    continue
                if not is_low(dtype):
                    spot = _cast_down_partial(graph, op, data, target, reads, dst, ctx.model)
                    if spot is not None:
                        seen.add(target)
                        spot.kernel = kernel.name
                        yield spot
                    continue
                # PSUM matmul accumulation is NKI501's.
                if any(is_matmul(graph.attrs(w)) for _, n in reads for w in df.writers(graph, n)) and tdata.get("buffer") == "psum":
                    continue
                loop = df.accumulation_loop(graph, op, target, dst)
                if loop is None:
                    continue
                seen.add(target)
                level = _accumulation_level(graph, loop)
                yield Spot(data.get("site"), (
                    f"{tile_name(graph, target)} ({dtype}) accumulates across {loop_text(graph, loop)} with "
                    f"{df.short(data.get('api'))}: every iteration rounds the running sum to {dtype} "
                    f"({_mantissa(dtype)} significant bits), while the GPU original kept the accumulator in fp32 "
                    f"registers; accumulate in an nl.float32 tile (or in fp32 PSUM) and cast once at the end"
                ), level, kernel.name)


def _accumulation_level(graph: KernelGraph, loop: str) -> Level:
    """Rounding error grows with the number of roundings: a warning only when
    the loop runs at least LONG_ACCUMULATION times for every value the code
    allows, else a note."""
    trip = graph.attrs(loop).get("trip_v")
    bounds = int_bounds(trip) if trip is not None else None
    return Level.WARNING if bounds is not None and bounds[0] >= LONG_ACCUMULATION else Level.NOTE


_COPIES = {"tensor_copy", "copy", "activation", "tensor_scalar"}


def _cast_down_partial(graph: KernelGraph, op: str, data: dict, target: str, reads, dst: str, model) -> Spot | None:
    """An fp32 accumulator fed by matmul partials that were evicted from PSUM to
    a low-precision tile inside the same loop (split-K partials rounded)."""
    loop = df.accumulation_loop(graph, op, target, dst)
    if loop is None:
        return None
    for _, n in reads:
        if df.base(graph, n) == target:
            continue
        part_dtype = df.dtype_of(graph, n)
        if not is_low(part_dtype):
            continue
        for w in df.writers(graph, n):
            wdata = graph.attrs(w)
            if df.short(wdata.get("api")) not in _COPIES or loop not in wdata.get("loops", ()):
                continue
            srcs = [m for _, m in df.reads(graph, w)]
            psum = [m for m in srcs if graph.attrs(df.base(graph, m)).get("buffer") == "psum"
                    and any(is_matmul(graph.attrs(x)) for x in df.writers(graph, m))]
            if not psum:
                continue
            level = _accumulation_level(graph, loop)
            return Spot(data.get("site"), (
                f"matmul partials are cast down to {part_dtype} ({tile_name(graph, n)}, evicted from PSUM tile "
                f"{tile_name(graph, psum[0])} at {model.line_ref(wdata.get('site'))}) inside "
                f"{loop_text(graph, loop)} and then added into {tile_name(graph, target)}: every partial is rounded to "
                f"{part_dtype} before the sum, where a GPU kernel keeps partial sums in fp32 registers; accumulate "
                f"in one fp32 PSUM tile (or evict to an fp32 tile) and cast once at the end"
            ), level)
    return None


def _mantissa(dtype: str | None) -> int:
    return {"bfloat16": 8, "float16": 11, "float8_e4m3": 4, "float8_e4m3fn": 4, "float8_e5m2": 3}.get(dtype or "", 8)
