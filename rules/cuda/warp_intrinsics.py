"""NKI406 warp-intrinsics: a warp intrinsic or warp-size constant (shfl,
ballot, activemask, warpSize) in NKI kernel code."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.scopes import Scopes
from nkilint.rule import invalid, valid

from .._common import Reporter
from . import _names as gn
from ._base import ARCH, GpuNameRule


WARP_NAMES = {"WARP_SIZE", "warp_size", "WARPSIZE", "kWarpSize", "THREADS_PER_WARP", "threads_per_warp"}


def warp_size_constants(ctx: RuleContext) -> Iterator[tuple[ast.FunctionDef, ast.AST, str]]:
    device = ctx.analysis(DeviceCode)
    scopes = ctx.analysis(Scopes)
    seen: set[int] = set()
    for fn in device.outermost:
        for node in device.nodes(fn):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in WARP_NAMES:
                owner = device.owner(node) or fn
                if id(owner) in seen:
                    continue
                values = scopes.assigned_values(node.id)
                consts = [v.value for v in values if isinstance(v, ast.Constant)]
                if consts and not any(c in (32, 64) for c in consts):
                    continue
                seen.add(id(owner))
                yield owner, node, node.id


class WarpIntrinsics(GpuNameRule):
    id = "NKI406"
    name = "warp-intrinsics"
    family = "cuda"
    level = Level.ERROR
    summary = "A warp intrinsic or warp-size constant (shfl, ballot, activemask, warpSize) in NKI kernel code"
    categories = (gn.WARP,)
    noun = "warp intrinsic"
    fix_hint = "reduce along the free axis with nisa.tensor_reduce; move data across partitions with nc_transpose"
    explanation = """
`cuda.shfl_*_sync`, `cuda.ballot_sync`, `cuda.activemask()`,
`cuda.warpsize`, pasted `__shfl_down_sync`/`warpSize`, and warp-size
constants (`WARP_SIZE = 32`) used in NKI kernel code.

**Why on Trainium.** There are no warps or lanes. Data exchange across
partitions is explicit: `nisa.nc_stream_shuffle` (within 32-partition
quadrants), `nisa.nc_transpose`, or a TensorE matmul with a 0/1 matrix;
within a partition the free axis is plain memory that one instruction
reduces. Intrinsics are errors (undefined or GPU-JIT-only); a warp-size
constant compiles and is reported as a warning because it usually sizes
tiles or reduction steps for 32 lanes instead of 128 partitions.

**Fix.** Express a warp reduction as a free-axis `nisa.tensor_reduce` (or
`nl.sum(t, axis=1)`), and cross-partition sums as a ones-vector matmul or
`nisa.tensor_partition_reduce`.
"""
    references = (ARCH,)
    examples = (
        invalid(
            """
            from numba import cuda
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                v = cuda.shfl_down_sync(0xFFFFFFFF, t, 16)
                nisa.dma_copy(dst=out, src=t[:, 0:1])
                return out
            """,
            lines=[11],
            title="current API: cuda.shfl_down_sync",
            level=Level.ERROR,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            WARP_SIZE = 32

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((WARP_SIZE, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.load(x[0:WARP_SIZE, 0:512])
                nl.store(out, value=nl.sum(t, axis=1))
                return out
            """,
            lines=[8],
            title="legacy API: a warp-size constant sizes the tile (warning, reported once per function)",
            level=Level.WARNING,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def row_sum(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
                nisa.dma_copy(dst=out, src=s)
                return out
            """,
            title="a free-axis reduction",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        super().check(ctx)
        reporter = Reporter(ctx)
        for fn, node, name in warp_size_constants(ctx):
            reporter.at(
                node,
                f"{name} (a warp-size constant, 32 lanes) is used in NKI kernel code ({fn.name}); Trainium tiles "
                f"have {ctx.target.partitions} partitions and no warps: size tiles with nl.tile_size.pmax",
                hint="use nl.tile_size.pmax (128) for the partition extent, or the data's own size",
                level=Level.WARNING,
                kernel=fn.name,
            )
