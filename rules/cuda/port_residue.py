"""NKI433 port-residue: comments and docstrings of a kernel still mention
CUDA/Triton (summary per kernel; off by default)."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.scopes import Scopes
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import Spot, SpotRule, TILING, def_span


_RESIDUE = [(t, re.compile(re.escape(t) if not t[0].isalpha() or "." in t or " " in t else rf"\b{re.escape(t)}", re.I if " " in t else 0))
            for t in gn.RESIDUE_TOKENS]


def residue_tokens(text: str) -> list[str]:
    found = [t for t, rx in _RESIDUE if rx.search(text)]
    # "tl.load" already says "tl."; keep the most specific token of each match.
    return [t for t in found if not any(t != o and t.lower() in o.lower() for o in found)]


def port_residue(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    scopes = ctx.analysis(Scopes)
    comments = ctx.source.comments()
    for fn in device.outermost:
        lines: dict[int, list[str]] = {}
        end = getattr(fn, "end_lineno", fn.lineno) or fn.lineno
        for line, _, text in comments:
            if fn.lineno <= line <= end:
                toks = residue_tokens(text)
                if toks:
                    lines.setdefault(line, []).extend(toks)
        for node in device.nodes(fn):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 3:
                parent = scopes.parent(node)
                if isinstance(parent, ast.keyword) or isinstance(scopes.parent(parent) if parent else None, ast.Call):
                    continue  # names, messages: not prose left from the GPU version
                toks = residue_tokens(node.value)
                if toks:
                    lines.setdefault(node.lineno, []).extend(toks)
        if not lines:
            continue
        counts: dict[str, int] = {}
        for toks in lines.values():
            for t in toks:
                counts[t] = counts.get(t, 0) + 1
        top = ", ".join(f"{t} x{n}" if n > 1 else t for t, n in sorted(counts.items(), key=lambda kv: -kv[1])[:5])
        where = ", ".join(str(n) for n in sorted(lines)[:8]) + (" ..." if len(lines) > 8 else "")
        yield Spot(def_span(ctx, fn), (
            f"{fn.name}: {len(lines)} comment/docstring line(s) still mention CUDA/Triton ({top}) at lines {where}; "
            f"check that GPU assumptions (lockstep threads, zero-filled masks, warp reductions) did not survive the port"
        ), Level.NOTE, fn.name)


class PortResidue(SpotRule):
    id = "NKI433"
    name = "port-residue"
    family = "cuda"
    level = Level.NOTE
    default_enabled = False
    precision = "low"
    summary = "Comments and docstrings of a kernel still mention CUDA/Triton (summary per kernel; off by default)"
    fix_hint = "none required: read the marked regions for surviving GPU assumptions"
    explanation = """
A per-kernel summary of comments, docstrings and prose strings inside NKI
kernel code that mention CUDA or Triton (`threadIdx`, `__syncthreads`,
`tl.load`, `warp`, `shared memory`, `thread block`, `num_warps`, ...),
reported once at the `def` line with the lines involved. Off by default
(enable with `--extend-select NKI433` or `port-residue`) and never more
than a note.

**Why on Trainium.** Comments cannot change behaviour, and porters keep the
original GPU line as a mapping aid; but a cluster of residue marks the
places where GPU assumptions (lockstep threads, zero-filled masked lanes,
warp-level reductions) may have survived in the logic. Docstrings are never
parsed as code (production NKI docstrings contain per-element pseudo-code).

**Fix.** None required; a reviewer reads the marked regions, and removes
stale comments once the port is verified.
"""
    references = (TILING,)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                '''Ported from the Triton kernel: one program per BLOCK of rows.'''
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                # was: offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)   # tl.load(x_ptr + offs, mask=mask)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[6],
            title="current API: three residue lines summarised at the def",
            level=Level.NOTE,
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])   # each threadIdx.x loaded one element
                nl.store(out, value=t)
                return out
            """,
            lines=[5],
            title="legacy API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                '''Copy a [128, 512] tile through SBUF.'''
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)   # one DMA per tile
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="no GPU vocabulary",
        ),
    )

    def spots(self, ctx: RuleContext):
        return port_residue(ctx)
