"""NKI214 shared-hbm-not-top-level: a legacy shared_hbm tensor is created inside a loop, branch or helper."""

from __future__ import annotations

import ast

from nkilint import astwalk
from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.loops import nest_of
from nkilint.model.scopes import Scopes
from nkilint.model.views import tensors_of
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter


def _calls_nki(ctx: RuleContext, expr: ast.AST) -> bool:
    """The expression calls an NKI API (a value known only on the device)."""
    for node in astwalk.walk(expr):
        if isinstance(node, ast.Call):
            qual = ctx.model.bindings.resolve(node.func)
            if qual is not None and getattr(qual, "is_nki", False):
                return True
    return False


class SharedHbmNotTopLevel(Rule):
    id = "NKI214"
    name = "shared-hbm-not-top-level"
    requires = (Scopes,)
    family = "memory"
    level = Level.ERROR
    summary = "A shared_hbm tensor is created inside a loop, a device-side branch or a helper (legacy NKI)"
    explanation = """
Finds `nl.shared_hbm` allocations in legacy kernels that are not in the
kernel's top-level scope: inside any loop, inside a helper function the
kernel calls, or under an `if` whose condition calls an NKI API (a device
value such as `nl.program_id(0)`; a plain Python `if` is decided while
tracing and is not seen by the compiler). The current `nki.*` compiler has a
related check (nki-library disables it with
`experimental_flags="skip-non-top-level-shared-hbm-check"`), but nki-library
allocates `shared_hbm` outputs in helpers throughout without that flag, so
its exact scope is not documented; nkilint does not report current-API
kernels.

**Why on Trainium:** legacy NKI (`neuronxcc.nki`) creates `nl.shared_hbm`
tensors only in the top-level scope of the kernel: "Creating shared_hbm
tensors inside a loop, under if condition or inside another function called
by the top-level nki kernel is not supported"
(`err_shared_hbm_must_in_kernel_level`).

**Fix:** hoist the `nl.ndarray(..., buffer=nl.shared_hbm)` to the top of
the kernel and pass it (or slices of it) to the loop body or helper.
"""
    references = ("aws-neuron-sdk nki/api/nki.errors.rst at 1db4d74e (err_shared_hbm_must_in_kernel_level)",)
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            def make_output(shape, dtype):
                return nl.ndarray(shape, dtype=dtype, buffer=nl.shared_hbm)

            @nki.jit
            def kernel(x):
                out = make_output((128, 512), nl.float32)
                for i in nl.affine_range(4):
                    scratch = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                    nl.store(scratch, value=nl.load(x))
                nl.store(out, value=nl.load(x))
                return out
            """,
            lines=[5, 11],
            title="legacy API: in a helper and in a loop",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                scratch = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    nl.store(scratch[i], value=nl.load(x))
                nl.store(out, value=nl.load(x))
                return out
            """,
            title="legacy API: hoisted to the top level",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            def make_output(shape, dtype):
                return nl.ndarray(shape, dtype=dtype, buffer=nl.shared_hbm)

            @nki.jit
            def kernel(x):
                out = make_output((128, 512), nl.float32)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="current API: not reported (nki-library does this throughout)",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        if not ctx.model.legacy:
            return
        reporter = Reporter(ctx)
        scopes = ctx.analysis(Scopes)
        for kernel in ctx.model.kernels:
            if kernel.kind != "root":
                continue
            g = kernel.graph
            for t in tensors_of(kernel):
                if t.buffer != "shared_hbm" or t.origin != "alloc":
                    continue
                site = t.site
                if site is None:
                    continue
                where = None
                if site.chain:
                    where = "inside a helper function"
                elif t.loops:
                    outer = nest_of(g).loop(t.loops[0]).site
                    where = f"inside the loop at {ctx.model.line_ref(outer)}" if outer is not None else "inside a loop"
                else:
                    branch = _device_branch(ctx, scopes, kernel.node, site.node)
                    if branch is not None:
                        where = f"under the device-side condition at line {branch.lineno}"
                if where is None:
                    continue
                reporter.at_site(
                    site,
                    f"shared_hbm tensor {t.name} is created {where}; legacy NKI creates shared_hbm tensors only at the "
                    f"kernel's top level",
                    hint="allocate it at the top of the kernel and pass it (or slices of it) down",
                    kernel=kernel.name,
                )


def _device_branch(ctx: RuleContext, scopes: Scopes, kernel_fn: ast.AST, node: ast.AST) -> ast.If | None:
    """The innermost ``if`` of the kernel's own body (not of a nested
    function) whose test calls an NKI API and whose branches hold ``node``."""
    if scopes.enclosing_function(node) is not kernel_fn:
        return None
    for test in scopes.file.conditions_between(node, kernel_fn):
        branch = scopes.parent(test)
        if isinstance(branch, ast.If) and branch.test is test and _calls_nki(ctx, test):
            return branch
    return None
