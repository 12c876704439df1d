"""NKI304 serialized-loop: a legacy sequential loop whose iterations are independent."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import nest_of
from nkilint.rule import Rule, invalid, valid

from . import _serial as serial
from ._report import OncePerSite, old_loop_semantics


class SerializedLegacyLoop(Rule):
    id = "NKI304"
    name = "serialized-loop"
    family = "pipeline"
    level = Level.WARNING
    summary = "Legacy NKI: a sequential_range/range loop whose iterations are independent (use affine_range)"
    explanation = """
The rule reports `sequential_range` and `range` loops whose iterations the
model proves independent: every tensor the loop writes is allocated in its
body, or each iteration writes (and reads back) its own block of it, or it
is a matmul accumulation into PSUM; no Python variable carries a value from
one iteration to the next; every call in the body is understood. A loop
whose only instructions fill constants (memsets of accumulator tiles) has
nothing to overlap and is left out. From NKI 0.3 on, every static loop is unrolled and the iterator no longer matters,
so the rule is off there.

**Why on Trainium:** In legacy NKI (`neuronxcc.nki`, and NKI 0.2), the loop
iterator tells the compiler what it may do across iterations: `nl.affine_range`
declares the iterations independent, so the compiler may pipeline them across
engines (and vectorize), while `nl.sequential_range` "informs Neuron compiler
to respect inter-loop dependency and perform much more conservative loop-level
optimizations". A Python `range()` is turned into `sequential_range()` by the
compiler. The programming model calls `affine_range` "the default loop iterator
choice, when the loop has no loop-carried dependency" (associative reductions
such as matmul accumulation into PSUM do not count).

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
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def init_blocks(x):
                out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
                blocks = []
                for b in range(4):
                    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.memset(dst=acc, value=0.0)
                    blocks.append(acc)
                for b in nl.affine_range(4):
                    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[0:128, b * 512:(b + 1) * 512])
                    nisa.tensor_tensor(dst=blocks[b], data1=blocks[b], data2=t, op=nl.add)
                    nisa.dma_copy(dst=out[0:128, b * 512:(b + 1) * 512], src=blocks[b])
                return out
            """,
            title="NKI 0.2: a loop that only memsets its tiles has nothing to overlap",
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
        if not old_loop_semantics(ctx):
            return
        model = ctx.model
        reporter = OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            if kernel.error or graph.truncated:
                continue
            lf = nest_of(graph)
            for loop_id, loop in lf.loops.items():
                if loop.kind not in ("range", "sequential_range") or not loop.may_repeat():
                    continue
                if any(lf.loops[a].dynamic for a in loop.ancestors if a in lf.loops):
                    continue
                if serial.only_fills(graph, lf, loop):
                    continue  # a nest of memsets: nothing to overlap
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
