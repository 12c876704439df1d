"""NKI430 power-of-two-padding: a block size is rounded up to a power of two
(triton.next_power_of_2, 1 << ceil(log2(n)))."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import MIGRATION, Spot, SpotRule, other_name
from ._hits import GpuNames, chain_text


def _is_log2_ceil(node: ast.AST, ctx: RuleContext) -> bool:
    for n in astwalk.walk(node):
        if isinstance(n, ast.Call):
            name = other_name(ctx, n.func) or chain_text(n.func)
            if name.endswith("log2") or (isinstance(n.func, ast.Attribute) and n.func.attr == "bit_length"):
                return True
    return False


def pow2_padding(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    names = ctx.analysis(GpuNames)
    for hit in names.hits_of(gn.POW2):
        fn = device.owner(hit.node) or hit.function
        yield Spot(hit.call or hit.node, _pow2_message(chain_text(hit.node), fn), kernel=fn.name if fn else None)
    for fn in device.outermost:
        for node in device.nodes(fn):
            if isinstance(node, ast.BinOp) and (
                (isinstance(node.op, ast.LShift) and isinstance(node.left, ast.Constant) and node.left.value == 1)
                or (isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Constant) and node.left.value == 2)
            ) and _is_log2_ceil(node.right, ctx):
                owner = device.owner(node) or fn
                yield Spot(node, _pow2_message(ast.unparse(node), owner), kernel=owner.name)


def _pow2_message(text: str, fn: ast.FunctionDef | None) -> str:
    return (
        f"{text} rounds a block size up to a power of two in NKI kernel code ({fn.name if fn else '?'}): Triton needs "
        f"power-of-two arange extents, NKI does not; the padding wastes SBUF and, without masks, reads or writes past "
        f"the data; use the exact extent and a min()-bounded last tile"
    )


class PowerOfTwoPadding(SpotRule):
    id = "NKI430"
    name = "power-of-two-padding"
    family = "cuda"
    level = Level.WARNING
    summary = "A block size is rounded up to a power of two (triton.next_power_of_2, 1 << ceil(log2(n)))"
    fix_hint = "use the exact extent and a min()-bounded last tile"
    explanation = """
`triton.next_power_of_2(n)`, `1 << math.ceil(math.log2(n))` or `2 **
math.ceil(math.log2(n))` in NKI kernel code, typically the Triton softmax
`BLOCK_SIZE = triton.next_power_of_2(n_cols)`.

**Why on Trainium.** Triton needs power-of-two `arange` extents and masks
the excess; NKI tiles take any extent. Without masks (removed in current
NKI) the padded block reads and writes past the data, and in any case it
wastes SBUF bytes per partition. Algorithms that really need powers of two
(FFT, bitonic sort) can suppress the finding.

**Fix.** Use the exact extent (`n_cols`) for the free dimension; tile the
partition dimension by 128 with a `min()`-bounded last tile.
"""
    references = (MIGRATION,)
    examples = (
        invalid(
            """
            import triton
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n_rows, n_cols = x.shape
                BLOCK = triton.next_power_of_2(n_cols)
                out = nl.ndarray((n_rows, n_cols), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, n_cols), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, :])
                nisa.dma_copy(dst=out[0:128, :], src=t)
                return out
            """,
            lines=[9],
            title="current API",
        ),
        invalid(
            """
            import math
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                n_rows, n_cols = x.shape
                block = 1 << math.ceil(math.log2(n_cols))
                out = nl.ndarray((128, n_cols), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:n_cols])
                nl.store(out, value=t)
                return out
            """,
            lines=[8],
            title="legacy API",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                n_rows, n_cols = x.shape
                out = nl.ndarray((n_rows, n_cols), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, n_cols), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, :])
                nisa.dma_copy(dst=out[0:128, :], src=t)
                return out
            """,
            title="exact extents",
        ),
    )

    def spots(self, ctx: RuleContext):
        return pow2_padding(ctx)
