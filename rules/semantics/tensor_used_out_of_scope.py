"""NKI709 tensor-used-out-of-scope: legacy: a tensor created inside an if/else/for block is used after the block."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._blocks import LegacyBlockScopes
from ._messages import ERRORS_DOC


class TensorUsedOutOfScope(Rule):
    id = "NKI709"
    name = "tensor-used-out-of-scope"
    family = "semantics"
    level = Level.ERROR
    requires = (LegacyBlockScopes,)
    summary = "Legacy: a tensor created inside an if/else/for block is used after the block"
    explanation = f"""
Finds, in legacy kernels, a tensor created inside an `if`, `else` or `for`
block that the kernel reads after the block ends — even when both branches
of an `if` create it.

**Why on Trainium:** legacy NKI scopes tensors more strictly than Python:
the `if`, `else` and `for` blocks it keeps as control flow open a scope,
and a tensor created inside one may not be used after the block. The
frontend raises `err_local_variable_used_out_of_scope` ("Local variable ...
is referenced outside of its parent scope", {ERRORS_DOC}). The same happens
when a loop rebinds an outer tensor (`data = data + t` inside the loop, see
NKI710) and the kernel reads `data` after the loop.

Scopes are the bodies of loops over `range`, `nl.affine_range` and
`nl.sequential_range`, and of `if`/`else` whose condition depends on such a
loop's variable (the catalogue's example: `if i < 2:` inside
`for i in range(4)`). An `if` on specialization-time values (flags,
shapes, `nisa.get_nc_version()`) is resolved while tracing and opens no
scope — the SDK's reference flash-attention kernel binds tiles under
`if use_dma_transpose ...` and uses them after. Loops over Python sequences
and `nl.static_range` (unrolled while tracing) and `while` loops (the
catalogue names if/else/for, and its own do-while example rebinds an outer
tensor inside a `while`) are not treated as scopes either. (The NKI 0.2+
compiler follows Python scoping for static loops and branches; only
tensors created in `fori_loop` / `while_loop` bodies stay local there, see
NKI705.)

**Fix:** create the tensor before the block (`tmp = nl.ndarray(shape,
dtype=...)`) and fill it inside with `tmp[...] = ...`.
"""
    references = (f"{ERRORS_DOC} (err_local_variable_used_out_of_scope)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def pick(a, b):
                c = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                for i in range(4):
                    if i < 2:
                        tmp = nl.load(a[i])
                    else:
                        tmp = nl.load(b[i])
                    nl.store(c[i], tmp)
                return c
            """,
            lines=[12],
            title="a tile created in both branches of an if, stored after it",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl
            import neuronxcc.nki.isa as nisa

            @nki.jit
            def accumulate(ptr):
                out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                data = nl.zeros((128, 128), dtype=nl.float32)
                for i in nl.sequential_range(4):
                    i_tile = nisa.iota(i, dtype=nl.uint32).broadcast_to(data.shape)
                    data = data + i_tile
                nl.store(out, value=data)
                return out
            """,
            lines=[12],
            title="a loop rebinds an outer tensor; the kernel reads it after the loop",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def pick(a, b):
                c = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
                for i in range(4):
                    tmp = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
                    if i < 2:
                        tmp[...] = nl.load(a[i])
                    else:
                        tmp[...] = nl.load(b[i])
                    nl.store(c[i], tmp)
                return c
            """,
            title="declared before the if, filled with tmp[...] =",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if not ctx.model.legacy:
            return
        reporter = Reporter(ctx)
        for fn, report in ctx.analysis(LegacyBlockScopes).reports:
            for item in report.out_of_scope:
                d = item.binding
                where = {"if": "`if` block", "else": "`else` block", "for": "`for` loop"}.get(
                    d.block_kind, "block")
                reporter.at(
                    item.load,
                    f"tensor `{item.load.id}` is bound inside the {where} starting on line {d.block_line} (line "
                    f"{getattr(d.node, 'lineno', '?')}) and used after that block; legacy NKI tensors are local to "
                    f"their block (err_local_variable_used_out_of_scope)",
                    hint=f"create `{item.load.id}` before the block (nl.ndarray) and assign it with "
                    f"`{item.load.id}[...] = ...` inside",
                )

