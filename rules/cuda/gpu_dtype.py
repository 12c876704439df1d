"""NKI428 gpu-dtype: a GPU framework dtype (tl.float16, torch.bfloat16) or a
64-bit/complex dtype is passed to NKI."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.model.scopes import Scopes
from nkilint.rule import invalid, valid

from . import _names as gn
from ._base import Spot, SpotRule, nki_name
from ._hits import GpuNames


def gpu_dtypes(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    scopes = ctx.analysis(Scopes)
    names = ctx.analysis(GpuNames)
    for hit in names.hits_of(gn.DTYPE):
        parent = scopes.parent(hit.node)
        ok = hit.role == "dtype"
        if hit.role == "argument" and isinstance(parent, ast.Call):
            callee = nki_name(ctx, parent.func)
            method = parent.func.attr if isinstance(parent.func, ast.Attribute) else ""
            ok = callee is not None or method in ("to", "astype", "view")
        if not ok and isinstance(parent, ast.keyword) and parent.arg in ("dtype", "out_dtype", "acc_dtype"):
            ok = True
        if not ok:
            continue
        yield Spot(hit.node, _dtype_message(hit.gpu.shown, device.owner(hit.node)), Level.ERROR,
                   (device.owner(hit.node) or hit.function).name if (device.owner(hit.node) or hit.function) else None)
    for fn in device.outermost:
        for node in device.nodes(fn):
            if isinstance(node, ast.keyword) and node.arg == "dtype" and isinstance(node.value, ast.Name) and \
                    node.value.id in ("float", "complex") and node.value.id not in names.bound:
                owner = device.owner(node) or fn
                yield Spot(node.value, _dtype_message(f"dtype={node.value.id} (numpy float64/complex128)", owner),
                           Level.ERROR, owner.name)


def _dtype_message(shown: str, fn: ast.FunctionDef | None) -> str:
    wide = any(w in shown for w in ("64", "double", "complex", "fnuz", "=float"))
    why = (
        "Trainium has no 64-bit float, complex or fnuz FP8 types" if wide else
        "NKI APIs take nki.language dtypes, not GPU framework dtype objects"
    )
    return f"{shown} is used as a dtype in NKI kernel code ({fn.name if fn else '?'}): {why}; {gn.REPLACE_DTYPE}"


class GpuDtype(SpotRule):
    id = "NKI428"
    name = "gpu-dtype"
    family = "cuda"
    level = Level.ERROR
    summary = "A GPU framework dtype (tl.float16, torch.bfloat16) or a 64-bit/complex dtype is passed to NKI"
    fix_hint = "use an nki.language dtype: nl.float32, nl.bfloat16, nl.float16, nl.float8_e4m3, ..."
    explanation = """
`dtype=tl.float16`, `dtype=torch.bfloat16`, `.to(tl.float32)`,
`np.float64`, `torch.double`, complex dtypes, `dtype=float` (numpy float64)
or the `fnuz` FP8 variants passed to NKI calls in kernel code. numpy
float32/float16/int dtypes are not reported (legacy NKI documented them).

**Why on Trainium.** NKI APIs take `nki.language` dtypes (`nl.float32`,
`nl.bfloat16`, `nl.float8_e4m3`, ...). Trainium has no 64-bit float or
complex types, and the compiler rejects the `fnuz` FP8 variants
(NCC_EVRF005); Triton and torch dtype objects are not NKI dtypes.

**Fix.** Use the `nki.language` dtype; keep fp32 where a GPU kernel used
fp64 (or emulate double-float), split complex data into real/imaginary
tiles.
"""
    references = ("aws-neuron-sdk nki/api/nki.api.shared.rst (data types)", "aws-neuron-sdk compiler/error-codes/EVRF005.rst")
    examples = (
        invalid(
            """
            import torch
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def cast_kernel(x):
                out = nl.ndarray((128, 512), dtype=torch.bfloat16, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[8],
            title="current API: a torch dtype",
        ),
        invalid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def acc_kernel(x):
                out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 1), dtype=np.float64, buffer=nl.sbuf)
                nl.store(out, value=acc)
                return out
            """,
            lines=[8],
            title="legacy API: float64",
        ),
        valid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def acc_kernel(x):
                out = nl.ndarray((128, 1), dtype=np.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
                nl.store(out, value=acc)
                return out
            """,
            title="nl and numpy 32-bit dtypes",
        ),
    )

    def spots(self, ctx: RuleContext):
        return gpu_dtypes(ctx)
