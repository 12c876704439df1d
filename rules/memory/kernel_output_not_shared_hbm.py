"""NKI216 kernel-output-not-shared-hbm: a kernel returns a tensor that is not in shared HBM."""

from __future__ import annotations

import ast

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.graph import ON_CHIP
from nkilint.model.scopes import Scopes
from nkilint.model.views import Tensor, kernel_role, tensors_of
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from ._text import legacy_or_before


class KernelOutputNotSharedHbm(Rule):
    id = "NKI216"
    name = "kernel-output-not-shared-hbm"
    requires = (Scopes,)
    family = "memory"
    level = Level.ERROR
    summary = "A kernel returns an on-chip tile instead of an HBM tensor (or, from NKI 0.3, a helper-built nl.hbm output)"
    explanation = """
Finds kernels that return a tensor they allocate themselves in SBUF or PSUM,
or (from NKI 0.3) in `nl.hbm` instead of `nl.shared_hbm`. A decorated
kernel's own `nl.hbm` output is reported (with a safe fix) by NKI613
`output-not-shared-hbm` in the migration family; this rule reports `nl.hbm`
outputs of functions launched with `nki.jit(f)` and of helpers.

**Why on Trainium:** a kernel's outputs are HBM tensors the caller reads
after the kernel ends. Returning an SBUF or PSUM tile is never valid ("the
input and output parameters to NKI kernels must be HBM tensor references";
legacy known issue "top-level tensors must be on HBM"). From NKI 0.3, "all
kernel output (return) tensors must be allocated with
`buffer=nl.shared_hbm`. Using `nl.hbm` for output tensors will cause
compilation failures."

**Fix:** allocate the output with
`nl.ndarray(shape, dtype=..., buffer=nl.shared_hbm)`, copy the result tile
into it (`nisa.dma_copy` / legacy `nl.store`), and return the HBM tensor.
"""
    references = (
        "aws-neuron-sdk nki/migration/index.rst (Output tensors must use nl.shared_hbm, NKI 0.3)",
        "aws-neuron-sdk nki/get-started/about/memory-hierarchy-overview.rst (kernel parameters are HBM)",
    )
    examples = (
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                return t
            """,
            lines=[9],
            title="current API: returning the SBUF tile",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.hbm)
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="an nl.hbm output is NKI613's (migration) to report",
        ),
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_kernel(x):
                y = nl.exp(nl.load(x))
                return y
            """,
            lines=[7],
            title="legacy API: returning an SBUF tile",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.exp(nl.load(x)))
                return out
            """,
            title="legacy API: stored into a shared_hbm output",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        hbm_is_error = not legacy_or_before(ctx)
        scopes = ctx.analysis(Scopes)
        for kernel in ctx.model.kernels:
            role = kernel_role(ctx.model, kernel)
            if role not in ("top", "maybe"):
                continue
            by_name: dict[str, list[Tensor]] = {}
            for t in tensors_of(kernel):
                site = t.site
                if t.origin in ("alloc", "result") and site is not None and not site.chain and t.has_name:
                    by_name.setdefault(t.name, []).append(t)
            returns = [n for n in scopes.own_nodes(kernel.node) if isinstance(n, ast.Return) and n.value is not None]
            for ret in returns:
                values = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
                for value in values:
                    if not isinstance(value, ast.Name) or value.id not in by_name:
                        continue
                    buffers = {t.buffer for t in by_name[value.id]}
                    if len(buffers) != 1:
                        continue
                    buffer = buffers.pop()
                    if buffer in ON_CHIP:
                        message = f"kernel {kernel.name} returns {value.id}, a {buffer.upper()} tile; kernel outputs must be in HBM"
                    elif buffer in ("hbm", "private_hbm") and hbm_is_error and kernel.decorator is None:
                        # A decorated kernel's own nl.hbm output is NKI613's (migration,
                        # with a fix); launched functions and helpers are seen only here.
                        message = (f"{kernel.name} returns {value.id}, allocated in {buffer}, as a kernel output; from "
                                   f"NKI 0.3 kernel outputs must be allocated with buffer=nl.shared_hbm "
                                   f"(target NKI {ctx.nki_version})")
                    else:
                        continue
                    if role == "maybe":
                        message += (f" (if {kernel.name} is launched as a top-level kernel; an @nki.jit function "
                                    f"called from another kernel may return on-chip tiles)")
                    reporter.at(
                        ret, message, kernel=kernel.name, level=Level.WARNING if role == "maybe" else Level.ERROR,
                        hint=f"allocate {value.id} with buffer=nl.shared_hbm (copy on-chip results into it) and return it",
                    )
