"""NKI217 psum-subtract-accumulation: `psum_tile -= matmul(...)`, which PSUM cannot accumulate."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model import dataflow as df
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter

_MATMULS = ("matmul", "nc_matmul")


class PsumSubtractAccumulation(Rule):
    id = "NKI217"
    name = "psum-subtract-accumulation"
    family = "memory"
    level = Level.WARNING
    summary = "`psum_tile -= matmul(...)`: PSUM accumulation only adds, so the subtraction is a separate VectorE pass"
    explanation = """
Finds `acc -= nl.matmul(...)` (or `-= nisa.nc_matmul(...)` with a returned
tile, legacy API) where `acc` is a PSUM tile, usually in a contraction
loop written as if PSUM accumulated a difference. A subtraction of a
matmul result into any other tile, and other updates of a PSUM tile
(`acc -= bias`), are not reported. The current API's
`... -= nisa.nc_matmul(...)` is an error of NKI610 (the call returns no
tile).

**Why on Trainium:** PSUM's near-memory accumulation is controlled only by
TensorE, and every `nc_matmul` either overwrites the bank data or adds its
output to it element-wise (architecture guide, "Near-memory accumulation
in PSUM"); VectorE and ScalarE see PSUM as plain memory. There is no
subtracting accumulation: `acc -= matmul(...)` has to land the product in
a second PSUM tile and run a `tensor_tensor` subtract on VectorE, whose
two inputs "cannot both reside in PSUM" (`nki.isa.tensor_tensor`), every
iteration. The `+=` form is free; this one costs a PSUM bank and a
VectorE pass (and possibly a copy) per matmul. The compiler's handling of
the operator form is not documented, so this is a warning, not an error.
Every release and target: the accumulation mechanism is the same from
trn1 to trn3.

**Fix:** negate one operand once, outside the loop (`neg_b = nl.negative(b)`
or `nisa.tensor_scalar(..., op0=nl.multiply, operand0=-1.0)`), and
accumulate with `acc += nl.matmul(a, neg_b)`; or accumulate the positive
sum and subtract it once after the loop.
"""
    references = (
        "aws-neuron-sdk nki/guides/architecture/trainium_inferentia2_arch.rst (Near-memory accumulation in PSUM)",
        "aws-neuron-sdk nki/api/nki/isa/__init__.py (tensor_tensor: data1 and data2 cannot both reside in PSUM)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def residual_mm(a, b, c):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(4):
                    at = nl.load(a[k * 128:(k + 1) * 128, 0:128])
                    bt = nl.load(b[k * 128:(k + 1) * 128, 0:512])
                    acc -= nl.matmul(at, bt, transpose_x=True)
                nl.store(out, value=nl.copy(acc))
                return out
            """,
            lines=[11],
            title="legacy API: a matmul subtracted into a PSUM accumulator",
            nki_version="0.1",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def residual_mm(a, b, c):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range(4):
                    at = nl.load(a[k * 128:(k + 1) * 128, 0:128])
                    bt = nl.negative(nl.load(b[k * 128:(k + 1) * 128, 0:512]))
                    acc += nl.matmul(at, bt, transpose_x=True)
                nl.store(out, value=nl.copy(acc))
                return out
            """,
            title="legacy API: one operand negated, the product accumulated with +=",
            nki_version="0.1",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def residual_mm(a, b, c):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                res = nl.load(c[0:128, 0:512])
                for k in nl.affine_range(4):
                    at = nl.load(a[k * 128:(k + 1) * 128, 0:128])
                    bt = nl.load(b[k * 128:(k + 1) * 128, 0:512])
                    res -= nl.matmul(at, bt, transpose_x=True)
                nl.store(out, value=res)
                return out
            """,
            title="legacy API: a matmul subtracted from an SBUF tile (an ordinary VectorE subtract)",
            nki_version="0.1",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for kernel, graph in ctx.model.graphs():
            for op, data in graph.ops():
                site = data.get("site")
                node = site.node if site is not None else None
                # The model records ``acc -= value`` as a subtract op at the
                # augmented assignment, reading ``dst`` and ``value``.
                if df.short(data.get("api")) != "subtract" or not isinstance(node, ast.AugAssign) or \
                        not isinstance(node.op, ast.Sub):
                    continue
                ins = dict(df.reads(graph, op))
                dst, value = ins.get("dst"), ins.get("value")
                if dst is None or value is None or graph.attrs(df.base(graph, dst)).get("buffer") != "psum":
                    continue
                makers = df.writers(graph, value)
                if not makers or not all(df.short(graph.attrs(m).get("api")) in _MATMULS for m in makers):
                    continue
                name = graph.attrs(df.base(graph, dst)).get("name") or "the PSUM tile"
                reporter.at_site(
                    site,
                    f"`{name} -= {df.short(graph.attrs(makers[0]).get('api'))}(...)` into PSUM: TensorE accumulates "
                    f"into PSUM only by adding, so the product lands in a second PSUM tile and a VectorE subtract "
                    f"(whose inputs cannot both be in PSUM) runs every time, instead of a free accumulation",
                    hint="negate one operand once (nl.negative, or tensor_scalar multiply by -1.0) and accumulate "
                         "with +=, or subtract the accumulated sum once after the loop",
                    kernel=kernel.name,
                )
