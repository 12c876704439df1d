"""NKI102 onchip-rank-below-2: an SBUF or PSUM tensor has fewer than two dimensions."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import query as q
from nkilint.model.graph import ON_CHIP
from nkilint.model.values import const_int
from nkilint.model.views import Tensor, tensors
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter


class OnChipRankBelowTwo(Rule):
    id = "NKI102"
    name = "onchip-rank-below-2"
    family = "partition"
    level = Level.ERROR
    summary = "An SBUF or PSUM tensor has fewer than two dimensions"
    explanation = """
Finds SBUF and PSUM allocations with fewer than two dimensions (a 1-D or
0-D shape written out at the allocation). HBM tensors may have any rank.

**Why on Trainium:** an on-chip tile is always at least two-dimensional:
the partition dimension first, then one or more free dimensions
(`[P, F...]`). A 1-D allocation in SBUF or PSUM has no free dimension and
the compiler rejects it ("Insufficient rank").

**Fix:** give the tile an explicit partition dimension: `(1, 512)` for a
single row, or better `(128, 4)` to spread the 512 values over all
partitions.
"""
    references = (
        "aws-neuron-sdk nki/get-started/nki-language-guide.rst (on-chip tensors are at least 2-D)",
        "aws-neuron-sdk general/nki/nki_known_issues.rst at commit 0521004c (Insufficient rank)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def kernel(a):
                acc = nl.ndarray((512,), dtype=nl.float32, buffer=nl.sbuf)
                return acc
            """,
            lines=[6],
            title="current API: a 1-D SBUF tensor",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(a):
                out = nl.ndarray((1, 128), dtype=a.dtype, buffer=nl.shared_hbm)
                acc = nl.zeros((128,), dtype=nl.float32)
                nl.store(out, value=acc)
                return out
            """,
            lines=[7],
            title="legacy API: nl.zeros defaults to SBUF",
        ),
        valid(
            """
            import nki
            import nki.language as nl

            @nki.jit
            def kernel(a):
                acc = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.sbuf)
                flat = nl.ndarray((512,), dtype=nl.float32, buffer=nl.shared_hbm)
                return flat
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for t in tensors(ctx.model, buffers=ON_CHIP, origins=("alloc",)):
            shape = t.shape
            if shape is None or len(shape) >= 2 or not _literal_rank(t, shape):
                continue
            rank = len(shape)
            first = q.fmt_dim(shape[0]) if shape else "1"
            reporter.at_site(
                t.site,
                f"{t.buffer.upper()} tensor {t.name} is {rank}-D {q.fmt_shape(shape)}; "
                f"on-chip tensors need a partition dimension and at least one free dimension",
                hint=f"allocate it as (1, {first}) or spread it over partitions, e.g. (128, {first} // 128)",
                kernel=t.kernel.name,
            )


def _literal_rank(t: Tensor, shape) -> bool:
    """The rank is certain: the shape is written as a tuple/list literal, or
    every dimension is an exact number. (A shape passed through an opaque
    value, ``nl.ndarray(cfg.shape, ...)``, may be read as one dimension.)"""
    call = t.call
    if call is None or t.api.endswith("_like"):
        return False
    arg = next((k.value for k in call.keywords if k.arg == "shape"), call.args[0] if call.args else None)
    if isinstance(arg, (ast.Tuple, ast.List)):
        return not any(isinstance(e, ast.Starred) for e in arg.elts)
    return all(const_int(d) is not None for d in shape)
