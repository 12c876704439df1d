"""NKI215 hbm-tensor-with-init-value: an HBM tensor is created with an initial value."""

from __future__ import annotations

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.graph import HBM
from nkilint.model.views import tensors_of
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter


class HbmTensorWithInitValue(Rule):
    id = "NKI215"
    name = "hbm-tensor-with-init-value"
    family = "memory"
    level = Level.ERROR
    summary = "An HBM tensor (or, with direct allocation, an on-chip one) is created with an initial value"
    explanation = """
Finds HBM tensors created with an initial value (`nl.zeros`, `nl.ones`,
`nl.full` and their `*_like` forms), and, in legacy kernels using the
direct-allocation API (`ncc.sbuf.mod_alloc` ...), directly allocated
SBUF/PSUM tensors created that way. For the current `nki.*` API the docs do
not say; the finding is a warning there.

**Why on Trainium:** an initial value is written by an on-chip instruction
that the compiler adds. Legacy NKI rejects it for HBM tensors ("Creating HBM
tensor with init value is not supported",
`err_hbm_tensor_with_init_value_not_supported`) and for directly allocated
on-chip tensors
(`err_tensor_creation_on_scratchpad_with_init_value_not_supported`).

**Fix:** create the HBM tensor with `nl.ndarray` and initialize it
explicitly: fill an SBUF tile (`nisa.memset`, legacy `nl.zeros` in SBUF) and
copy it out with `nisa.dma_copy` / `nl.store`.
"""
    references = (
        "aws-neuron-sdk nki/api/nki.errors.rst at 1db4d74e (err_hbm_tensor_with_init_value_not_supported, "
        "err_tensor_creation_on_scratchpad_with_init_value_not_supported)",
    )
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(x):
                out = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(x))
                return out
            """,
            lines=[6],
            title="legacy API: a zero-filled HBM output",
        ),
        valid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def kernel(x):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                zero = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nl.store(out, value=zero)
                return out
            """,
            title="legacy API: zeros in SBUF, stored to HBM",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def kernel(x):
                out = nl.full((128, 512), 1.0, dtype=nl.float32, buffer=nl.shared_hbm)
                return out
            """,
            lines=[7],
            title="current API: a warning (not documented either way)",
            level=Level.WARNING,
        ),
    )

    _INIT = {"zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "rand", "rand_like", "random"}

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        legacy = ctx.model.legacy
        for kernel in ctx.model.kernels:
            for t in tensors_of(kernel):
                allocator = t.api.rpartition(".")[2]
                if t.origin != "alloc" or allocator not in self._INIT:
                    continue
                buffer = t.buffer
                short = "nl." + allocator
                if buffer in HBM:
                    reporter.at_site(
                        t.site,
                        f"{short} creates HBM tensor {t.name} ({buffer}) with an initial value"
                        + ("; legacy NKI does not support it" if legacy else "; NKI documents init values only for "
                           "on-chip tensors"),
                        level=Level.ERROR if legacy else Level.WARNING,
                        hint="use nl.ndarray and write the initial value from an SBUF tile with a DMA",
                        kernel=kernel.name,
                    )
                elif legacy and t.on_chip and getattr(t.address, "how", None) in ("alloc", "mod_alloc"):
                    reporter.at_site(
                        t.site,
                        f"{short} creates directly allocated {buffer.upper()} tensor {t.name} with an initial value; "
                        f"legacy direct allocation does not support it",
                        hint="use nl.ndarray and fill the tile with an instruction (nisa.memset)",
                        kernel=kernel.name,
                    )
