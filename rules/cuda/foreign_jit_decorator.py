"""NKI407 foreign-jit-decorator: nKI kernel code is decorated with a GPU JIT
(@triton.jit, @cuda.jit, cupyx rawkernel)."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.rule import Rule, invalid, valid

from .._common import Reporter
from . import _names as gn
from ._base import LANG_GUIDE
from ._hits import GpuNames, chain_text


def foreign_jit_decorators(ctx: RuleContext) -> Iterator[tuple[ast.FunctionDef, ast.AST, str]]:
    names = ctx.analysis(GpuNames)
    for fn in ctx.analysis(DeviceCode).functions:
        for deco in fn.decorator_list:
            chain = deco.func if isinstance(deco, ast.Call) else deco
            gpu, _ = names.classify(chain)
            if gpu is not None and gpu.category == gn.JIT:
                yield fn, deco, "@" + chain_text(chain)


class ForeignJitDecorator(Rule):
    id = "NKI407"
    name = "foreign-jit-decorator"
    family = "cuda"
    level = Level.ERROR
    summary = "NKI kernel code is decorated with a GPU JIT (@triton.jit, @cuda.jit, cupyx rawkernel)"
    explanation = """
A function whose body is NKI code (it calls `nki.language` / `nki.isa`, or
is reached from an NKI kernel) carries a GPU JIT decorator such as
`@triton.jit`, `@numba.cuda.jit`, `@cupyx.jit.rawkernel` or Pallas'
`pallas_call`, possibly stacked with `@nki.jit`.

**Why on Trainium.** The decorator hands the function to the wrong
toolchain: Triton/numba/cupyx compile Python for NVIDIA GPUs and reject (or
never see) NKI calls; stacked with `@nki.jit` the two wrappers fight over
the same function.

**Fix.** Decorate the kernel with `@nki.jit` only (helpers it calls need no
decorator) and keep the GPU version in a separate module.
"""
    references = (LANG_GUIDE,)
    examples = (
        invalid(
            """
            import triton
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @triton.jit
            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[6],
            title="current API: @triton.jit stacked on @nki.jit",
        ),
        invalid(
            """
            from numba import cuda
            import neuronxcc.nki.language as nl

            @cuda.jit
            def add_kernel(a, b):
                ta = nl.load(a[0:128, 0:512])
                tb = nl.load(b[0:128, 0:512])
                return nl.add(ta, tb)
            """,
            lines=[4],
            title="legacy API: NKI body under @cuda.jit",
        ),
        valid(
            """
            import triton
            import triton.language as tl
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @triton.jit
            def copy_gpu(x_ptr, y_ptr, BLOCK: tl.constexpr):
                offs = tl.arange(0, BLOCK)
                tl.store(y_ptr + offs, tl.load(x_ptr + offs))

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="a pure Triton kernel next to the NKI kernel is host code for this family",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        reporter = Reporter(ctx)
        for fn, deco, shown in foreign_jit_decorators(ctx):
            reporter.at(
                deco,
                f"{fn.name} is NKI kernel code but is decorated with {shown}, a GPU JIT; "
                f"{gn.REPLACE_JIT}",
                hint="remove the GPU decorator; keep @nki.jit on the kernel only",
                kernel=fn.name,
            )
