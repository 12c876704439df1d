"""How the memory rules word live sets, related places and assumptions."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.model import memory as mm
from nkilint.model.graph import Site
from nkilint.versions import V0_3


def site_related(ctx: RuleContext, items: list[tuple[Site | None, str]]) -> list[tuple[ast.AST, str]]:
    """Related locations in this file (others cannot be shown)."""
    out = []
    for site, text in items:
        if site is not None and ctx.model.in_this_file(site):
            out.append((site.node, text))
    return out


def copies_text(mem: mm.KernelMemory, t: mm.TensorMem) -> str:
    if t.copies <= 1:
        return ""
    line = mem.loop_line(t.copies_loop)
    return f" (one per iteration of the loop at line {line}, kept in a list)" if line else " (kept in a list)"


def live_text(mem: mm.KernelMemory, live: list[mm.TensorMem], limit: int = 10) -> str:
    bank = mem.bank_bytes
    ordered = sorted(live, key=lambda t: (-t.footprint(bank), t.start))
    parts = [t.describe(bank) + copies_text(mem, t) for t in ordered[:limit]]
    if len(ordered) > limit:
        parts.append(f"and {len(ordered) - limit} more")
    return "; ".join(parts)


def assumed_text(kernel, ops: list) -> str:
    """The condition under which parameters are in HBM (see views.kernel_role)."""
    if not ops:
        return ""
    names = ", ".join(sorted({o.name for o in ops}))
    return (f" (if {kernel.name} is launched as a top-level kernel: {names} "
            f"{'are its parameters' if len(ops) > 1 else 'is its parameter'}, in HBM)")


def legacy_or_before(ctx: RuleContext, version=V0_3) -> bool:
    """The file uses the legacy API or targets an NKI version before ``version``."""
    return ctx.model.legacy or ctx.nki_version < version
