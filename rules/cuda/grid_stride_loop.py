"""NKI416 grid-stride-loop: a CUDA grid-stride loop (start at the thread id,
step by the grid size) in NKI kernel code."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.scopes import Scopes, mentions_any
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import LANG_GUIDE, Spot, SpotRule, TILING, header_span
from ._hits import GpuNames, chain_text


_ID_CATEGORIES = (gn.THREAD, gn.BLOCK, gn.PROGRAM_ID)


_SIZE_RX = re.compile(r"blockDim|gridDim|gridsize|num_programs")


def _id_sources(ctx: RuleContext, fn: ast.FunctionDef) -> tuple[set[int], set[str], set[int], set[str]]:
    """GPU id nodes in fn and the names derived from them (three rounds of
    assignments); grid-size nodes and their names."""
    scopes = ctx.analysis(Scopes)
    names = ctx.analysis(GpuNames)
    inside = {id(n) for n in scopes.file.subtree(fn)}
    id_nodes = {id(h.node) for h in names.hits_of(*_ID_CATEGORIES) if id(h.node) in inside}
    size_nodes = {
        id(h.node) for h in names.hits_of(gn.BLOCK, gn.PROGRAM_ID) if id(h.node) in inside and _SIZE_RX.search(chain_text(h.node))
    }
    return id_nodes, scopes.derived(fn, id_nodes, rounds=3), size_nodes, scopes.derived(fn, size_nodes, rounds=3)


def grid_stride_loops(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    names = ctx.analysis(GpuNames)
    if not any(True for _ in names.hits_of(*_ID_CATEGORIES)):
        return
    for fn in device.outermost:
        id_nodes, id_names, size_nodes, size_names = _id_sources(ctx, fn)
        if not id_nodes:
            continue
        for node in device.nodes(fn):
            if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and len(node.iter.args) >= 3:
                start, step = node.iter.args[0], node.iter.args[2]
                if mentions_any(start, id_nodes, id_names) and mentions_any(step, size_nodes, size_names):
                    yield Spot(header_span(ctx, node, node.iter), (
                        f"grid-stride loop over {chain_text(node.target) or 'the index'} (starts at the thread/program "
                        f"id, steps by the grid size): the NKI kernel sees the whole tensor; loop over 128-row tiles "
                        f"with for t in range((n + 127) // 128) and a min()-bounded last tile"
                    ), kernel=(device.owner(node) or fn).name)
            elif isinstance(node, ast.While):
                test_names = {n.id for n in astwalk.walk(node.test) if isinstance(n, ast.Name)}
                for sub in astwalk.walk(node):
                    if (isinstance(sub, ast.AugAssign) and isinstance(sub.op, ast.Add) and isinstance(sub.target, ast.Name)
                            and sub.target.id in test_names and mentions_any(sub.value, size_nodes, size_names)):
                        yield Spot(header_span(ctx, node, node.test), (
                            f"grid-stride while loop ({sub.target.id} += grid size): the NKI kernel sees the whole "
                            f"tensor; loop over 128-row tiles with a min()-bounded last tile instead"
                        ), kernel=(device.owner(node) or fn).name)
                        break


class GridStrideLoop(SpotRule):
    id = "NKI416"
    name = "grid-stride-loop"
    family = "cuda"
    level = Level.ERROR
    summary = "A CUDA grid-stride loop (start at the thread id, step by the grid size) in NKI kernel code"
    fix_hint = "for t in range((n + 127) // 128): process rows t*128 .. min(n, t*128 + 128)"
    explanation = """
`for i in range(cuda.grid(1), n, cuda.gridsize(1))`, `for i in range(pid,
n, tl.num_programs(0))`, or the `while i < n: ...; i += blockDim.x *
gridDim.x` form, in NKI kernel code. Only loops whose start comes from a
GPU thread/program id and whose step from a GPU grid size are reported:
strided loops over compile-time tile lists (`range(0, K, 128)`) are
idiomatic NKI.

**Why on Trainium.** The grid-stride idiom lets a fixed-size GPU grid cover
any `n`. An NKI kernel already sees the whole tensor; tiles are enumerated
explicitly and their sizes are compile-time. The GPU id names do not exist
in NKI, so the loop cannot compile.

**Fix.** `for t in range((n + 127) // 128):` over 128-row tiles with a
`min()`-bounded last tile.
"""
    references = (TILING, LANG_GUIDE)
    examples = (
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def scale_kernel(x, n):
                out = nl.ndarray((n, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in range(cuda.grid(1), n, cuda.gridsize(1)):
                    t = nl.load(x[i, 0:512])
                    nl.store(out[i, 0:512], value=t * 2.0)
                return out
            """,
            lines=[8],
            title="legacy API: numba's grid-stride loop",
        ),
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, n_tiles):
                out = nl.ndarray((n_tiles * 128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                pid = tl.program_id(0)
                step = tl.num_programs(0)
                for t in range(pid, n_tiles, step):
                    tile = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=tile, src=x[t * 128:(t + 1) * 128, :])
                    nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=tile)
                return out
            """,
            lines=[11],
            title="current API: Triton's persistent-kernel stride",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n, f = x.shape
                out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
                for r0 in range(0, n, 128):
                    rows = min(128, n - r0)
                    tile = nl.ndarray((128, f), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=tile[0:rows, :], src=x[r0:r0 + rows, :])
                    nisa.dma_copy(dst=out[r0:r0 + rows, :], src=tile[0:rows, :])
                return out
            """,
            title="a strided loop over compile-time tiles is idiomatic NKI",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n, f = x.shape
                out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
                for t in range(nl.program_id(0), n // 128, nl.num_programs(0)):
                    tile = nl.ndarray((128, f), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=tile, src=x[t * 128:(t + 1) * 128, :])
                    nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=tile)
                return out
            """,
            title="interleaving tiles across the LNC cores with nl.program_id is legitimate",
        ),
    )

    def spots(self, ctx: RuleContext):
        return grid_stride_loops(ctx)
