"""What one launch of a kernel moves and computes, op by op, as ranges.

Read from the kernel graph: a DMA op moves the elements of its operands
(both sides move the same elements, so the tighter of their bounds holds)
times the element size; a matmul does ``2 * K * M * N`` flops; any other
Vector/Scalar/GpSimd op processes the elements it writes. Each op runs once
per iteration of its enclosing loops; an op under a condition the model
could not decide may not run at all (its low end is 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import transfers as dma
from ..model.api_semantics import is_dma, is_matmul
from ..model.dtypes import DTYPE_BYTES
from ..model.graph import HBM, KernelGraph
from ..model.transfers import Endpoint as Side
from .quantity import INF, Qty

MAX_ITEMSIZE = 4  # the widest NKI element type (fp32 / int32)
COMPUTE_ENGINES = ("tensor", "vector", "scalar", "gpsimd")


@dataclass(frozen=True)
class Transfer:
    """One DMA op: direction, bytes per execution, executions per launch."""

    op_id: str
    api: str
    line: int | None
    direction: str  # load (HBM -> on-chip), store (on-chip -> HBM), onchip, hbm, unknown
    src: Side | None
    dst: Side | None
    bytes: Qty
    times: Qty
    loops: tuple[str, ...]

    @property
    def total(self) -> Qty:
        return self.bytes * self.times


@dataclass(frozen=True)
class Work:
    """One compute op: engine, flops (matmul) or elements, per execution."""

    op_id: str
    api: str
    line: int | None
    engine: str  # tensor, vector, scalar, gpsimd; "any" ops are counted on vector
    engine_chosen: bool  # the engine is the compiler's choice (engine-selectable op)
    amount: Qty  # flops for a matmul, elements otherwise
    dtype: str | None  # the input dtype that decides the peak rate
    times: Qty
    loops: tuple[str, ...]

    @property
    def total(self) -> Qty:
        return self.amount * self.times


side = dma.endpoint


def elements(shape: tuple | None) -> Qty:
    if shape is None:
        return Qty.unknown("shape unknown")
    total = Qty.exact(1)
    for d in shape:
        total = total * Qty.of(d)
    return total


def itemsize(dtype: str | None) -> Qty:
    if dtype and dtype in DTYPE_BYTES:
        return Qty.exact(DTYPE_BYTES[dtype])
    return Qty(1, MAX_ITEMSIZE, "element size unknown")


def times(graph: KernelGraph, node_id: str) -> Qty:
    """Executions per launch: the product of the enclosing loops' trip
    counts; 0 at the low end under an undecided condition."""
    data = graph.attrs(node_id)
    total = Qty.exact(1)
    for loop_id in data.get("loops", ()) or ():
        total = total * Qty.of(graph.attrs(loop_id).get("trip_v"))
    if data.get("conditional"):
        total = Qty(0, total.hi, None, total.known)
    return total


def _line(data: dict) -> int | None:
    site = data.get("site")
    return site.line if site is not None else None


def transfers(graph: KernelGraph) -> list[Transfer]:
    out = []
    for t in dma.transfers(graph):
        data = graph.attrs(t.op_id)
        src, dst = t.src, t.dst
        count = None
        for s in (src, dst):
            if s is None:
                continue
            n = elements(s.shape)
            if not n.known:
                continue
            count = n if count is None else Qty(max(count.lo, n.lo), min(count.hi, n.hi))
        # HBM traffic is counted in the HBM side's element type (a DMA may cast).
        hbm = next((s for s in (src, dst) if s is not None and s.buffer in HBM), None)
        dtype = (hbm.dtype if hbm else None) or next((s.dtype for s in (src, dst) if s and s.dtype), None)
        size = (count if count is not None else Qty.unknown("shape unknown")) * itemsize(dtype)
        out.append(Transfer(t.op_id, t.api, _line(data), t.direction, src, dst, size, times(graph, t.op_id),
                            tuple(data.get("loops", ()) or ())))
    return out


def _partition_size(s: Side) -> Qty:
    if s.shape is None or not s.shape:
        return Qty.unknown("shape unknown")
    return Qty.of(s.shape[0])


def _free_size(s: Side) -> Qty:
    if s.shape is None:
        return Qty.unknown("shape unknown")
    total = Qty.exact(1)
    for d in s.shape[1:]:
        total = total * Qty.of(d)
    return total


def _operand(graph: KernelGraph, op_id: str, *params: str) -> Side | None:
    for p in params:
        for n, e in graph.reads(op_id):
            if e.get("param") == p:
                return side(graph, n)
    return None


def _matmul_flops(graph: KernelGraph, op_id: str, data: dict) -> tuple[Qty, str | None]:
    """2 * K * (output elements): K is the contraction (partition) size of
    the moving operand; the output's elements are M * N."""
    moving = _operand(graph, op_id, "moving", "y", "arg1")
    stationary = _operand(graph, op_id, "stationary", "x", "arg0")
    outs = [side(graph, n) for n, _ in graph.writes(op_id)]
    out = outs[0] if outs else None
    contraction = _partition_size(moving) if moving else Qty.unknown("operand unknown")
    if out is not None and out.shape is not None:
        produced = elements(out.shape)
    elif stationary is not None and moving is not None:
        produced = _free_size(stationary) * _free_size(moving)
    else:
        produced = Qty.unknown("operands unknown")
    dtype = (moving.dtype if moving else None) or (stationary.dtype if stationary else None)
    return contraction * produced * 2, dtype


def compute(graph: KernelGraph) -> list[Work]:
    out = []
    for op_id, data in sorted(graph.ops(), key=lambda x: x[1]["seq"]):
        api = str(data.get("api") or "")
        engine = str(data.get("engine") or "none")
        if is_dma(api) or engine in ("dma", "none"):
            continue
        if data.get("assignment") and not data.get("augmented"):
            continue  # a copy into a tensor the compiler writes in place
        if is_matmul(api):
            amount, dtype = _matmul_flops(graph, op_id, data)
            engine, chosen = "tensor", False
        else:
            chosen = engine == "any"
            engine = "vector" if engine == "any" else engine
            if engine not in COMPUTE_ENGINES:
                continue
            outs = [side(graph, n) for n, _ in graph.writes(op_id)]
            ins = [side(graph, n) for n, _ in graph.reads(op_id)]
            sized = [elements(s.shape) for s in outs + ins if s.shape is not None]
            amount = Qty.unknown("shape unknown")
            for n in sized:
                amount = n if not amount.known else amount.max_with(n)
            dtype = next((s.dtype for s in ins + outs if s.dtype), None)
        out.append(Work(op_id, api, _line(data), engine, chosen, amount, dtype, times(graph, op_id),
                        tuple(data.get("loops", ()) or ())))
    return out


def total(items) -> Qty:
    acc = Qty.exact(0)
    for item in items:
        acc = acc + item.total
    return acc


__all__ = ["Side", "Transfer", "Work", "transfers", "compute", "total", "elements", "itemsize", "times", "INF"]
