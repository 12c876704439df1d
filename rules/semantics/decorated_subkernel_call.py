"""NKI721 decorated-subkernel-call: NKI 0.2: a kernel calls a function that is itself decorated with @nki.jit."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid
from nkilint.versions import V0_2

from .._common import Reporter
from ._kernels import decorated_kernel


class DecoratedSubkernelCall(Rule):
    id = "NKI721"
    name = "decorated-subkernel-call"
    family = "semantics"
    level = Level.ERROR
    requires = (DeviceCode, Scopes)
    summary = "NKI 0.2: a kernel calls a function that is itself decorated with @nki.jit"
    explanation = """
Finds, when the target is NKI 0.2, calls from inside a kernel to a function
that is itself decorated as a kernel (`@nki.jit`, also
`@nki.jit(mode='trace')`).

**Why on Trainium:** the NKI 0.2 compiler inlines sub-kernels: a function
called from a kernel must be a plain (undecorated) function. Calling an
`@nki.jit` function (even `@nki.jit(mode='trace')`, fine in NKI 0.1) from
inside a kernel fails with an error about classes needing to inherit from
`nl.NKIObject`; the migration guide's step "Remove nki.jit decorator on
sub-kernels" covers it (`nki/migration/index.rst`, NKI 0.1 to 0.2). Legacy
kernels may call decorated kernels (without an SPMD grid, see NKI720).

The rule runs when the target is NKI 0.2 (`--nki-version 0.2`). The docs
do not say that later versions lift the restriction, but aws-neuron/
nki-library (2026, NKI 0.4+) calls `@nki.jit(mode="trace")` kernels from
kernels throughout its MoE code, so nkilint does not report it for 0.3+.

**Fix:** drop the decorator from the sub-kernel; where the same function is
also launched on its own, decorate at the host call site instead:
`nki.jit(helper)(x)`.
"""
    references = ("aws-neuron-sdk nki/migration/index.rst (Remove nki.jit decorator on sub-kernels)",)
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale_tile(dst, src):
                nisa.activation(dst=dst, op=nl.copy, data=src, scale=2.0)

            @nki.jit
            def scale(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                scale_tile(t, t)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[14],
            nki_version="0.2",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            def scale_tile(dst, src):
                nisa.activation(dst=dst, op=nl.copy, data=src, scale=2.0)

            @nki.jit
            def scale(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                scale_tile(t, t)
                nisa.dma_copy(dst=out, src=t)
                return out

            standalone = nki.jit(scale_tile)
            """,
            nki_version="0.2",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if ctx.model.legacy or ctx.model.version != V0_2:
            return
        scopes = ctx.analysis(Scopes)
        reporter = Reporter(ctx)
        for fn in ctx.analysis(DeviceCode).functions:
            for node in scopes.own_nodes(fn):
                if not isinstance(node, ast.Call):
                    continue
                callee = node.func.value if isinstance(node.func, ast.Subscript) else node.func
                found = decorated_kernel(ctx.model, scopes, fn, callee)
                if found is None:
                    continue
                _, deco = found
                reporter.at(
                    node,
                    f"`{callee.id}` is decorated with @{deco} and called from inside a kernel; the NKI 0.2 compiler "
                    f"requires sub-kernels to be undecorated functions (error: classes must inherit from NKIObject)",
                    hint=f"remove the decorator from `{callee.id}` (decorate at host call sites: nki.jit({callee.id}))",
                )

