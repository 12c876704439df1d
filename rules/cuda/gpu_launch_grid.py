"""NKI415 gpu-launch-grid: an NKI kernel is launched with a Triton/CUDA grid
(grid lambda, cdiv-sized grid, threads per block)."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.scopes import Scopes
from nkilint.rule import invalid, valid

from ._base import LNC, MIGRATION, Spot, SpotRule, kernel_fn_names, other_name
from ._hits import chain_text


_THREADY = re.compile(r"(?i)thread|warp|block_?dim|tpb")


def _lambda_bound(scopes: Scopes, name: str) -> bool:
    """``name`` is ever assigned a lambda in the file (a Triton grid function)."""
    return any(isinstance(v, ast.Lambda) for v in scopes.assigned_values(name))


def _contains(node: ast.AST, pred) -> bool:
    return any(pred(n) for n in astwalk.walk(node))


def launch_grids(ctx: RuleContext) -> Iterator[Spot]:
    scopes = ctx.analysis(Scopes)
    kernels = kernel_fn_names(ctx, roots_only=True)
    legacy = ctx.model.legacy
    for node in scopes.file.nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)):
            continue
        sub = node.func
        if not (isinstance(sub.value, ast.Name) and sub.value.id in kernels):
            continue
        kname = sub.value.id
        grid = sub.slice
        meaning = (
            "legacy SPMD grids run their instances one after another on one NeuronCore"
            if legacy else "the bracket holds the logical-NeuronCore degree (1 or 2), not a grid"
        )
        if isinstance(grid, ast.Lambda) or (isinstance(grid, ast.Name) and _lambda_bound(scopes, grid.id)):
            yield Spot(grid, (
                f"{kname}[{chain_text(grid) or 'lambda'}] launches an NKI kernel with a Triton grid lambda: {meaning}; "
                f"call {kname}(...) (or {kname}[2](...) for LNC=2) and loop over 128-row tiles inside the kernel"
            ), Level.ERROR, kname)
            continue
        if _contains(grid, lambda n: isinstance(n, ast.Call) and (
                chain_text(n.func).endswith("cdiv") or (other_name(ctx, n.func) or "").startswith("triton."))):
            yield Spot(grid, (
                f"{kname}[...] sizes the launch grid from the data (triton.cdiv): {meaning}; loop over tiles "
                f"inside the kernel instead"
            ), Level.WARNING, kname)
            continue
        items = grid.elts if isinstance(grid, ast.Tuple) else [grid]
        thready = [chain_text(e) for e in items if isinstance(e, (ast.Name, ast.Attribute)) and _THREADY.search(chain_text(e))]
        if thready:
            yield Spot(grid, (
                f"{kname}[...] passes {thready[0]} (threads per block) as a launch dimension: there are no threads on "
                f"Trainium and {meaning}; one instruction processes a whole 128-partition tile"
            ), Level.WARNING, kname)


class GpuLaunchGrid(SpotRule):
    id = "NKI415"
    name = "gpu-launch-grid"
    family = "cuda"
    level = Level.ERROR
    summary = "An NKI kernel is launched with a Triton/CUDA grid (grid lambda, cdiv-sized grid, threads per block)"
    fix_hint = "call kernel(...) (or kernel[2](...) for LNC=2) and loop over 128-row tiles inside the kernel"
    explanation = """
`kernel[grid](...)` where the grid is a Triton grid lambda (`lambda meta:
(triton.cdiv(n, meta['BLOCK']),)`) or a name bound to one (error), a grid
sized from the data with `triton.cdiv`, or a launch dimension that is a
threads-per-block value (warnings). Grids from other expressions are the
migration family's business.

**Why on Trainium.** Since NKI 0.2 the bracket holds one integer, the
logical-NeuronCore degree (1 or 2), which `nl.program_id(0)` tells apart; a
lambda is never a valid launch value. Legacy NKI accepted multi-dimensional
SPMD grids but ran their instances one after another on one NeuronCore, and
had no notion of threads per block.

**Fix.** Call the kernel directly (`kernel(x, y)`, or `kernel[2](x, y)` for
LNC=2) and move the tiling into the kernel body as a loop over 128-row
tiles.
"""
    references = (LNC, MIGRATION)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out

            def launch(x, n):
                grid = lambda meta: ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)
                return copy_kernel[grid](x)
            """,
            lines=[15],
            title="current API: a grid lambda",
            level=Level.ERROR,
        ),
        invalid(
            """
            import triton
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t)
                return out

            def launch(x, n):
                return copy_kernel[triton.cdiv(n, 128)](x)
            """,
            lines=[13],
            title="legacy API: a cdiv-sized grid (warning)",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                i = nl.program_id(0)
                t = nl.load(x[i * 128:(i + 1) * 128, 0:512])
                nl.store(out[i * 128:(i + 1) * 128, 0:512], value=t)
                return out

            def launch(x):
                return copy_kernel[2](x)
            """,
            title="a legacy SPMD grid of integers",
        ),
    )

    def spots(self, ctx: RuleContext):
        return launch_grids(ctx)
