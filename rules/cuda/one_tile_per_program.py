"""NKI417 one-tile-per-program: a kernel computes one tile per program
(nl.program_id(0) * TILE) with no loop over tiles."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.scopes import Scopes, mentions_any
from nkilint.model.views import View
from nkilint.rule import invalid, valid

from ._base import LNC, Spot, SpotRule, nki_name, word_in


def one_tile_per_program(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    scopes = ctx.analysis(Scopes)
    model = ctx.model
    for kernel in model.kernels:
        if kernel.kind != "root":
            continue
        graph = kernel.graph
        if any(True for _ in graph.loops()) or graph.truncated:
            continue
        fn = kernel.node
        pid_calls = [
            n for n in device.nodes(fn)
            if isinstance(n, ast.Call) and nki_name(ctx, n.func) == "nki.language.program_id"
        ]
        if not pid_calls:
            continue
        pid_ids = {id(c) for c in pid_calls}
        pid_names = scopes.derived(fn, pid_ids, rounds=3, chained=True)
        if any(isinstance(n, ast.Assert) and "num_programs" in ast.unparse(n) for n in device.nodes(fn)):
            continue
        tiled = None
        for node in device.nodes(fn):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
                if mentions_any(node, pid_ids, pid_names):
                    tiled = node
                    break
        if tiled is None:
            continue
        # the program id must select the HBM slice (a view's index names it)
        hbm_views = (View(graph, vid) for vid, _ in graph.views())
        used = any(
            view.buffer in ("hbm", "shared_hbm", "private_hbm")
            and any(word_in(name, view.index) for name in pid_names | {"program_id"})
            for view in hbm_views
        )
        if not used:
            continue
        if model.legacy:
            msg = (
                f"{kernel.name} computes one tile per program ({ast.unparse(tiled)}) with no loop over tiles: legacy "
                f"SPMD programs run one after another on one NeuronCore, so the grid buys nothing; a 128-row tile "
                f"loop inside the kernel is the portable form"
            )
            level = Level.NOTE
        else:
            msg = (
                f"{kernel.name} computes one tile per program ({ast.unparse(tiled)}) with no loop over tiles: a "
                f"launch has at most {max(ctx.target.lnc_max, 1)} programs (the LNC degree), so only that many "
                f"tiles are ever processed; loop over 128-row tiles and split the loop with nl.program_id(0)"
            )
            level = Level.WARNING
        yield Spot(tiled, msg, level, kernel.name)


class OneTilePerProgram(SpotRule):
    id = "NKI417"
    name = "one-tile-per-program"
    family = "cuda"
    level = Level.WARNING
    summary = "A kernel computes one tile per program (nl.program_id(0) * TILE) with no loop over tiles"
    fix_hint = "wrap the body in a loop over 128-row tiles; keep nl.program_id(0) only to split that loop across cores"
    explanation = """
A launched kernel that offsets its HBM accesses by `nl.program_id(...) *
TILE` and has no loop at all: the Triton shape "each program owns one
block", with the grid doing the tiling.

**Why on Trainium.** Since NKI 0.2 a launch has at most as many programs as
the logical NeuronCore has physical cores (1 or 2), so such a kernel
processes at most two tiles whatever the input size — a warning. In legacy
NKI a larger SPMD grid was accepted but its instances ran one after another
on one core, so the structure buys nothing — a note there.

**Fix.** Wrap the body in a loop over 128-row tiles; keep
`nl.program_id(0)` / `nl.num_programs()` only to split that loop between
the cores of an LNC. A kernel whose input is one tile per core by contract
can say so with `assert x.shape[0] <= 128 * nl.num_programs()`.
"""
    references = (LNC, "aws-neuron-sdk general/nki/programming_model.rst at 0521004c (SPMD instances run serially)")
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add_kernel(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                pid = nl.program_id(0)
                row0 = pid * 128
                ta = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=ta, src=a[row0:row0 + 128, :])
                nisa.dma_copy(dst=tb, src=b[row0:row0 + 128, :])
                nisa.tensor_tensor(dst=ta, data1=ta, data2=tb, op=nl.add)
                nisa.dma_copy(dst=out[row0:row0 + 128, :], src=ta)
                return out
            """,
            lines=[9],
            title="current API: a warning",
            level=Level.WARNING,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def add_kernel(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                i = nl.program_id(0)
                ta = nl.load(a[i * 128:(i + 1) * 128, 0:512])
                tb = nl.load(b[i * 128:(i + 1) * 128, 0:512])
                nl.store(out[i * 128:(i + 1) * 128, 0:512], value=ta + tb)
                return out
            """,
            lines=[8],
            title="legacy API: a note (SPMD grids are legal there)",
            level=Level.NOTE,
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def add_kernel(a, b):
                n, f = a.shape
                out = nl.ndarray((n, f), dtype=a.dtype, buffer=nl.shared_hbm)
                for t in range(nl.program_id(0), n // 128, nl.num_programs(0)):
                    ta = nl.ndarray((128, f), dtype=a.dtype, buffer=nl.sbuf)
                    tb = nl.ndarray((128, f), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=ta, src=a[t * 128:(t + 1) * 128, :])
                    nisa.dma_copy(dst=tb, src=b[t * 128:(t + 1) * 128, :])
                    nisa.tensor_tensor(dst=ta, data1=ta, data2=tb, op=nl.add)
                    nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, :], src=ta)
                return out
            """,
            title="a tile loop split across the LNC cores",
        ),
    )

    def spots(self, ctx: RuleContext):
        return one_tile_per_program(ctx)
