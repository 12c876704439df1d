"""NKI414 gpu-launch-options: warp/stage/autotune launch options (num_warps,
num_stages, @triton.autotune) on NKI kernels."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.scopes import Scopes
from nkilint.rule import invalid, valid

from .._common import Reporter
from . import _names as gn
from ._base import GpuNameRule, kernel_fn_names, other_name
from ._hits import chain_text


def launch_option_sites(ctx: RuleContext) -> Iterator[tuple[ast.AST, str, str | None]]:
    device = ctx.analysis(DeviceCode)
    scopes = ctx.analysis(Scopes)
    kernels = kernel_fn_names(ctx)
    for fn in device.outermost:
        for node in device.nodes(fn):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                for a in args.posonlyargs + args.args + args.kwonlyargs:
                    if a.arg in gn.LAUNCH_KEYWORDS:
                        yield a, (
                            f"parameter {a.arg} of {node.name} is a GPU launch option: warps, pipeline stages and "
                            f"CTAs do not exist on Trainium; tile sizes come from nl.tile_size (pmax 128, "
                            f"gemm_moving_fmax 512)"
                        ), node.name
    for node in scopes.file.nodes:
        if not isinstance(node, ast.Call):
            continue
        in_device = device.contains(node)
        kws = [k.arg for k in node.keywords if k.arg in gn.LAUNCH_KEYWORDS | gn.HINT_KEYWORDS]
        if not kws:
            continue
        callee = node.func.value if isinstance(node.func, ast.Subscript) else node.func
        is_launch = isinstance(callee, ast.Name) and callee.id in kernels
        if in_device:
            # Triton calls are reported by the Triton rules; only NKI calls and kernel calls here.
            if other_name(ctx, node.func) is not None:
                continue
        elif not is_launch:
            continue
        fn = device.owner(node)
        target = callee.id if isinstance(callee, ast.Name) else chain_text(callee) or "the call"
        yield node, (
            f"{', '.join(k + '=' for k in kws)} passed to {target}: GPU launch/cache options have no meaning on "
            f"Trainium (no warps, stages or caches); remove them and size tiles from nl.tile_size"
        ), fn.name if fn is not None else None


class GpuLaunchOptions(GpuNameRule):
    id = "NKI414"
    name = "gpu-launch-options"
    family = "cuda"
    level = Level.WARNING
    summary = "Warp/stage/autotune launch options (num_warps, num_stages, @triton.autotune) on NKI kernels"
    categories = (gn.LAUNCH,)
    noun = "launch option"
    fix_hint = "remove the option; pick tile sizes from nl.tile_size"
    explanation = """
A kernel parameter or launch keyword named `num_warps`, `num_stages`,
`num_ctas`, `maxnreg`, `waves_per_eu`; `@triton.autotune`,
`@triton.heuristics` or `triton.Config(...)` on or in NKI kernel code; hint
keywords such as `eviction_policy=`/`cache_modifier=` on NKI calls.

**Why on Trainium.** Warps, pipeline stages and CTAs have no Trainium
meaning: the NKI compiler schedules the engines and DMA queues itself, and
multi-buffering comes from tiles allocated inside loops. An unused
`num_warps=4` parameter compiles but misleads the reader about how the
kernel runs; an autotune decorator hands the kernel to Triton.

**Fix.** Remove the option; choose tile sizes explicitly from the NKI
limits (`nl.tile_size.pmax` = 128 partitions, `gemm_stationary_fmax` = 128,
`gemm_moving_fmax` = 512, `psum_fmax` = 512 fp32 per bank).
"""
    references = ("aws-neuron-sdk nki/api/nki.language.tile_size.rst", "aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def softmax_kernel(x, num_warps=4):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                nl.store(out[0:128, 0:512], value=t)
                return out
            """,
            lines=[5],
            title="legacy API: a num_warps parameter",
            level=Level.WARNING,
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out

            def launch(x):
                return copy_kernel(x, num_warps=8, num_stages=3)
            """,
            lines=[14],
            title="current API: launch keywords at the host call",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, rows=128):
                out = nl.ndarray((rows, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((rows, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[0:rows, 0:512])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="a tile-size parameter",
        ),
    )

    def check(self, ctx: RuleContext) -> None:
        super().check(ctx)
        reporter = Reporter(ctx)
        for node, message, fn_name in launch_option_sites(ctx):
            reporter.at(node, message, hint=self.fix_hint, kernel=fn_name)
