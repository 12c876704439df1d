"""NKI422 bank-conflict-padding: an on-chip tile is padded by one column
against shared-memory bank conflicts ((T, T + 1), PAD)."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.values import const_int
from nkilint.model.views import tensors
from nkilint.rule import invalid, valid

from ._base import ARCH, Spot, SpotRule, shape_arg


def padded_tiles(ctx: RuleContext) -> Iterator[Spot]:
    for tensor in tensors(ctx.model, buffers=("sbuf", "psum"), origins=("alloc",)):
        call = tensor.call
        arg = shape_arg(call) if call is not None else None
        if not isinstance(arg, (ast.Tuple, ast.List)) or len(arg.elts) < 2:
            continue
        shape = tensor.shape or ()
        p = const_int(shape[0]) if shape else None
        f = const_int(shape[-1]) if shape else None
        last = arg.elts[-1]
        plus_one = (isinstance(last, ast.BinOp) and isinstance(last.op, ast.Add) and isinstance(last.right, ast.Constant)
                    and last.right.value == 1 and ast.unparse(last.left) == ast.unparse(arg.elts[0]))
        literal = p is not None and f == p + 1 and p in (16, 32, 64, 128) and isinstance(last, ast.Constant)
        if not (plus_one or literal):
            continue
        yield Spot(tensor.site, (
            f"{tensor.buffer.upper()} tile {tensor.name if tensor.has_name else 'tile'} is padded ({ast.unparse(arg)}) "
            f"against shared-memory bank conflicts: SBUF has no banks to conflict on, the padding wastes bytes per "
            f"partition and breaks the square shape nisa.nc_transpose / matmul expect; drop the padding"
        ), kernel=tensor.kernel.name)


class BankConflictPadding(SpotRule):
    id = "NKI422"
    name = "bank-conflict-padding"
    family = "cuda"
    level = Level.WARNING
    summary = "An on-chip tile is padded by one column against shared-memory bank conflicts ((T, T + 1), PAD)"
    fix_hint = "drop the padding: allocate (T, T)"
    explanation = """
SBUF/PSUM allocations shaped `(T, T + 1)`, a literal `(32, 33)`, or with a
`PAD`/`SKEW` name in a free dimension: the CUDA transpose trick against
shared-memory bank conflicts.

**Why on Trainium.** SBUF partitions are independent memories with no
banks for threads to conflict on; the extra column wastes bytes per
partition and breaks the square shape that `nisa.nc_transpose`,
`nisa.dma_transpose` and matmul tiles expect. Real algorithmic halos
(convolution borders of `K - 1`) are not reported.

**Fix.** Allocate `(T, T)`; transpose with `nisa.nc_transpose` (TensorE up
to 128x128, VectorE up to 32x32) or `nisa.dma_transpose`.
"""
    references = (ARCH,)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            T = 32

            @nki.jit
            def transpose_kernel(x):
                out = nl.ndarray((T, T), dtype=x.dtype, buffer=nl.shared_hbm)
                tile = nl.ndarray((T, T + 1), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=tile[:, 0:T], src=x[0:T, 0:T])
                nisa.dma_copy(dst=out, src=tile[:, 0:T])
                return out
            """,
            lines=[10],
            title="current API",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def transpose_kernel(x):
                out = nl.ndarray((32, 32), dtype=x.dtype, buffer=nl.shared_hbm)
                tile = nl.zeros((32, 33), dtype=x.dtype, buffer=nl.sbuf)
                nl.store(out, value=tile[:, 0:32])
                return out
            """,
            lines=[7],
            title="legacy API: literal (32, 33)",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            K = 3

            @nki.jit
            def conv_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                tile = nl.ndarray((128, 512 + K - 1), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=tile, src=x[0:128, 0:514])
                nisa.dma_copy(dst=out, src=tile[:, 0:512])
                return out
            """,
            title="a convolution halo is not bank-conflict padding",
        ),
    )

    def spots(self, ctx: RuleContext):
        return padded_tiles(ctx)
