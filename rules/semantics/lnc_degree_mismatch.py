"""NKI735 lnc-degree-mismatch: a kernel's LNC degree and neuronx-cc's, both set in the file, differ (NCC_EVRF066)."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.lnc import lnc_settings
from nkilint.releases import ERROR, FACTS, WARNING
from nkilint.rule import Rule, invalid, valid

_EVRF066 = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/compiler/error-codes/EVRF066.html"
_LNC = "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.33.1/nki/get-started/about/lnc.html"
_FACT = "spmd-grid-lnc-mismatch"


def _kernel_names(ctx: RuleContext) -> set[str]:
    """Names a bracket launch may call: this file's kernels and the names it imports."""
    return {k.base_name for k in ctx.model.kernels} | set(ctx.bindings.names)


class LncDegreeMismatch(Rule):
    id = "NKI735"
    name = "lnc-degree-mismatch"
    family = "semantics"
    level = Level.ERROR
    summary = "A kernel's LNC degree and neuronx-cc's, both set in this file, differ"
    explanation = f"""
Reports a kernel launched with one Logical NeuronCore (LNC) degree while
the same file sets neuronx-cc to another: the kernel's degree from a
bracket launch `kernel[2](...)` or `os.environ["NEURON_LOGICAL_NC_CONFIG"]`,
the compiler's from `--lnc` in `os.environ["NEURON_CC_FLAGS"]` or a
`compiler_args=[..., "--lnc", "1"]` list. Only values written in the file
count: what the shell or the launcher sets is not visible to nkilint, and
the defaults (kernel LNC 1, compiler LNC 2 on trn2 and later) are not
reported.

**Why on Trainium:** the LNC degree is a property of the whole compiled
graph: with LNC 2 the compiler emits instructions for both physical
NeuronCores of a logical core, and every NKI kernel embedded in the model
must be specialized for the same degree. Since NKI 0.7 (SDK 2.33) neuronx-cc
rejects a mismatch with NCC_EVRF066 ("NKI kernel ... is configured with
LNC=N, but neuronx-cc is using LNC=M"); SDK 2.31 announced the check, and
there it is a warning.

**Fix:** set `NEURON_LOGICAL_NC_CONFIG` to the compiler's degree (and drop
the bracket, which is being deprecated), or change `--lnc` to the
kernel's.

Sources: {_EVRF066}; {_LNC}.
"""
    references = (_EVRF066, _LNC)
    examples = (
        invalid(
            """
            import os
            import nki
            import nki.isa as nisa
            import nki.language as nl

            os.environ["NEURON_CC_FLAGS"] = "--lnc=1 --target=trn2"

            @nki.jit
            def copy(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=out, src=a)
                return out

            def run(x):
                return copy[2](x)
            """,
            lines=[15],
            title="launched at LNC 2 while NEURON_CC_FLAGS sets --lnc=1",
        ),
        invalid(
            """
            import os
            import torch_neuronx
            from kernels import rmsnorm

            os.environ["NEURON_LOGICAL_NC_CONFIG"] = "2"

            def trace(model, x):
                return torch_neuronx.trace(model, x, compiler_args=["--lnc", "1"])
            """,
            lines=[5],
            title="kernels at LNC 2, the traced model compiled at LNC 1",
        ),
        valid(
            """
            import os
            import nki
            import nki.isa as nisa
            import nki.language as nl

            os.environ["NEURON_LOGICAL_NC_CONFIG"] = "2"
            os.environ["NEURON_CC_FLAGS"] = "--lnc=2"

            @nki.jit
            def copy(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                nisa.dma_copy(dst=out, src=a)
                return out

            def run(x):
                return copy(x)
            """,
            title="both degrees 2",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        status = FACTS.status(_FACT, ctx.release).status
        if status not in (ERROR, WARNING):
            return
        level = Level.ERROR if status is ERROR else Level.WARNING
        kernel, compiler = lnc_settings(ctx.source.nodes)
        if not kernel or not compiler:
            return  # most files: decided without the model
        names = _kernel_names(ctx)
        kernel = [s for s in kernel if s.callee is None or s.callee in names]
        degrees = {c.degree for c in compiler}
        if len(degrees) != 1:
            return  # the file sets the compiler both ways: which one applies is not visible
        wanted = compiler[0]
        for setting in kernel:
            if setting.degree == wanted.degree:
                continue
            when = ("rejected by neuronx-cc with NCC_EVRF066" if level is Level.ERROR
                    else "a compile error (NCC_EVRF066) from SDK 2.33")
            ctx.report(
                setting.node,
                f"`{setting.how}` gives the kernel LNC {setting.degree} while line "
                f"{getattr(wanted.node, 'lineno', '?')} sets neuronx-cc to LNC {wanted.degree} (`{wanted.how}`): "
                f"every kernel of a compiled model must use the compiler's LNC degree; {when}",
                hint=f"set NEURON_LOGICAL_NC_CONFIG to {wanted.degree} (and launch without the bracket), "
                     f"or change --lnc to {setting.degree}",
                level=level,
            )
