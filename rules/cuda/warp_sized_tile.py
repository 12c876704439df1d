"""NKI420 warp-sized-tile: an on-chip tile is sized for warps or tensor-core
fragments (16/32 partitions) instead of 128."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.values import const_int
from nkilint.model.views import ops_of, tensors_of
from nkilint.rule import invalid, valid

from ._base import Spot, SpotRule, shape_arg
from ._hits import chain_text


_BLOCKY = re.compile(r"(?i)^(block|tile|warp|thread|wmma|mma)|^(b|t)[mnk]$|_(m|n|k)$|block_?size|warp")


_QUADRANT_APIS = {"nc_stream_shuffle", "nc_transpose", "local_gather", "nc_n_gather", "tensor_partition_reduce"}


def warp_sized_tiles(ctx: RuleContext) -> Iterator[Spot]:
    for kernel in ctx.model.kernels:
        # 32-partition quadrants are a genuine Trainium quantity for these kernels.
        if any(op.short in _QUADRANT_APIS or "tile_position" in op.params for op in ops_of(kernel)):
            continue
        for tensor in tensors_of(kernel):
            if tensor.origin != "alloc" or tensor.buffer not in ("sbuf", "psum"):
                continue
            shape = tensor.shape
            if not shape or len(shape) < 2:
                continue
            p = const_int(shape[0])
            if p not in (16, 32):
                continue
            call = tensor.call
            arg = shape_arg(call) if call is not None else None
            if not isinstance(arg, (ast.Tuple, ast.List)) or not arg.elts:
                continue
            first = arg.elts[0]
            text = chain_text(first) if isinstance(first, (ast.Name, ast.Attribute)) else ""
            square16 = (p == 16 and len(shape) == 2 and const_int(shape[1]) == 16 and isinstance(first, ast.Constant))
            if not (square16 or (text and _BLOCKY.search(text.split(".")[-1]))):
                continue
            why = f"{text} = {p}" if text else "a 16x16 WMMA fragment"
            yield Spot(tensor.site, (
                f"{tensor.buffer.upper()} tile {tensor.name if tensor.has_name else 'tile'} has {p} partitions ({why}), a "
                f"warp-sized GPU tile: engines process {ctx.target.partitions} partitions per instruction, so it uses "
                f"{100 * p // ctx.target.partitions}% of the VectorE/ScalarE lanes and {p} of TensorE's "
                f"{ctx.target.partitions} rows; use nl.tile_size.pmax ({ctx.target.partitions}) rows per tile"
            ), kernel=kernel.name)


class WarpSizedTile(SpotRule):
    id = "NKI420"
    name = "warp-sized-tile"
    family = "cuda"
    level = Level.WARNING
    summary = "An on-chip tile is sized for warps or tensor-core fragments (16/32 partitions) instead of 128"
    fix_hint = "use nl.tile_size.pmax (128) rows per tile"
    explanation = """
An SBUF/PSUM allocation whose partition extent is 16 or 32 and comes from a
GPU block-size name (`BLOCK_M = 32`, `TILE`, `WARP_SIZE`, `BM`) or is a
literal 16x16 tensor-core fragment. Kernels that use quadrant-aware APIs
(`tile_position`, `nc_stream_shuffle`, `nc_transpose`, gathers) are skipped:
32-partition quadrants are a genuine Trainium quantity.

**Why on Trainium.** Engines have 128 lanes (partitions): a 32-partition
tile uses a quarter of VectorE/ScalarE and 32 of TensorE's 128 rows, at
the same instruction cost. Triton/CUDA block shapes were chosen for warps
and tensor-core fragments, not for a 128x128 systolic array.

**Fix.** Use `nl.tile_size.pmax` (128) rows per tile, the stationary free
size `gemm_stationary_fmax` (128) and moving free size `gemm_moving_fmax`
(512) for matmuls.
"""
    references = ("aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst (partition under-use)", "aws-neuron-sdk nki/api/nki.language.tile_size.rst")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            BLOCK_M = 32

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((BLOCK_M, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((BLOCK_M, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:BLOCK_M, :])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[10],
            title="current API: a Triton block size on the partition axis",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def mm_kernel(a):
                out = nl.ndarray((16, 16), dtype=nl.float32, buffer=nl.shared_hbm)
                frag = nl.zeros((16, 16), dtype=nl.float32, buffer=nl.sbuf)
                nl.store(out, value=frag)
                return out
            """,
            lines=[7],
            title="legacy API: a 16x16 WMMA fragment",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            BLOCK_M = 128

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((BLOCK_M, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((BLOCK_M, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:BLOCK_M, :])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="128-partition tiles",
        ),
    )

    def spots(self, ctx: RuleContext):
        return warp_sized_tiles(ctx)
