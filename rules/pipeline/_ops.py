"""Operand facts for the compute-side pipeline rules (NKI306, NKI309-NKI311):
matmul operands, on-chip operand shapes, and how an operand's index moves
with a loop (which dimension, by how many elements per iteration)."""

from __future__ import annotations

from dataclasses import dataclass

from nkilint.model.graph import KernelGraph
from nkilint.model.values import Const, DsV, SliceV, TensorV, Value, const_int, int_bounds, linear, truth

from nkilint.model.loops import Loop

from . import _dma as dma

TENSOR_ENGINE_APIS = (
    "nki.isa.nc_matmul", "nki.isa.nc_matmul_mx", "nki.language.matmul", "nki.language.transpose",
)
DMA_LIKE = tuple(dma.COPY_APIS) + (
    "nki.isa.dma_compute", "nki.isa.sendrecv", "nki.language.atomic_rmw", "nki.language.gather_flattened",
)
# Ops that do not run an instruction over their operands' elements.
NOT_INSTRUCTIONS = ("nki.language.ndarray", "nki.isa.register_alloc", "nki.isa.register_load",
                    "nki.isa.register_store", "nki.isa.register_move", "nki.language.device_print")

# Instructions that process up to 128 partitions at once, one lane per
# partition (nc_stream_shuffle, VectorE transposes and the like work on
# 32-partition quadrants and are not listed).
LANE_PARALLEL = {
    "activation", "activation_reduce", "tensor_tensor", "tensor_scalar", "tensor_copy", "tensor_reduce", "memset",
    "scalar_tensor_tensor", "reciprocal", "exponential", "tensor_scalar_reduce", "tensor_tensor_scan", "iota",
    "select", "affine_select", "range_select", "bn_stats", "bn_aggr", "max8", "dropout",
}


def is_compute(graph: KernelGraph, op_id: str) -> bool:
    data = graph.attrs(op_id)
    api = data.get("api") or ""
    if api in DMA_LIKE or api in NOT_INSTRUCTIONS or data.get("engine") == "dma":
        return False
    return api.startswith(("nki.isa.", "nki.language."))


@dataclass
class MatmulOperands:
    stationary: str  # node id
    moving: str


def matmul_operands(graph: KernelGraph, op_id: str) -> MatmulOperands | None:
    """Stationary and moving operands of a TensorE matmul (not a transpose)."""
    data = graph.attrs(op_id)
    api = data.get("api") or ""
    params = data.get("params_v") or {}
    reads = {d.get("param"): n for n, d in graph.reads(op_id)}
    if api == "nki.isa.nc_matmul":
        if truth(params.get("is_transpose", Const(False))) is not False:
            return None
        st, mv = reads.get("stationary"), reads.get("moving")
    elif api == "nki.language.matmul":
        if truth(params.get("transpose_x", Const(False))) is not True:
            return None  # without transpose_x the stationary side is an implicit transpose
        st, mv = reads.get("x"), reads.get("y")
    else:
        return None
    if st is None or mv is None:
        return None
    return MatmulOperands(st, mv)


def onchip_free(graph: KernelGraph, node_id: str) -> Value | None:
    s = dma.side(graph, node_id)
    if s.buffer not in dma.ON_CHIP:
        return None
    return dma.free_elements(s)


def dtype_of(graph: KernelGraph, node_id: str) -> str | None:
    return dma.side(graph, node_id).dtype


@dataclass
class Step:
    """How one index item of a view moves with a loop."""

    dim: int
    role: str  # partition, free, block
    coeff: int  # elements per iteration along the dim (0: does not move)
    extent: int | None  # elements the item selects
    integer: bool  # an integer index (the dim is dropped)


def steps(graph: KernelGraph, node_id: str, loop: Loop) -> list[Step] | None:
    """Per index item of a one-level view of an on-chip or HBM tensor: how
    it moves with ``loop`` (None if the view is not a plain index or the
    loop's index is not known)."""
    if loop.sym is None:
        return None
    data = graph.attrs(node_id)
    items = data.get("index_v")
    if items is None:
        return None
    parent = [v for _, v, _d in graph.edges_of(node_id, "view_of")]
    if not parent or graph.attrs(parent[0]).get("kind") != "tensor":
        return None
    base = graph.attrs(parent[0])
    shape = base.get("shape_v")
    pa = base.get("partition_axis") or 0
    out = []
    for d, item in enumerate(items):
        if isinstance(item, TensorV) or (isinstance(item, Const) and item.value is None):
            return None
        start = dma.item_start(item)
        dim = shape[d] if shape is not None and d < len(shape) else None
        extent = dma.item_extent(item, dim)
        if start is None:
            return None
        lin = linear(start)
        if lin is None:
            if int_bounds(start) is not None and const_int(start) is None:
                return None  # moves in an unknown way
            coeff = 0
        else:
            coeff = lin[0].get(loop.sym, 0)
        if base.get("buffer") in dma.HBM:
            role = "free"
        else:
            role = "partition" if d == pa else ("block" if d < pa else "free")
        out.append(Step(d, role, coeff, const_int(extent) if extent is not None else None,
                        dma.is_integer_index(item)))
    return out


def walks(step_list: list[Step] | None, role: str) -> Step | None:
    """The item of ``role`` that takes adjacent chunks in consecutive
    iterations (start moves by exactly its extent)."""
    for s in step_list or ():
        if s.role == role and s.coeff != 0 and s.extent is not None and abs(s.coeff) == s.extent:
            return s
    return None


def slice_step_over_one(item: Value) -> bool:
    if isinstance(item, SliceV) and not (isinstance(item.step, Const) and item.step.value is None):
        step = const_int(item.step)
        return step is not None and step > 1
    return False


__all__ = ["DsV", "MatmulOperands", "Step", "is_compute", "matmul_operands", "onchip_free", "steps", "walks"]
