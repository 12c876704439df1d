"""Facts the memory rules (rules/memory.py, NKI2xx) share: which memory an
operand lives in, how many bytes a tile or view takes per partition, which
ops are matmuls, transposes, DMAs or GpSimd instructions, and how to word
sizes in messages.

Sources: ../shared/NKI-REFERENCE.md sections 2.1-2.3 and 2.6-2.7, and the
nki.isa / nki.language stubs of aws-neuron-sdk (``nki/api/nki``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

from nkilint.model import query as q
from nkilint.model.api_semantics import classify
from nkilint.model.graph import DTYPE_BYTES, HBM, KernelGraph
from nkilint.model.values import ApiRef, Const, DType, Value, const_int, describe, int_binop

MATMULS = ("nki.isa.nc_matmul", "nki.isa.nc_matmul_mx", "nki.language.matmul")
TRANSPOSES = ("nki.isa.nc_transpose", "nki.language.transpose")
# nki.language calls that reshape or describe rather than compute.
NOT_COMPUTE = {
    "broadcast_to", "expand_dims", "finfo", "gemm_grid", "gemm_stationary_grid", "all_reduce", "loop_reduce",
}
# nki.isa calls that take HBM operands on purpose.
HBM_OK = {"core_barrier"}


@dataclass(frozen=True)
class Operand:
    """One tensor operand of an op: the node it passes (tensor or view), its
    base tensor, the parameter name, and whether the op writes it."""

    node_id: str
    base_id: str
    param: str
    written: bool
    data: dict  # of the node passed
    base: dict  # of the base tensor
    buffer: str  # sbuf, psum, hbm, shared_hbm, private_hbm or unknown
    # The buffer is HBM only if the kernel is launched as a top-level kernel
    # (a parameter of an @nki.jit function that may also be called as a
    # sub-kernel with on-chip arguments, as nki-library does).
    assumed: bool = False

    @property
    def name(self) -> str:
        return q.tensor_name(self.base)


# Parameters of ISA / language calls that only take tensors (others, such
# as ``scale``, ``imm`` or ``op``, also accept scalars and enums).
TENSOR_PARAMS = {
    "data", "data0", "data1", "data2", "src", "dst", "in_", "stationary", "moving", "on_true_tile",
    "on_false_tile", "predicate", "indices",
}
DMA_APIS = ("nki.isa.dma_copy", "nki.isa.dma_transpose", "nki.language.load", "nki.language.store",
            "nki.language.load_transpose2d")


def kernel_role(model, kernel) -> str:
    """``top``: launched as a top-level kernel, so its parameters are HBM
    tensors; ``maybe``: an ``@nki.jit`` function of the current API, which
    nki-library also calls as a sub-kernel with SBUF arguments; ``sub``: a
    sub-kernel (called by another kernel of the file, or legacy
    ``mode="trace"``); ``probable``: device code analysed on its own."""
    if kernel.kind != "root":
        return "probable"
    if kernel.subkernel:
        return "sub"
    deco = kernel.decorator
    if isinstance(deco, ast.Call):
        for kw in deco.keywords:
            if kw.arg == "mode" and isinstance(kw.value, ast.Constant) and kw.value.value == "trace":
                return "sub"
    if model.legacy or not str(kernel.how).startswith("@"):
        return "top"
    return "maybe"


def _tensor_evidence(graph: KernelGraph, base_id: str, base: dict, param: str, op: dict) -> bool:
    """A kernel parameter passed to an op is surely a tensor (kernels also
    take scalars, enums and ops as parameters)."""
    api = str(op.get("api") or "")
    if param in TENSOR_PARAMS or (param == "value" and api == "nki.language.store"):
        return True
    if param == "x" and "y" not in (op.get("params_v") or {}) and api.startswith("nki.language."):
        return True  # a unary nl.* call takes a tile
    # Used as a DMA endpoint somewhere. (Views are no evidence: the model
    # also makes views of tuple parameters that the kernel subscripts.)
    for op_id in graph.ops_reading(base_id) + graph.ops_writing(base_id):
        if str(graph.attrs(op_id).get("api") or "") in DMA_APIS:
            return True
    return False


def buffer_of(base: dict, role: str) -> str:
    """The memory of a base tensor, as far as a rule may rely on it."""
    buffer = base.get("buffer") or "unknown"
    if base.get("origin") == "param" and role in ("sub", "probable"):
        return "unknown"
    if str(base.get("api") or "").endswith("shared_identity_matrix"):
        return "unknown"  # legacy: shared HBM like shared_constant; current stub: SBUF
    return buffer


def operands(graph: KernelGraph, op_id: str, role: str = "top") -> list[Operand]:
    """Every tensor operand of an op, reads first, in argument order.
    ``role``: see :func:`kernel_role`."""
    op = graph.attrs(op_id)
    out: list[Operand] = []
    seen: set[tuple[str, str, bool]] = set()
    for written, edges in ((False, graph.reads(op_id)), (True, graph.writes(op_id))):
        for node_id, edge in edges:
            param = edge.get("param") or "?"
            key = (node_id, param, written)
            if key in seen:
                continue
            seen.add(key)
            base = graph.base_tensor(node_id)
            bdata = graph.attrs(base)
            buffer = buffer_of(bdata, role)
            is_param = bdata.get("origin") == "param"
            if is_param and buffer != "unknown" and not _tensor_evidence(graph, base, bdata, param, op):
                buffer = "unknown"
            out.append(Operand(node_id, base, param, written, graph.attrs(node_id), bdata, buffer,
                               assumed=is_param and role == "maybe"))
    return out


def op_short(data: dict) -> str:
    api = str(data.get("api") or "")
    module, _, short = api.rpartition(".")
    prefix = "nisa" if module == "nki.isa" else "nl" if module == "nki.language" else module
    return f"{prefix}.{short}" if prefix else short


def is_compute(data: dict) -> bool:
    """An instruction of a compute engine (not DMA, not metadata, not the
    legacy ``t[...] = value`` idiom, which may lower to a DMA)."""
    api = str(data.get("api") or "")
    info = classify(api)
    if info is None or info.kind not in ("compute", "matmul", "transpose"):
        return False
    if data.get("assignment") or data.get("augmented"):
        return False
    if info.module == "nki.language" and info.short in NOT_COMPUTE:
        return False
    if info.module == "nki.isa" and info.short in HBM_OK:
        return False
    return data.get("engine") not in ("dma", "none", "sync")


def is_gpsimd(data: dict) -> bool:
    """The op runs on GpSimd: by its API, by ``engine=``, or
    ``tensor_tensor(op=nl.power)`` (which only GpSimd implements)."""
    if data.get("engine") == "gpsimd":
        return True
    api = str(data.get("api") or "")
    if api in ("nki.isa.tensor_tensor", "nki.isa.tensor_scalar") and data.get("engine") in (None, "any"):
        op = (data.get("params_v") or {}).get("op")
        if isinstance(op, ApiRef) and str(op.qual.name).endswith(".power"):
            return True
    return False


def dtype_of(base: dict) -> str | None:
    d = base.get("dtype_v")
    if isinstance(d, DType):
        return d.name
    return base.get("dtype")


def free_elements(shape: tuple[Value, ...] | None, axis: int = 0) -> Value | None:
    """Elements per partition of one tile: the product of the free dims
    (after the partition dim; legacy block dims before it are excluded)."""
    if shape is None or axis >= len(shape):
        return None
    total: Value = Const(1)
    for d in shape[axis + 1:]:
        total = int_binop(ast.Mult, total, d)
    return total


def node_bytes(graph: KernelGraph, node_id: str) -> tuple[Value | None, Value | None, str | None]:
    """(bytes per partition, elements per partition, dtype) of the tile a
    tensor or view node stands for; bytes is None when the dtype is unknown."""
    data = graph.attrs(node_id)
    base = graph.attrs(graph.base_tensor(node_id))
    axis = (data.get("partition_axis") or 0) if data.get("kind") == "tensor" else 0
    elems = free_elements(data.get("shape_v"), axis)
    dtype = dtype_of(base)
    size = DTYPE_BYTES.get(dtype or "")
    if elems is None or size is None:
        return None, elems, dtype
    return int_binop(ast.Mult, Const(size), elems), elems, dtype


def attainable_bytes(graph: KernelGraph, node_id: str) -> float | None:
    """An attainable upper bound of a tile's bytes per partition: every free
    dim exact but one, which is tied to a named quantity. (With several
    unknown dims the bounds may be correlated, e.g. a buffer count chosen
    from the tile size, and their product need not be reachable.)"""
    data = graph.attrs(node_id)
    base = graph.attrs(graph.base_tensor(node_id))
    shape = data.get("shape_v")
    size = DTYPE_BYTES.get(dtype_of(base) or "")
    if shape is None or size is None:
        return None
    axis = (data.get("partition_axis") or 0) if data.get("kind") == "tensor" else 0
    total = float(size)
    unknown = 0
    for d in shape[axis + 1:]:
        hi = q.attainable_upper(d)
        if hi is None:
            return None
        if const_int(d) is None:
            unknown += 1
            if unknown > 1:
                return None
        total *= hi
    return total


def fmt_count(v: Value | None) -> str:
    if v is None:
        return "?"
    c = const_int(v)
    return str(c) if c is not None else describe(v)


def fmt_int(n: float) -> str:
    return str(int(n))


def written_dst(graph: KernelGraph, op_id: str) -> Operand | None:
    """The operand an op writes its result to: ``dst`` (current API) or the
    returned tile (legacy, param ``result``)."""
    ops = [o for o in operands(graph, op_id) if o.written]
    for wanted in ("dst", "result"):
        for o in ops:
            if o.param == wanted:
                return o
    return None


def param(data: dict, name: str) -> Value | None:
    return (data.get("params_v") or {}).get(name)


def engine_arg(data: dict) -> str | None:
    """The engine named by an explicit ``engine=`` argument, if any."""
    v = param(data, "engine")
    if isinstance(v, ApiRef):
        name = str(v.qual.name).rsplit(".", 1)[-1]
        return name[: -len("_engine")] if name.endswith("_engine") else name
    return None


def is_true(v: Value | None) -> bool:
    return isinstance(v, Const) and v.value is True


def iter_ops(graph: KernelGraph) -> Iterator[tuple[str, dict]]:
    return graph.ops()


def loop_line(graph: KernelGraph, loop_id: str | None) -> int | None:
    if loop_id is None:
        return None
    site = graph.attrs(loop_id).get("site")
    return site.line if site is not None else None


__all__ = [
    "HBM", "MATMULS", "TRANSPOSES", "Operand", "operands", "op_short", "is_compute", "is_gpsimd", "dtype_of",
    "free_elements", "node_bytes", "attainable_bytes", "fmt_count", "written_dst",
    "param", "engine_arg", "is_true", "loop_line",
]


def fit_condition(graph: KernelGraph, node_id: str, limit: int) -> str:
    """`` unless K <= 53182`` when one free dim is not exact and the others
    are: the largest value of it that fits ``limit`` bytes per partition."""
    data = graph.attrs(node_id)
    base = graph.attrs(graph.base_tensor(node_id))
    shape = data.get("shape_v")
    size = DTYPE_BYTES.get(dtype_of(base) or "")
    if shape is None or size is None:
        return ""
    axis = (data.get("partition_axis") or 0) if data.get("kind") == "tensor" else 0
    free = list(shape[axis + 1:])
    unknown = [d for d in free if const_int(d) is None]
    if len(unknown) != 1:
        return ""
    k = size
    for d in free:
        c = const_int(d)
        if c is not None:
            k *= c
    if k <= 0:
        return ""
    return f" (it fits only if {describe(unknown[0]).split(' (')[0]} <= {limit // k})"
