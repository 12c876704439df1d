"""NKI423 pointer-arithmetic: a kernel argument is used as a pointer (x_ptr +
offs, x.data_ptr(), a_ptrs += stride)."""

from __future__ import annotations

import ast
from typing import Iterator

from nkilint.context import RuleContext
from nkilint.findings import Level
from nkilint.model.device import DeviceCode
from nkilint.rule import invalid, valid

from ._base import Spot, SpotRule, nki_name, other_name


_LOADERS = {"nki.language.load", "nki.language.store", "nki.isa.dma_copy", "nki.language.load_transpose2d",
            "nki.isa.dma_transpose", "nki.language.atomic_rmw"}


def _param_names(fn: ast.FunctionDef) -> list[ast.arg]:
    args = fn.args
    return args.posonlyargs + args.args + args.kwonlyargs


def pointer_arithmetic(ctx: RuleContext) -> Iterator[Spot]:
    device = ctx.analysis(DeviceCode)
    model = ctx.model
    tensor_params: dict[str, set[str]] = {}
    for _, graph in model.graphs():
        for _, data in graph.tensors():
            if data.get("origin") == "param" and data.get("name"):
                tensor_params.setdefault(str(data.get("function")), set()).add(str(data["name"]))
    for fn in device.outermost:
        for node in device.nodes(fn):
            owner = device.owner(node) or fn
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "data_ptr":
                yield Spot(node, (
                    f"{ast.unparse(node)} takes a raw device pointer in NKI kernel code ({owner.name}): NKI tensors are "
                    f"shaped views with no pointers; address data with slices, nl.ds or .ap() access patterns"
                ), Level.ERROR, owner.name)
                continue
            if isinstance(node, ast.Call):
                callee = nki_name(ctx, node.func) or other_name(ctx, node.func) or ""
                if callee not in _LOADERS and callee not in ("triton.language.load", "triton.language.store"):
                    continue
                params = {a.arg for a in _param_names(owner)}
                pointers = tensor_params.get(owner.name, set()) | {p for p in params if p.endswith(("_ptr", "_ptrs"))}
                for arg in list(node.args) + [k.value for k in node.keywords]:
                    # Only the argument itself (a chain of + / -), never index
                    # arithmetic inside a subscript or a nested call.
                    for sub in _binop_chain(arg):
                        if isinstance(sub.op, (ast.Add, ast.Sub)):
                            sides = [sub.left, sub.right]
                            ptr = [x.id for x in sides if isinstance(x, ast.Name) and x.id in pointers and x.id in params]
                            others = [x for x in sides if not (isinstance(x, ast.Name) and x.id in ptr)]
                            # tensor + tensor is elementwise arithmetic on HBM, not an address.
                            if ptr and not any(isinstance(x, ast.Name) and x.id in pointers for x in others):
                                yield Spot(sub, (
                                    f"{ast.unparse(sub)} adds offsets to the kernel argument {ptr[0]} as if it were a "
                                    f"pointer: NKI tensors are shaped views, so this is at best elementwise arithmetic "
                                    f"on HBM data; use slices ({ptr[0]}[r0:r1, c0:c1]), nl.ds or .ap() access patterns"
                                ), Level.ERROR, owner.name)
                                break
            if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)) and isinstance(node.target, ast.Name):
                name = node.target.id
                params = {a.arg for a in _param_names(owner)}
                if name in params and (name in tensor_params.get(owner.name, set()) or name.endswith(("_ptr", "_ptrs"))):
                    yield Spot(node, (
                        f"{ast.unparse(node)} advances the kernel argument {name} like a pointer: NKI tensors have no "
                        f"pointers; index the next tile with a slice ({name}[k0:k0 + 128, :]) instead"
                    ), Level.ERROR, owner.name)


def _binop_chain(node: ast.AST) -> Iterator[ast.BinOp]:
    while isinstance(node, ast.BinOp):
        yield node
        node = node.left


class PointerArithmetic(SpotRule):
    id = "NKI423"
    name = "pointer-arithmetic"
    family = "cuda"
    level = Level.ERROR
    summary = "A kernel argument is used as a pointer (x_ptr + offs, x.data_ptr(), a_ptrs += stride)"
    fix_hint = "address the tensor with slices x[r0:r1, c0:c1], nl.ds(start, size) or .ap() access patterns"
    explanation = """
Offsets added to a kernel argument that is then loaded or stored
(`nl.load(x + offs)`, `tl.load(x_ptr + offs)`, `nisa.dma_copy(src=x + k *
stride, ...)`), pointer advances (`a_ptr += BLOCK_K * stride_ak` on an
argument) and `.data_ptr()`.

**Why on Trainium.** NKI tensors are shaped views (shape, strides, offset);
addressing is by slices, `nl.ds(start, size)` or explicit `.ap(pattern=...,
offset=...)` access patterns. There are no raw pointers: adding an integer
to an HBM tensor is an elementwise add on its data (which compute engines
cannot even read from HBM), never an address.

**Fix.** `x[r0:r1, c0:c1]` slices; strided or gathered access with
`x.ap(...)` or indirect DMA (`vector_offset=` / `scalar_offset=`).
"""
    references = ("aws-neuron-sdk nki/deep-dives/nki-aps.rst", "aws-neuron-sdk nki/get-started/about/indexing-overview.rst")
    examples = (
        invalid(
            """
            import neuronxcc.nki as nki
            import neuronxcc.nki.language as nl

            @nki.jit
            def copy_kernel(x_ptr, n):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                offs = n * 512
                t = nl.load(x_ptr + offs)
                nl.store(out, value=t)
                return out
            """,
            lines=[8],
            title="legacy API: offsets added to a pointer-named argument",
        ),
        invalid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, k):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x + k * 512)
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            lines=[9],
            title="current API: offsets added to a tensor argument",
        ),
        valid(
            """
            import nki
            import nki.language as nl
            import nki.isa as nisa

            @nki.jit
            def copy_kernel(x, k):
                out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[k * 128:(k + 1) * 128, :])
                nisa.dma_copy(dst=out, src=t)
                return out
            """,
            title="a slice",
        ),
    )

    def spots(self, ctx: RuleContext):
        return pointer_arithmetic(ctx)
