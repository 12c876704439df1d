"""NKI312 static-bound-dynamic-loop: a dynamic loop (fori_loop, dynamic_range) whose trip count is a constant."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import nest_of
from nkilint.model.values import const_int
from nkilint.rule import Rule, invalid, valid

from ._report import OncePerSite

# Up to this many iterations a static loop unrolls into a modest amount of
# code; a longer constant loop may be dynamic on purpose (instruction memory,
# compile time), which is only worth a note.
SHORT_TRIPS = 64
# Loop kinds whose body the compiler emits once and repeats with a hardware
# loop; a `while` on a register is dynamic by nature and not looked at here.
COUNTED_DYNAMIC = ("fori_loop", "dynamic_range")


class StaticBoundDynamicLoop(Rule):
    id = "NKI312"
    name = "static-bound-dynamic-loop"
    family = "pipeline"
    level = Level.WARNING
    summary = "A dynamic loop (nl.fori_loop, nl.dynamic_range) runs a trip count known when the kernel is traced"
    explanation = """
An `nl.fori_loop(lo, hi, body)` or `for i in nl.dynamic_range(n)` whose
bounds are constants the tracer knows (literals, or arithmetic on shapes
and Python constants), not a runtime register. Up to 64 iterations the
finding is a warning; a longer constant loop may be dynamic on purpose
(less code, faster compiles) and is a note.

**Why on Trainium:** a dynamic loop is a hardware loop: the body is emitted
once, the induction variable lives in a register, and every tile allocated
in the body is allocated once and reused by every trip (the dynamic loops
guide, "Register Allocation Implications"). The compiler cannot unroll it,
rotate buffers between trips or overlap trip *i+1*'s loads with trip *i*'s
compute, and indexing goes through `.ap(scalar_offset=...)`. A static loop
(`nl.affine_range`, `nl.sequential_range` or `range` in NKI 0.3 and later,
where every static loop is unrolled) gives each trip its own tiles and lets
the scheduler pipeline them. Dynamic loops are for trip counts that are
only known on the device (a register loaded from a tensor).

**Fix:** write the loop as `for i in nl.affine_range(n):` (or
`nl.sequential_range` when the trips depend on each other) and index with
`i` directly; keep `fori_loop` / `dynamic_range` for bounds held in a
register (`nisa.register_load`), or suppress with `# noqa: NKI312` when a
long constant loop is dynamic on purpose.
"""
    references = (
        "aws-neuron-sdk nki/deep-dives/nki-dynamic-loops.rst (dynamic loops: body emitted once, register allocation)",
        "aws-neuron-sdk nki/api/nki/language/__init__.py (fori_loop, dynamic_range, affine_range)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_tiles(x):
                out = nl.ndarray((1024, 512), dtype=nl.float32, buffer=nl.shared_hbm)

                def body(i):
                    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x.ap(pattern=[[512, 128], [1, 512]], offset=0, scalar_offset=i))
                    nisa.activation(dst=t, op=nl.exp, data=t)
                    nisa.dma_copy(dst=out.ap(pattern=[[512, 128], [1, 512]], offset=0, scalar_offset=i), src=t)

                nl.fori_loop(0, 8, body)
                return out
            """,
            lines=[15],
            title="current API: fori_loop over a constant 8 trips",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_rows(x):
                rows, cols = x.shape
                out = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in nl.dynamic_range(4096 // 128):
                    t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                    nisa.dma_copy(dst=out[0:128, 0:512], src=t)
                return out
            """,
            lines=[9],
            title="current API: dynamic_range over a bound computed from constants",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def exp_tiles(x):
                out = nl.ndarray((1024, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(8):
                    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, 0:512])
                    nisa.activation(dst=t, op=nl.exp, data=t)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:512], src=t)
                return out
            """,
            title="current API: a static loop the compiler unrolls and pipelines",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_blocks(x, counts):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                n = nisa.register_alloc(0)
                nisa.register_load(n, counts[0:1, 0:1])
                for _ in nl.dynamic_range(n):
                    t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                    nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="current API: the trip count is a register loaded on the device",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = OncePerSite(ctx)
        for kernel in ctx.model.kernels:
            for loop in nest_of(kernel.graph).loops.values():
                if loop.kind not in COUNTED_DYNAMIC or loop.register_bound or loop.trip is None:
                    continue
                trips = const_int(loop.trip)
                if trips is None or trips < 2:
                    continue  # a runtime bound, or a loop that runs at most once
                short = trips <= SHORT_TRIPS
                tail = ("short enough to unroll" if short
                        else "long: keep it dynamic only if the unrolled code would be too large")
                reporter.at_site(
                    loop.site,
                    f"`{loop.header()}` is a dynamic (hardware) loop over a constant {trips} iterations ({tail}): "
                    f"its body is emitted once, so every trip reuses the same tiles and trip i+1 cannot overlap "
                    f"trip i",
                    level=Level.WARNING if short else Level.NOTE,
                    hint=f"use `for i in nl.affine_range({trips}):` (nl.sequential_range if the trips depend on each "
                         f"other); keep fori_loop/dynamic_range for bounds held in a register",
                    kernel=kernel.name,
                )
