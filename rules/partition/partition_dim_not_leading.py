"""NKI103 partition-dim-not-leading: a legacy par_dim behind block dimensions, or par_dim in the current API."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.bindings import Gen
from nkilint.model.graph import ON_CHIP
from nkilint.model.views import tensors
from nkilint.releases import ALLOWED, ERROR, FACTS
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._shapes import LEGACY_ERRORS


class PartitionDimNotLeading(Rule):
    id = "NKI103"
    name = "partition-dim-not-leading"
    family = "partition"
    level = Level.ERROR
    summary = "nl.par_dim used as a block dimension (not first), or at all in nki.* code"
    explanation = """
Finds on-chip tensors whose partition dimension is not the left-most one:
legacy *block dimensions* in front of `nl.par_dim`
(`nl.ndarray((8, nl.par_dim(128), 512), ...)`), and any use of `par_dim`
in the new `nki.*` namespace (NKI 0.2+), which has no `par_dim` at all.

**Why on Trainium:** the partition dimension of an on-chip tensor must be
its left-most dimension. Block dimensions gave warnings in Neuron SDK
2.23/2.24 and are a compile error from SDK 2.25 ("The leading dimension of
SBUF/PSUM tensors must be the partition dimension", legacy
`err_leading_dimension_of_tensor_must_be_partition`). The level follows
the target release (release fact `block-dimension`): nothing up to SDK
2.22, a warning at 2.23 and 2.24, an error from 2.25.

Where block tensors still compile (up to SDK 2.24), such a tensor passed
whole to a compute API (`nl.add(blocks, 32)`) is an error of its own: an
operand must be a tile whose first dimension is the partition dimension
(`err_failed_to_infer_tile_from_local_tensor`); index one block,
`blocks[i]`. From 2.25 the allocation is the error and the only report.

**Fix:** allocate one tile per block (a list of tiles, or allocate inside
the loop), or fold the block into a free dimension: `(8, par_dim(128), 512)`
becomes `(128, 8, 512)`. In `nki.*` code drop `par_dim` and write the
partition size as the first dimension.
"""
    references = (
        "aws-neuron-sdk nki/migration/index.rst (removing block dimensions)",
        "aws-neuron-sdk about-neuron/announcements/neuron2.x/announce-eos-block-dimension-nki.rst",
        f"{LEGACY_ERRORS} (err_leading_dimension_of_tensor_must_be_partition)",
        f"{LEGACY_ERRORS} (err_failed_to_infer_tile_from_local_tensor)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                buf = nl.ndarray((8, nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
                return out
            """,
            lines=[7],
            title="legacy API: a block dimension in front of par_dim",
        ),
        invalid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def kernel(a):
                buf = nl.ndarray((nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
                return buf
            """,
            lines=[6],
            title="current API: nl.par_dim does not exist in nki.language",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                buf = nl.ndarray((nl.par_dim(128), 8, 512), dtype=a.dtype, buffer=nl.sbuf)
                return out
            """,
            title="legacy API: par_dim first is fine",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((8, 8), dtype=nl.float32, buffer=nl.shared_hbm)
                blocks = nl.zeros((4, nl.par_dim(8), 8), dtype=nl.float32, buffer=nl.sbuf)
                c = nl.add(blocks, 32)
                nl.store(out, value=c[0])
                return out
            """,
            lines=[8],
            sdk="2.22",
            title="SDK 2.22 (block dimensions allowed): the block tensor passed whole to nl.add",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((8, 8), dtype=nl.float32, buffer=nl.shared_hbm)
                blocks = nl.zeros((4, nl.par_dim(8), 8), dtype=nl.float32, buffer=nl.sbuf)
                c = nl.ndarray((4, nl.par_dim(8), 8), dtype=nl.float32, buffer=nl.sbuf)
                for i in range(4):
                    c[i] = nl.add(blocks[i], 32)
                nl.store(out, value=c[0])
                return out
            """,
            sdk="2.22",
            title="SDK 2.22: each block indexed, a tile with the partition dimension first",
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def kernel(a):
                bufs = [nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf) for _ in range(8)]
                return bufs[0]
            """,
            title="current API: a list of tiles instead of a block dimension",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        model = ctx.model
        current_calls = []
        # Cheap pre-filter: most files never mention par_dim.
        nodes = ctx.source.nodes if ctx.source is not None and "par_dim" in ctx.source.text else ()
        for node in nodes:
            if isinstance(node, ast.Call):
                qual = model.bindings.resolve(node.func)
                if qual is not None and qual.name == "nki.language.par_dim" and qual.gen is Gen.CURRENT:
                    current_calls.append(node)
        for node in current_calls:
            reporter.at(
                node,
                "nl.par_dim does not exist in nki.language (NKI 0.2+): the partition dimension is always the first "
                "dimension of an on-chip tensor",
                hint="drop par_dim and put the partition size first; fold block dimensions into free dimensions",
            )
        current_lines = {n.lineno for n in current_calls}
        # Block dimensions: a compiler warning from SDK 2.23, an error from
        # 2.25 (release fact "block-dimension").
        block = FACTS.status("block-dimension", ctx.release)
        if block.status is not ERROR:
            # Where block tensors still compile, one passed whole to a compute
            # API is the fault (from 2.25 the allocation is, reported below).
            _report_whole_block_operands(model, reporter)
        if block.status is ALLOWED:
            return
        if block.status is ERROR:
            level, when = Level.ERROR, f"are a compile error since Neuron SDK {block.since.minor}"
        else:
            nxt = block.upcoming
            level = Level.WARNING
            when = f"are deprecated since Neuron SDK {block.since.minor}" + (
                f" and a compile error from {nxt.since}" if nxt is not None else "")
        for t in tensors(model, buffers=ON_CHIP, origins=("alloc",)):
            axis = t.partition_axis
            if axis <= 0:
                continue
            site = t.site
            if site is not None and model.in_this_file(site) and getattr(site.node, "lineno", 0) in current_lines:
                continue
            shape = t.shape or ()
            shown = ", ".join(
                (f"par_dim({q.fmt_dim(d)})" if i == axis else q.fmt_dim(d)) for i, d in enumerate(shape)
            )
            reporter.at_site(
                site,
                f"{t.buffer.upper()} tensor {t.name} ({shown}) has par_dim at dimension "
                f"{axis}: block dimensions in front of the partition dimension {when}",
                level=level,
                hint="allocate one tile per block (a list, or inside the loop), or fold the block into a free "
                "dimension: (P, B, F)",
                kernel=t.kernel.name,
            )


# Calls that move data (a whole block tensor may be a DMA's source or
# destination); every other nki.language / nki.isa call computes on tiles.
_TRANSFERS = frozenset({"load", "store", "dma_copy", "load_transpose2d", "ndarray", "zeros", "ones", "full", "empty"})


def _report_whole_block_operands(model, reporter: Reporter) -> None:
    """A legacy tensor with block dimensions in front of its partition
    dimension read whole by a compute API: the frontend cannot make a tile
    of it (err_failed_to_infer_tile_from_local_tensor)."""
    for t in tensors(model, buffers=ON_CHIP, origins=("alloc",)):
        axis = t.partition_axis
        if axis <= 0:
            continue
        graph = t.graph
        for _, op_id, _edge in graph.edges_of(t.id, "reads"):
            op = graph.attrs(op_id)
            api = str(op.get("api") or "")
            short = api.rsplit(".", 1)[-1]
            if not api.startswith(("nki.language.", "nki.isa.")) or short in _TRANSFERS:
                continue
            site = op.get("site")
            if site is None or not model.in_this_file(site):
                continue
            reporter.at_site(
                site,
                f"`{t.name}` is passed whole to {short}(...), but it has block dimensions in front of its "
                f"partition dimension (par_dim at dimension {axis}): a compute API takes tiles whose first "
                f"dimension is the partition dimension (err_failed_to_infer_tile_from_local_tensor)",
                level=Level.ERROR,
                hint=f"index one block (`{t.name}[i]`, partition dimension first) and loop over the blocks",
                kernel=t.kernel.name,
            )
