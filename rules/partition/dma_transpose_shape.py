"""NKI109 dma-transpose-shape: a dma_transpose with unsupported axes, rank or hardware-DGE shape."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.values import const_int
from nkilint.model.views import Op, Operand, ops
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._shapes import SDK_STUBS, api_leaf, const_tuple, operands, over_always


_DMA_TRANSPOSE_AXES = {(1, 0), (2, 1, 0), (3, 1, 2, 0)}


class DmaTransposeShape(Rule):
    id = "NKI109"
    name = "dma-transpose-shape"
    family = "partition"
    level = Level.ERROR
    summary = "nisa.dma_transpose with axes, ranks or (HWDGE) shapes the DMA engines do not support"
    explanation = """
Finds `nisa.dma_transpose` calls that break its documented shape rules:

* `axes` is one of `(1, 0)`, `(2, 1, 0)`, `(3, 1, 2, 0)`: only 2-D, 3-D and
  4-D sources;
* since NKI 0.4, `dst` has the same rank as `src`;
* with `dge_mode=nisa.dge_mode.hwdge` (hardware DGE): a 2-D source has
  `src.shape[0] == 16`; a 3-D/4-D source has `src.shape[0]` in
  `{1, 2, 4, 8, 16}` and `src.shape[0] * src.shape[-2]` a multiple of 16; and
  `src.shape[-1] <= 128` (it becomes the partition dimension).

**Why on Trainium:** `nisa.dma_transpose` (NeuronCore-v3+) moves the
innermost source dimension onto the partitions inside the DMA engine, which
supports only these permutations and, with hardware descriptor generation,
only these block shapes.

**Fix:** pass one of the supported `axes`, give `dst` the rank of `src`,
and for hardware DGE tile the source into `[16, <=128]` blocks; otherwise
leave `dge_mode` to the compiler.
"""
    references = (
        f"{SDK_STUBS} (dma_transpose)",
        "aws-neuron-sdk nki/migration/index.rst (0.3 -> 0.4: dma_transpose dst rank)",
        "aws-neuron-sdk release-notes/components/nki.rst (0.6: src.shape[-1] <= 128)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                t = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_transpose(dst=t, src=a[0:64, 0:128], axes=(0, 1))
                return t
            """,
            lines=[8],
            title="axes (0, 1) is not a transpose the DMA supports",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                t = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_transpose(dst=t, src=a[0:64, 0:128], dge_mode=nisa.dge_mode.hwdge)
                return t
            """,
            lines=[8],
            title="hardware DGE: a 2-D source needs 16 rows",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def tr(a):
                out = nl.ndarray((64, 4, 16), dtype=a.dtype, buffer=nl.shared_hbm)
                t = nisa.dma_transpose(a[0:16, 0:4, 0:64], axes=(1, 2, 0))
                nl.store(out, value=t)
                return out
            """,
            lines=[8],
            title="legacy API: (1, 2, 0) is not a supported permutation",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def tr(a):
                t = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
                for i in range(4):
                    nisa.dma_transpose(dst=t[:, i * 16:(i + 1) * 16], src=a[i * 16:(i + 1) * 16, 0:128],
                                       dge_mode=nisa.dge_mode.hwdge)
                return t
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        current = not ctx.model.legacy and ctx.nki_version.minor >= 4
        for op in ops(ctx.model, apis=("nki.isa.dma_transpose",)):
            ends = {o.param: o for o in operands(op, ("src", "dst"))}
            src, dst = ends.get("src"), ends.get("dst")
            ss = src.node.shape if src is not None and src.node.shape_trusted else None
            axes = const_tuple(op.param("axes"))
            if axes is not None and axes not in _DMA_TRANSPOSE_AXES:
                reporter.at_site(
                    op.site,
                    f"nisa.dma_transpose: axes={axes} is not supported; the DMA transposes with (1, 0), (2, 1, 0) or "
                    f"(3, 1, 2, 0) only",
                    hint="use one of the supported permutations (and a 2-D, 3-D or 4-D source)",
                    kernel=op.kernel.name,
                )
                continue
            if ss is not None and axes is not None and len(axes) != len(ss):
                reporter.at_site(
                    op.site,
                    f"nisa.dma_transpose: axes={axes} has {len(axes)} entries but src {src.node.label} "
                    f"{q.fmt_shape(ss)} is {len(ss)}-D",
                    hint="give the permutation of the source's rank",
                    kernel=op.kernel.name,
                )
                continue
            if ss is not None and not 2 <= len(ss) <= 4:
                reporter.at_site(
                    op.site,
                    f"nisa.dma_transpose: src {src.node.label} {q.fmt_shape(ss)} is {len(ss)}-D; the DMA "
                    f"transposes 2-D, 3-D and 4-D sources only",
                    hint="reshape the source to 2-D [rows, cols]",
                    kernel=op.kernel.name,
                )
                continue
            ds = dst.node.shape if dst is not None and dst.node.shape_trusted else None
            if current and ss is not None and ds is not None and len(ss) != len(ds):
                reporter.at_site(
                    op.site,
                    f"nisa.dma_transpose: dst {dst.node.label} {q.fmt_shape(ds)} is {len(ds)}-D but src "
                    f"{src.node.label} {q.fmt_shape(ss)} is {len(ss)}-D; since NKI 0.4 they must have the "
                    f"same rank",
                    hint="give dst the same rank as src (add unit dimensions)",
                    kernel=op.kernel.name,
                )
                continue
            if api_leaf(op.param("dge_mode")) == "hwdge" and ss is not None:
                self._hwdge(ctx, reporter, op, src, ss)

    def _hwdge(self, ctx, reporter, op: Op, src: Operand, ss) -> None:
        name, shown = src.node.label, q.fmt_shape(ss)
        first, last = const_int(ss[0]), ss[-1]
        problems = []
        if len(ss) == 2 and first is not None and first != 16:
            problems.append(f"a 2-D source must have src.shape[0] == 16 (it is {first})")
        if len(ss) in (3, 4) and first is not None:
            if first not in (1, 2, 4, 8, 16):
                problems.append(f"src.shape[0] must be 1, 2, 4, 8 or 16 (it is {first})")
            else:
                second = const_int(ss[-2])
                if second is not None and (first * second) % 16:
                    problems.append(f"src.shape[0] * src.shape[-2] = {first * second} must be a multiple of 16")
        if over_always(last, ctx.target.partitions):
            problems.append(f"src.shape[-1] = {q.fmt_dim(last)} becomes the partition dimension and must be <= "
                            f"{ctx.target.partitions}")
        if problems:
            reporter.at_site(
                op.site,
                f"nisa.dma_transpose with hardware DGE: src {name} {shown}: " + "; ".join(problems),
                hint="tile the source into [16, <=128] blocks, or let the compiler choose dge_mode",
                kernel=op.kernel.name,
            )
