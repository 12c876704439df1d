"""NKI431 gpu-source-in-string: cUDA C source text is compiled at run time
(cupy.RawKernel, SourceModule, load_inline)."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.scopes import Scopes
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import CUSTOM_OP, Spot, SpotRule, other_name


def _string_value(scopes: Scopes, node: ast.AST, scope: ast.AST | None) -> str | None:
    """The text a source argument holds: a string, the printable parts of an
    f-string, the strings of a list, or a name's first assigned value that
    holds text (the enclosing function's assignments first, then the file's)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.Name):
        for where in ((scope, None) if scope is not None else (None,)):  # None: the whole file
            for value in scopes.assigned_values(node.id, where):
                text = _string_value(scopes, value, None)
                if text is not None:
                    return text
    if isinstance(node, (ast.List, ast.Tuple)):
        parts = [_string_value(scopes, e, scope) for e in node.elts]
        return "\n".join(p for p in parts if p)
    return None


def gpu_source_strings(ctx: RuleContext) -> Iterator[Spot]:
    scopes = ctx.analysis(Scopes)
    if not ctx.model.kernels:
        return  # a pure GPU module is not an NKI port
    for node in scopes.file.nodes:
        if not isinstance(node, ast.Call):
            continue
        qual = other_name(ctx, node.func)
        if qual is None or not any(qual == c or qual.endswith("." + c.split(".")[-1]) and qual.split(".")[0] == c.split(".")[0]
                                   for c in gn.RUNTIME_COMPILERS):
            continue
        scope = next((a for a in scopes.ancestors(node) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        args = list(node.args) + [k.value for k in node.keywords if k.arg in (None, "code", "source", "cuda_sources", "operation", "map_expr", "reduce_expr", "preamble")]
        for arg in args:
            text = _string_value(scopes, arg, scope)
            tokens = [t for t in gn.CUDA_SOURCE_TOKENS if text and t in text]
            if tokens:
                yield Spot(node, (
                    f"{qual} compiles CUDA C source ({', '.join(tokens[:3])}) at run time: live GPU code that never runs "
                    f"on Trainium; port it into the NKI kernel (tiles, nisa.* instructions) or delete this path"
                ), Level.ERROR, None)
                break


class GpuSourceInString(SpotRule):
    id = "NKI431"
    name = "gpu-source-in-string"
    family = "cuda"
    level = Level.ERROR
    summary = "CUDA C source text is compiled at run time (cupy.RawKernel, SourceModule, load_inline)"
    fix_hint = "port the CUDA source into the NKI kernel, or delete the GPU path"
    explanation = """
A string containing CUDA C (`__global__`, `threadIdx`, `__syncthreads`,
`atomicAdd`, `<<<`, ...) passed to a runtime compiler: `cupy.RawKernel` /
`RawModule` / `ElementwiseKernel` / `ReductionKernel`,
`pycuda.compiler.SourceModule`, `torch.utils.cpp_extension.load_inline(
cuda_sources=...)`, `numba.cuda.compile_ptx`. Strings are traced to their
assignment in the same function or module. Other strings (comments, messages,
docstrings) are at most port residue (NKI433).

**Why on Trainium.** This is live GPU code: it is compiled by NVRTC/nvcc at
run time and can never run on a Trainium host; a module that ships it next
to NKI kernels has not finished the port.

**Fix.** Port the CUDA kernel into the NKI kernel (tiles and `nisa.*`
instructions) or delete the GPU path.
"""
    references = (CUSTOM_OP,)
    examples = (
        invalid(
            """
            import cupy
            import nki
            import nki.language as nl
            import nki.isa as nisa

            SRC = '''
            extern "C" __global__ void add(const float* a, float* b) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                b[i] += a[i];
            }
            '''

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out

            add_gpu = cupy.RawKernel(SRC, "add")
            """,
            lines=[21],
            title="current API module with a cupy.RawKernel",
        ),
        invalid(
            """
            from pycuda.compiler import SourceModule
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(x[0:128, 0:512]))
                return out

            mod = SourceModule("__global__ void k(float* a) { a[threadIdx.x] = 0; }")
            """,
            lines=[11],
            title="legacy API module with pycuda",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x):
                '''Port of the CUDA kernel: each threadIdx.x copied one element.'''
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="CUDA words in a docstring are residue, not live source",
        ),
    )

    def spots(self, ctx: RuleContext):
        return gpu_source_strings(ctx)
