"""NKI434 program-id-axis: nl.program_id / nl.num_programs asks for a grid axis
>= 1 in current NKI (LNC launches have one axis)."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.rule import invalid, valid

from ._base import LNC, MIGRATION, Spot, SpotRule, nki_name


def program_id_axes(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    if ctx.model.legacy:
        return
    for fn in device.outermost:
        for node in device.nodes(fn):
            if not isinstance(node, ast.Call):
                continue
            name = nki_name(ctx, node.func)
            if name not in ("nki.language.program_id", "nki.language.num_programs"):
                continue
            axis = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in ("axis", "axes")), None)
            if isinstance(axis, ast.Constant) and isinstance(axis.value, int) and axis.value >= 1:
                owner = device.owner(node) or fn
                yield Spot(node, (
                    f"{ast.unparse(node)} asks for SPMD grid axis {axis.value}: current NKI sizes a launch by the "
                    f"logical-NeuronCore degree (1 or 2; a grid that differs from it is slated to become a compile-time "
                    f"error), so axes beyond 0 are leftovers of multi-axis Triton/legacy grids that did the tiling; "
                    f"loop over those tiles inside the kernel"
                ), Level.WARNING, owner.name)


class ProgramIdAxis(SpotRule):
    id = "NKI434"
    name = "program-id-axis"
    family = "cuda"
    level = Level.WARNING
    summary = "nl.program_id / nl.num_programs asks for a grid axis >= 1 in current NKI (LNC launches have one axis)"
    fix_hint = "use nl.program_id(0) only for the LNC split and loop over tiles inside the kernel"
    explanation = """
`nl.program_id(1)`, `nl.num_programs(axis=2)` in a file written against the
current `nki` API. Legacy (`neuronxcc.nki`) code with multi-dimensional
SPMD grids is not reported: there the axes existed.

**Why on Trainium.** Current NKI launches a kernel once per physical core
of a logical NeuronCore: the bracket holds the LNC degree (1 or 2) and
`nl.program_id(0)` identifies the core. The NKI 0.5 migration notice says
an SPMD dimension that differs from the LNC degree will become a
compile-time error. Higher axes are leftovers of multi-dimensional Triton
or legacy SPMD grids that did the tiling (a warning: the grid is
deprecated, not yet rejected).

**Fix.** Loop over the tiles that the extra grid axes enumerated inside the
kernel; keep `nl.program_id(0)` only to split work across the LNC cores.
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
                col = nl.program_id(1)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[8],
            title="current API",
            level=Level.WARNING,
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((256, 1024), dtype=x.dtype, buffer=nl.shared_hbm)
                i = nl.program_id(0)
                j = nl.program_id(1)
                t = nl.load(x[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
                nl.store(out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=t)
                return out
            """,
            title="legacy multi-axis SPMD grid",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((256, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                core = nl.program_id(0)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[core * 128:(core + 1) * 128, :])
                nisa.dma_copy(dst=out[core * 128:(core + 1) * 128, :], src=t)
                return out
            """,
            title="current API, axis 0 (the LNC split)",
        ),
    )

    def spots(self, ctx: RuleContext):
        return program_id_axes(ctx)
