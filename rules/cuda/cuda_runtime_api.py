"""NKI426 cuda-runtime-api: gPU runtime calls (torch.cuda, .cuda(),
device='cuda', cupy, numba device arrays)."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.scopes import Scopes
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import CUSTOM_OP, Spot, SpotRule, other_name
from ._hits import GpuNames, chain_text


def _cuda_string(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip().lower().startswith("cuda")


def _guarded(scopes: Scopes, node: ast.AST) -> bool:
    """Host code on an explicit GPU path: under a backend test, or in a
    function named for CUDA / GPU / Triton."""
    for p in scopes.ancestors(node):
        if isinstance(p, (ast.If, ast.IfExp)) and re.search(r"cuda|is_available|HAS_|gpu|triton", ast.unparse(p.test), re.I):
            return True
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)) and re.search(r"(?i)cuda|gpu|triton", p.name):
            return True
    return False


def runtime_api(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    scopes = ctx.analysis(Scopes)
    names = ctx.analysis(GpuNames)
    has_kernels = bool(ctx.model.kernels)
    host_sync = [h for h in names.host_hits_of(gn.BARRIER) if h.gpu.origin == "torch.cuda"]
    for hit in list(names.hits_of(gn.RUNTIME)) + list(names.host_hits_of(gn.RUNTIME)) + host_sync:
        if hit.call is not None and (other_name(ctx, hit.node) or "") in gn.RUNTIME_COMPILERS:
            continue  # live CUDA source: reported by NKI431
        in_device = device.contains(hit.node)
        if not in_device and (not has_kernels or _guarded(scopes, hit.node)):
            continue
        yield _runtime_spot(hit.node, chain_text(hit.node), device.owner(hit.node) if in_device else None)
    for node in scopes.file.nodes:
        if not isinstance(node, ast.Call):
            continue
        text = None
        if isinstance(node.func, ast.Attribute) and node.func.attr == "cuda" and not other_name(ctx, node.func):
            text = ".cuda()"
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "to" and node.args and _cuda_string(node.args[0]):
            text = f".to({ast.unparse(node.args[0])})"
        elif (other_name(ctx, node.func) or "") == "torch.device" and node.args and _cuda_string(node.args[0]):
            text = ast.unparse(node)
        else:
            kw = next((k for k in node.keywords if k.arg == "device" and _cuda_string(k.value)), None)
            if kw is not None:
                text = f"device={ast.unparse(kw.value)}"
        if text is None:
            continue
        in_device = device.contains(node)
        if not in_device and (not has_kernels or _guarded(scopes, node)):
            continue
        yield _runtime_spot(node, text, device.owner(node) if in_device else None)


def _runtime_spot(node: ast.AST, text: str, fn: ast.FunctionDef | None) -> Spot:
    """An error in device code (``fn``: the device function), a warning in host code."""
    if fn is not None:
        return Spot(node, (
            f"{text} is a GPU runtime call inside NKI kernel code ({fn.name if fn else '?'}): there is no CUDA device "
            f"on Trainium and the kernel body is compiled, not run on the host; {gn.REPLACE_RUNTIME}"
        ), Level.ERROR, fn.name if fn else None)
    return Spot(node, (
        f"{text} in host code of a module that defines NKI kernels: a Trainium host has no CUDA device; pass "
        f"torch-xla / JAX / numpy arrays to the nki.jit kernel (or guard the GPU path with a backend check)"
    ), Level.WARNING, None)


class CudaRuntimeApi(SpotRule):
    id = "NKI426"
    name = "cuda-runtime-api"
    family = "cuda"
    level = Level.ERROR
    summary = "GPU runtime calls (torch.cuda, .cuda(), device='cuda', cupy, numba device arrays)"
    fix_hint = "pass torch-xla / JAX / numpy arrays to the nki.jit kernel; allocate inside with nl.ndarray"
    explanation = """
`torch.cuda.*`, `.cuda()`, `.to("cuda")`, `device="cuda"`,
`torch.device("cuda")`, `cupy` arrays, `numba.cuda.to_device` /
`device_array`, `pycuda.*`. Inside NKI kernel code this is an error; in
host code of a module that defines NKI kernels it is a warning (a dispatch
leftover), unless it sits under a backend check (`if
torch.cuda.is_available():`) or in a function named for the GPU path.

**Why on Trainium.** Neuron devices are reached through torch-xla, JAX or
numpy arrays; `nki.jit` dispatches on the argument type. A Trainium host
has no CUDA device, so CUDA device strings and GPU array libraries fail,
and inside a kernel the body is compiled, not executed by Python.

**Fix.** Use the XLA device for torch (`xm.xla_device()` / `device="xla"`),
numpy arrays for the simulator, and `nl.ndarray(..., buffer=...)` for
buffers inside the kernel.
"""
    references = (CUSTOM_OP,)
    examples = (
        invalid(
            """
            import torch
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                dev = torch.cuda.current_device()
                nl.store(out, value=t)
                return out
            """,
            lines=[9],
            title="legacy API: inside the kernel (error)",
            level=Level.ERROR,
        ),
        invalid(
            """
            import torch
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

            def run():
                x = torch.rand((128, 512), device="cuda")
                return copy_kernel(x)
            """,
            lines=[15],
            title="current API: host code of the kernel's module (warning)",
            level=Level.WARNING,
        ),
        valid(
            """
            import torch
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

            def run(x):
                if torch.cuda.is_available():
                    return x.cuda() * 1.0
                return copy_kernel(x)
            """,
            title="a guarded GPU fallback path",
        ),
    )

    def spots(self, ctx: RuleContext):
        return runtime_api(ctx)
