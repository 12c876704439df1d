"""Which ops the memory rules treat as compute-engine or GpSimd instructions,
and what an op writes."""

from __future__ import annotations

from nkilint.model.values import ApiRef, Const, Value
from nkilint.model.views import Op, Operand

# nki.language calls that reshape or describe rather than compute.
NOT_COMPUTE = {
    "broadcast_to", "expand_dims", "finfo", "gemm_grid", "gemm_stationary_grid", "all_reduce", "loop_reduce",
}
# nki.isa calls that take HBM operands on purpose.
HBM_OK = {"core_barrier"}


def is_compute(op: Op) -> bool:
    """An instruction of a compute engine (not DMA, not metadata, not the
    legacy ``t[...] = value`` idiom, which may lower to a DMA)."""
    info = op.info
    if info is None or info.kind not in ("compute", "matmul", "transpose"):
        return False
    if op.assignment or op.augmented:
        return False
    if info.module == "nki.language" and info.short in NOT_COMPUTE:
        return False
    if info.module == "nki.isa" and info.short in HBM_OK:
        return False
    return op.engine not in ("dma", "none", "sync")


def is_gpsimd(op: Op) -> bool:
    """The op runs on GpSimd: by its API, by ``engine=``, or
    ``tensor_tensor(op=nl.power)`` (which only GpSimd implements)."""
    if op.engine == "gpsimd":
        return True
    if op.api in ("nki.isa.tensor_tensor", "nki.isa.tensor_scalar") and op.engine in (None, "any"):
        alu = op.param("op")
        if isinstance(alu, ApiRef) and str(alu.qual.name).endswith(".power"):
            return True
    return False


def engine_arg(op: Op) -> str | None:
    """The engine named by an explicit ``engine=`` argument, if any."""
    v = op.param("engine")
    if isinstance(v, ApiRef):
        name = str(v.qual.name).rsplit(".", 1)[-1]
        return name[: -len("_engine")] if name.endswith("_engine") else name
    return None


def written_dst(op: Op) -> Operand | None:
    """The operand an op writes its result to: ``dst`` (current API) or the
    returned tile (legacy, param ``result``)."""
    written = [o for o in op.operands() if o.written]
    for wanted in ("dst", "result"):
        for o in written:
            if o.param == wanted:
                return o
    return None


def is_true(v: Value | None) -> bool:
    return isinstance(v, Const) and v.value is True
