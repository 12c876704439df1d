"""NKI307 strided-dma: DMAs whose HBM side reads short, scattered runs."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import nest_of
from nkilint.model.values import IndexV, SliceV, TupleV, int_binop
from nkilint.rule import Rule, invalid, valid

from . import _dma as dma
from ._ops import slice_step_over_one
from ._report import OncePerSite, operand_text
from ._reuse import indirect, repeating_loop


class StridedDma(Rule):
    id = "NKI307"
    name = "strided-dma"
    family = "pipeline"
    level = Level.WARNING
    summary = "A DMA reads or writes HBM with a strided innermost dimension (element-sized contiguous runs)"
    explanation = """
A DMA whose HBM side does not move contiguous runs: the innermost index is
fixed while an outer dimension is sliced (`x[0:128, 0:64, j]`), the
innermost dimension is stepped (`x[:, ::2]`), or an access pattern
(`.ap()`) has an innermost stride other than 1, or a legacy index
steps by more than one (`x[i_p, i_f * 2]` with `i_f = nl.arange(n)`).
An access-pattern stride may be a name or an expression: it is reported
when every value the code allows is 2 or more (a named constant, a loop
over such values, a parameter an `assert` bounds); a stride that may be 1
(a plain kernel parameter, `C // 256`) is not. One-off transfers of fewer
than 64 elements per partition (a small vector read as a column) are left
out; repeated or larger ones are reported.

**Why on Trainium:** HBM is linear and a DMA moves contiguous runs: each SBUF
partition is a separate destination region, and "if the tensor data slice
within each SBUF partition is not contiguous in the F dimension, more DMA
buffers will need to be unrolled along the F dim" (architecture guide, data
movement between HBM and SBUF). Such an access turns every element into its own
descriptor: runs of 2-4 bytes, far below the 256 B per partition where DMAs are
already severely overhead-bound. "HBM is always more performant when accessed
sequentially" (indexing overview).

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
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def even_columns(x):
                R, C = x.shape
                out = nl.ndarray((1024, 256), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                for i in range(8):
                    t = nl.ndarray((128, C // 2), dtype=nl.bfloat16, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x.ap([[C, 128], [2, C // 2]], offset=i * 128 * C))
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:256], src=t)
                return out
            """,
            lines=[11],
            title="current API: a literal access-pattern stride of 2 with a shape-derived count",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def group_columns(x, n_groups: int):
                R, C = x.shape
                assert n_groups > 1
                out = nl.ndarray((128, 256), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 256), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x.ap([[C, 128], [n_groups, 256]], offset=0))
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[11],
            title="current API: a variable stride that the assert makes at least 2",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def group_columns(x, n_groups: int):
                R, C = x.shape
                out = nl.ndarray((128, 256), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 256), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x.ap([[C, 128], [n_groups, 256]], offset=0))
                nisa.dma_copy(dst=out, src=t)
                nisa.dma_copy(dst=t, src=x.ap([[C, 128], [C // 256, 256]], offset=0))
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="current API: strides that may be 1 (a parameter, C // 256 when C is 256)",
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
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def even_columns(x):
                K, R, C = x.shape
                out = nl.ndarray((8, 128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
                i_p = nl.arange(128)[:, None]
                i_f = nl.arange(256)[None, :]
                for k in nl.affine_range(8):
                    t = nl.load(x[k, i_p, i_f * 2])
                    nl.store(out[k, i_p, i_f], value=t)
                return out
            """,
            lines=[11],
            title="legacy API: an arange index scaled by 2 on the innermost dimension",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def column_blocks(x):
                K, R, C = x.shape
                out = nl.ndarray((8, 128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
                i_p = nl.arange(128)[:, None]
                i_f = nl.arange(256)[None, :]
                for k in nl.affine_range(8):
                    t = nl.load(x[k, i_p, i_f + 256])
                    nl.store(out[k, i_p, i_f], value=t)
                return out
            """,
            title="legacy API: a shifted (not scaled) arange reads contiguous runs",
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
        reporter = OncePerSite(ctx)
        for kernel in model.kernels:
            graph = kernel.graph
            for t in dma.transfers(graph):
                if t.direction not in ("load", "store") or t.kind == "transpose":
                    continue
                hbm = t.hbm
                if indirect(graph, hbm.node_id):
                    continue
                why = _strided(graph, hbm)
                if why is None:
                    continue
                # A one-off gather of a few elements (a small vector loaded as
                # a column) costs little: report repeated or large transfers.
                elems = dma.free_elements(t.onchip) if t.onchip is not None else None
                few = elems is None or (dma.int_bounds(elems) or (0, 0))[0] < 64
                if few and repeating_loop(ctx.model, graph, nest_of(graph), t.op_id) is None:
                    continue
                direction = "reads" if t.direction == "load" else "writes"
                size = dma.itemsize(hbm.dtype) or (dma.itemsize(t.onchip.dtype) if t.onchip is not None else None)
                reporter.at_site(
                    graph.attrs(t.op_id).get("site"),
                    f"DMA {direction} {operand_text(graph, hbm.node_id)} with {why}: every element is its own "
                    f"contiguous run ({size or '2-4'} B){_volume(t, size)}, far below the 256 B per partition "
                    f"where DMAs are already severely overhead-bound",
                    hint="move contiguous rows (innermost HBM dimension innermost in the transfer) and select or "
                         "rearrange on chip with a strided tensor_copy or a TensorE transpose, or transpose the "
                         "HBM layout",
                    kernel=kernel.name,
                )


def _volume(t: dma.Transfer, size: int | None) -> str:
    """', 64 KiB per transfer as 32768 runs' when the transfer's element
    count is known (the bytes only when the element type is)."""
    if t.onchip is None:
        return ""
    parts = dma.exact(dma.partitions(t.onchip))
    free = dma.exact(dma.free_elements(t.onchip))
    if parts is None or free is None or parts * free < 2:
        return ""
    runs = parts * free
    if size is None:
        return f", {runs} runs per transfer"
    return f", {dma.fmt_bytes(runs * size)} per transfer as {runs} runs"


def _slice_step_bounds(item) -> tuple[float, float] | None:
    """The bounds of a slice's step (``x[:, 0:512:step]``), None when the
    item is not a slice with a step."""
    if slice_step_over_one(item):
        step = dma.exact(item.step)
        return (step, step)
    if isinstance(item, SliceV) and not (isinstance(item.step, dma.Const) and item.step.value is None):
        return dma.int_bounds(item.step)
    return None


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
        b_s = dma.int_bounds(stride)
        b_c = dma.int_bounds(count)
        if b_s is None or b_c is None or b_s[0] < 2:
            return None
        # A literal stride states the intent to skip elements, so a symbolic
        # count (``[2, C // 2]``) only has to allow two of them; a symbolic
        # stride needs both bounds, as it may be a layout-dependent 1.
        exact = dma.exact(stride)
        if b_c[1] < 2 or (exact is None and b_c[0] < 2):
            return None
        return f"an access pattern whose innermost stride is {exact or 'at least ' + str(int(b_s[0]))} elements"
    items = dma.hbm_items(graph, hbm)
    base = graph.attrs(hbm.base_id)
    shape = base.get("shape_v")
    if not items or shape is None or len(items) != len(shape):
        return None
    last = items[-1]
    outer_sliced = [i for i, it in enumerate(items[:-1]) if not dma.is_integer_index(it)
                    and (dma.int_bounds(dma.item_extent(it, shape[i]) or dma.Const(0)) or (0, 0))[0] >= 2]
    step_b = _slice_step_bounds(last)
    if step_b is not None and step_b[0] >= 2:
        start = dma.item_start(last)
        stop = shape[-1] if isinstance(last.stop, dma.Const) and last.stop.value is None else last.stop
        span = dma.int_bounds(int_binop(ast.Sub, stop, start)) if start is not None else None
        if span is not None and span[0] > step_b[1]:  # at least two elements picked, whatever the step
            step = dma.exact(last.step)
            return f"a stepped innermost slice (step {step if step is not None else 'at least ' + str(int(step_b[0]))})"
    if isinstance(last, IndexV):
        # Legacy ``x[i_p, i_f * 2]``: a scaled arange on the innermost dimension.
        # A variable scale counts when every value it can take is 2 or more.
        scale = dma.int_bounds(last.stride) if last.stride is not None else None
        extent = dma.int_bounds(last.extent)
        if scale is not None and scale[0] >= 2 and extent is not None and extent[0] >= 2:
            stride = dma.exact(last.stride)
            if stride is not None:
                return f"an innermost index that steps by {stride} elements (an arange scaled by {stride})"
            return f"an innermost index that steps by at least {int(scale[0])} elements (a scaled arange)"
        return None
    if dma.is_integer_index(last) and outer_sliced:
        dim = dma.int_bounds(shape[-1])
        index = dma.int_bounds(last)
        # The dimension has at least two elements (an in-bounds index >= 1 implies it).
        if (dim is not None and dim[0] >= 2) or (index is not None and index[0] >= 1):
            return "the innermost dimension fixed by an integer index while an outer dimension is sliced"
    return None
