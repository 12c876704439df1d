"""NKI413 triton-constexpr-parameter: a kernel parameter is annotated
tl.constexpr (Triton meta-parameter)."""

from __future__ import annotations

from nkilint.findings import Level
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import GpuNameRule, LANG_GUIDE
from ._hits import NameHit


class TritonConstexpr(GpuNameRule):
    id = "NKI413"
    name = "triton-constexpr-parameter"
    family = "cuda"
    level = Level.WARNING
    summary = "A kernel parameter is annotated tl.constexpr (Triton meta-parameter)"
    categories = (gn.CONSTEXPR,)
    noun = "meta-parameter annotation"
    fix_hint = "annotate the parameter as int (or drop the annotation)"
    explanation = """
`BLOCK_SIZE: tl.constexpr` on an NKI kernel or helper parameter, or a
`tl.constexpr(...)` value.

**Why on Trainium.** NKI kernels are specialised on the Python values of
their arguments already: "all Python expressions on compile-time values
(integers, booleans, strings, shapes) are evaluated at specialization time"
(language guide), so an int argument is a compile-time constant without any
annotation. The Triton annotation adds a dependency on `triton` and says
nothing to the NKI compiler. Reported as a warning: whether the annotation is
evaluated depends on the caller's Python setup.

**Fix.** Annotate the parameter as `int` (or nothing) and pick the value
from the NKI limits (`nl.tile_size.pmax`, `gemm_moving_fmax`).
"""
    references = (LANG_GUIDE,)
    examples = (
        invalid(
            """
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, BLOCK: tl.constexpr):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[7],
            title="current API",
            level=Level.WARNING,
        ),
        invalid(
            """
            from triton.language import constexpr
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x, ROWS: constexpr = 128):
                out = nl.ndarray((ROWS, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:ROWS, 0:512])
                nl.store(out[0:ROWS, 0:512], value=t)
                return out
            """,
            lines=[6],
            title="legacy API, imported name",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, BLOCK: int = 128):
                out = nl.ndarray((BLOCK, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((BLOCK, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:BLOCK, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="a plain int parameter",
        ),
    )

    def message(self, hit: NameHit) -> str:
        fn = hit.function.name if hit.function is not None else "?"
        what = "annotates a parameter of" if hit.role == "annotation" else "is used in"
        return (
            f"{hit.gpu.shown} (a Triton meta-parameter) {what} NKI kernel code ({fn}); NKI kernels are already "
            f"specialised on Python argument values: use a plain int parameter"
        )
