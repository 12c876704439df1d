"""NKI108 transpose-over-limit: a transpose input is larger than the engine transposes."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.views import Op, Operand, ops
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._shapes import LEGACY_ERRORS, SDK_STUBS, api_leaf, free_size, operands, over_always, over_maybe


class TransposeOverLimit(Rule):
    id = "NKI108"
    name = "transpose-over-limit"
    family = "partition"
    level = Level.ERROR
    summary = "A partition/free transpose is larger than its engine handles (128x128 TensorE, 32x32 VectorE)"
    explanation = """
Finds transposes whose input is larger than the engine transposes:
`nisa.nc_transpose` inputs with a partition or (flattened) free size above
the limit of the engine it runs on, and `nl.transpose(x)` inputs that are
not 2-D or have a dimension above 128.

**Why on Trainium:** `nisa.nc_transpose` swaps the partition and free
dimensions of a tile (all free dimensions are flattened first). On the
Tensor Engine it is a matmul with an identity matrix and takes inputs up to
`[128, 128]`; on the Vector Engine (`engine=nisa.engine.vector`) only up to
`[32, 32]`. Without an engine, the compiler picks one, so the input must fit
at least 128x128. `nl.transpose(x)` takes a 2-D tile whose dimensions are
both at most 128 (legacy `err_size_of_dimension_exceed_arch_limit`,
`err_exceed_max_supported_dimension`).

**Fix:** transpose in blocks: loop over 128-column slices
(`x[:, j * 128:(j + 1) * 128]`) into separate PSUM tiles (32x32 blocks on
the Vector Engine), or use a DMA transpose for free-free layouts.
"""
    references = (
        f"{SDK_STUBS} (nc_transpose: tile size)",
        f"{LEGACY_ERRORS} (err_size_of_dimension_exceed_arch_limit, err_exceed_max_supported_dimension)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                x = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                t = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.psum)
                nisa.nc_transpose(dst=t, data=x)
                return t
            """,
            lines=[10],
            title="current API: a 128x512 input",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                x = nl.ndarray((64, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                t = nl.ndarray((64, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.nc_transpose(dst=t, data=x, engine=nisa.engine.vector)
                return t
            """,
            lines=[10],
            title="the Vector Engine transposes at most 32x32",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def tr(a):
                out = nl.ndarray((512, 128), dtype=a.dtype, buffer=nl.shared_hbm)
                x = nl.load(a[0:128, 0:512])
                t = nl.transpose(x)
                return out
            """,
            lines=[8],
            title="legacy nl.transpose of a 128x512 tile",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                x = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=x, src=a)
                for j in range(4):
                    t = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.psum)
                    nisa.nc_transpose(dst=t, data=x[:, j * 128:(j + 1) * 128])
                return t
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        target = ctx.target
        for op in ops(ctx.model, apis=("nki.isa.nc_transpose",)):
            data = next((o for o in operands(op, ("data",)) if o.node.on_chip and o.node.shape_trusted), None)
            if data is None or data.node.shape is None:
                continue
            engine = api_leaf(op.param("engine"))
            if engine is not None and engine.startswith("vector"):
                cap, where = target.vector_transpose_max, "the Vector Engine"
            elif engine is not None and engine.startswith("tensor"):
                cap, where = target.tensor_transpose_max, "the Tensor Engine"
            elif op.param("engine") is None or engine in ("unknown", "unknown_engine"):
                cap, where = target.tensor_transpose_max, "either engine"
            else:
                continue
            p, f = data.node.partition_size, free_size(data.node)
            self._judge(ctx, reporter, op, "nisa.nc_transpose", data, (("partition", p), ("free", f)), cap, where)
        for op in ops(ctx.model, apis=("nki.language.transpose",)):
            x = next((o for o in operands(op, ("x",)) if o.node.on_chip and o.node.shape_trusted), None)
            if x is None:
                continue
            xs = x.node.shape
            if xs is None:
                continue
            if len(xs) != 2:
                reporter.at_site(
                    op.site,
                    f"nl.transpose: {x.node.label} {q.fmt_shape(xs)} has {len(xs)} dimensions; nl.transpose "
                    f"takes a 2-D tile",
                    hint="reshape or slice to a 2-D [P, F] tile, or use nisa.nc_transpose (which flattens free dims)",
                    kernel=op.kernel.name,
                )
                continue
            self._judge(ctx, reporter, op, "nl.transpose", x, (("free", xs[1]),), target.tensor_transpose_max,
                        "the Tensor Engine")

    def _judge(self, ctx, reporter, op: Op, api, operand: Operand, dims, cap, where) -> None:
        shape = q.fmt_shape(operand.node.shape)
        name = operand.node.label
        always = [(n, d) for n, d in dims if d is not None and over_always(d, cap)]
        if always:
            sizes = " and a ".join(f"{n} size of {q.fmt_dim(d)}" for n, d in always)
            reporter.at_site(
                op.site,
                f"{api}: input {name} {shape} has a {sizes}; {where} transposes at most {cap}x{cap} on "
                f"{ctx.target.name}",
                level=Level.ERROR,
                hint=f"transpose {cap}x{cap} blocks in a loop",
                kernel=op.kernel.name,
            )
            return
        maybe = [(n, over_maybe(d, cap)) for n, d in dims if d is not None]
        maybe = [(n, hi) for n, hi in maybe if hi is not None]
        if maybe:
            sizes = " and a ".join(f"{n} size of up to {int(hi)}" for n, hi in maybe)
            reporter.at_site(
                op.site,
                f"{api}: input {name} {shape} may have a {sizes}; {where} transposes at most {cap}x{cap} on "
                f"{ctx.target.name}",
                level=Level.WARNING,
                hint=f"assert the sizes are <= {cap}, or transpose in blocks",
                kernel=op.kernel.name,
            )
