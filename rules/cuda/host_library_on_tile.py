"""NKI427 host-library-on-tile: a host library (numpy, torch, math) is applied
to an NKI tensor inside kernel code."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.rule import invalid, valid

from ._base import LANG_GUIDE, Spot, SpotRule, other_name
from ._elements import opaque_param


_HOST_LIBS = ("numpy", "math", "torch", "scipy", "jax.numpy", "cupy")


_SHAPE_FUNCS = {"prod", "ceil", "floor", "finfo", "iinfo", "dtype", "isclose", "log2", "sqrt", "dtype", "result_type"}


_HOST_METHODS = {"numpy", "cpu", "tolist", "item", "detach"}


def host_library_on_tiles(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    names_by_fn: dict[str, set[str]] = {}
    for _, graph in ctx.model.graphs():
        for _, data in graph.tensors():
            # A parameter of unknown shape may be a Python scalar the model saw next
            # to a tile (operand0=scale); only allocations, results and parameters
            # with a known shape are certainly tensors.
            if data.get("name") and data.get("function") and not opaque_param(data):
                names_by_fn.setdefault(str(data["function"]), set()).add(str(data["name"]))
    for fn in device.outermost:
        for node in device.nodes(fn):
            if not isinstance(node, ast.Call):
                continue
            owner = device.owner(node) or fn
            tiles = names_by_fn.get(owner.name, set())
            if isinstance(node.func, ast.Attribute) and node.func.attr in _HOST_METHODS and not node.args and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id in tiles and not other_name(ctx, node.func):
                yield Spot(node, (
                    f"{ast.unparse(node)} treats the NKI tensor {node.func.value.id} as a host tensor: the kernel body is "
                    f"compiled, tile values do not exist in Python; return the tile as an extra output or use "
                    f"nl.device_print to inspect it"
                ), Level.ERROR, owner.name)
                continue
            qual = other_name(ctx, node.func)
            if qual is None or not any(qual == r or qual.startswith(r + ".") for r in _HOST_LIBS):
                continue
            if qual.rsplit(".", 1)[-1] in _SHAPE_FUNCS and qual.startswith(("numpy", "math")):
                continue
            args = list(node.args) + [k.value for k in node.keywords]
            tile_args = [a.id for a in args if isinstance(a, ast.Name) and a.id in tiles]
            if qual.startswith("torch.") and not tile_args:
                if qual.split(".")[1] in ("finfo", "iinfo", "float32", "bfloat16", "float16", "dtype", "Size"):
                    continue
                yield Spot(node, (
                    f"{qual}(...) in NKI kernel code ({owner.name}) builds a host (torch) tensor at compile time, not a "
                    f"device buffer; allocate with nl.ndarray(shape, dtype, buffer=nl.sbuf) and compute with "
                    f"nki.language / nki.isa"
                ), Level.ERROR, owner.name)
                continue
            if not tile_args:
                continue
            yield Spot(node, (
                f"{ast.unparse(node.func)}({', '.join(tile_args)}) applies a host library to the NKI tensor {tile_args[0]}: the kernel is "
                f"compiled, so {qual.split('.')[0]} never sees device data (the CPU simulator may run it, the compiler "
                f"will not); use the nki.language / nki.isa equivalent (nl.exp / nisa.activation, nisa.nc_matmul, ...)"
            ), Level.ERROR, owner.name)


class HostLibraryOnTile(SpotRule):
    id = "NKI427"
    name = "host-library-on-tile"
    family = "cuda"
    level = Level.ERROR
    summary = "A host library (numpy, torch, math) is applied to an NKI tensor inside kernel code"
    fix_hint = "use the nki.language / nki.isa operation on the tile"
    explanation = """
`np.exp(t)`, `torch.matmul(a, b)`, `math.sqrt(t)`, `t.numpy()`, `t.item()`,
`t.tolist()`, `t.cpu()` on a kernel tensor, and `torch.*` calls that build
buffers (`torch.zeros(...)`) inside NKI kernel code. numpy/math on
compile-time values (`math.ceil(n / 128)`, `np.finfo(np.float32).min`) are
fine and not reported.

**Why on Trainium.** The kernel body is compiled, not executed by Python:
tile values do not exist when the code runs, so host libraries never see
device data. The CPU simulator runs arbitrary Python, so such kernels can
pass simulator tests and then fail to compile.

**Fix.** The NKI equivalent (`nl.exp` / `nisa.activation`,
`nisa.nc_matmul`, `nl.ndarray`); inspect values with `nl.device_print` or by
returning an extra output.
"""
    references = (LANG_GUIDE, "aws-neuron-sdk nki/guides/nki_simulator.rst")
    examples = (
        invalid(
            """
            import numpy as np
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def exp_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x[0:128, 0:512])
                e = np.exp(t)
                nl.store(out, value=e)
                return out
            """,
            lines=[9],
            title="legacy API: np.exp on a tile",
        ),
        invalid(
            """
            import torch
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def zero_kernel(x):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                buf = torch.zeros((128, 512))
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.memset(dst=t, value=0.0)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API: a torch buffer inside the kernel",
        ),
        valid(
            """
            import math
            import numpy as np
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def scale_kernel(x):
                n, d = x.shape
                n_tiles = math.ceil(n / 128)
                scale = 1.0 / math.sqrt(d)
                low = np.finfo(np.float32).min
                out = nl.ndarray((n, d), dtype=x.dtype, buffer=nl.shared_hbm)
                for i in range(n_tiles):
                    t = nl.ndarray((128, d), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
                    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scale)
                    nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
                return out
            """,
            title="math/numpy on compile-time values",
        ),
    )

    def spots(self, ctx: RuleContext):
        return host_library_on_tiles(ctx)
