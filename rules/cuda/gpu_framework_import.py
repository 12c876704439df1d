"""NKI432 gpu-framework-import: a module that defines NKI kernels imports a GPU
framework (triton, numba.cuda, cupy, pycuda)."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.scopes import Scopes
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import CUSTOM_OP, Spot, SpotRule


def gpu_imports(ctx: RuleContext) -> Iterator[Spot]:
    scopes = ctx.analysis(Scopes)
    if not ctx.model.kernels:
        return
    for node in scopes.file.nodes:
        paths: list[str] = []
        if isinstance(node, ast.Import):
            paths = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            paths = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        hits = [p for p in paths if any(p == r or p.startswith(r + ".") for r in gn.GPU_IMPORT_ROOTS)]
        if not hits:
            continue
        mod = hits[-1] if isinstance(node, ast.ImportFrom) and hits[-1] != paths[0] else hits[0]
        yield Spot(node, (
            f"import of {mod} in a module that defines NKI kernels: a GPU framework that is unavailable (or dead code) "
            f"on Trainium, a sign that part of the kernel was not ported; move GPU code to a separate module or make "
            f"the import optional"
        ), Level.NOTE, None)


class GpuFrameworkImport(SpotRule):
    id = "NKI432"
    name = "gpu-framework-import"
    family = "cuda"
    level = Level.NOTE
    summary = "A module that defines NKI kernels imports a GPU framework (triton, numba.cuda, cupy, pycuda)"
    fix_hint = "move the GPU code to a separate module or make the import optional"
    explanation = """
`import triton`, `import triton.language as tl`, `from numba import cuda`,
`import cupy`, `import pycuda...`, `torch.utils.cpp_extension` in a module
that defines NKI kernels. A note: dual-backend modules are legitimate; the
specific rules report any GPU name that reaches kernel code.

**Why on Trainium.** These frameworks are unavailable (or dead weight) on a
Trainium host; an import that survives the port is a strong sign that part
of the kernel, its launcher or its tests still targets the GPU.

**Fix.** Move the GPU implementation to its own module, or import it
lazily/optionally (`try: import triton` in the GPU-only path).
"""
    references = (CUSTOM_OP,)
    examples = (
        invalid(
            """
            import triton
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[1, 2],
            title="current API",
            level=Level.NOTE,
        ),
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(x[0:128, 0:512]))
                return out
            """,
            lines=[1],
            title="legacy API",
        ),
        valid(
            """
            import triton
            import triton.language as tl

            @triton.jit
            def copy_gpu(x_ptr, y_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(y_ptr + offs, tl.load(x_ptr + offs))
            """,
            title="a pure GPU module (no NKI kernels) is not reported",
        ),
    )

    def spots(self, ctx: RuleContext):
        return gpu_imports(ctx)
