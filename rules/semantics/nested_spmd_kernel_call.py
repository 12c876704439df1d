"""NKI720 nested-spmd-kernel-call: legacy: a kernel calls another kernel with an SPMD grid (kernel[4, 4](...))."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.exprs import short_text
from nkilint.model.scopes import Scopes
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._kernels import decorated_kernel
from ._messages import ERRORS_DOC


class NestedSpmdKernelCall(Rule):
    id = "NKI720"
    name = "nested-spmd-kernel-call"
    family = "semantics"
    level = Level.ERROR
    requires = (DeviceCode, Scopes)
    summary = "Legacy: a kernel calls another kernel with an SPMD grid (kernel[4, 4](...))"
    explanation = f"""
Finds, in legacy kernels, a call that launches another decorated kernel
over an SPMD grid (`kernel1[4, 4](...)`) from inside a kernel.

**Why on Trainium:** a legacy kernel may call another traced kernel like a
function (`kernel0(...)`), but not launch it over an SPMD grid: that raises
`err_nested_kernel_with_spmd_grid` ("Calling a NKI kernel with a SPMD grid
from another NKI kernel is not supported", {ERRORS_DOC}). (From NKI 0.2 a
kernel may not call a decorated kernel at all, see NKI721.)

**Fix:** launch the grid from host code, or call the inner kernel without a
grid and loop over the work (`for i in nl.affine_range(4)`) inside it,
passing the index it would have read from `nl.program_id`.
"""
    references = (f"{ERRORS_DOC} (err_nested_kernel_with_spmd_grid)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.trace
            def add_tile(a, b, out):
                i = nl.program_id(0)
                t = nl.add(nl.load(a[i]), nl.load(b[i]))
                nl.store(out[i], value=t)

            @nki.jit
            def add_all(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                add_tile[4](a, b, out)
                return out
            """,
            lines=[13],
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.trace
            def add_tile(a, b, out, i):
                t = nl.add(nl.load(a[i]), nl.load(b[i]))
                nl.store(out[i], value=t)

            @nki.jit
            def add_all(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    add_tile(a, b, out, i)
                return out
            """,
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if not ctx.model.legacy:
            return
        scopes = ctx.analysis(Scopes)
        reporter = Reporter(ctx)
        for fn in ctx.analysis(DeviceCode).functions:
            for node in scopes.own_nodes(fn):
                if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Subscript):
                    continue
                found = decorated_kernel(ctx.model, scopes, fn, node.func.value)
                if found is None:
                    continue
                reporter.at(
                    node,
                    f"kernel `{node.func.value.id}` is launched with SPMD grid [{short_text(node.func.slice)}] from "
                    f"inside a kernel (err_nested_kernel_with_spmd_grid)",
                    hint="launch the grid from host code, or call it without a grid inside a loop",
                )

