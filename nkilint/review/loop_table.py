"""The loop nest table: each loop with its kind, trip count, what one
iteration moves between HBM and on-chip memory, and which engines run in it.

"Per iteration" counts every DMA inside the loop, nested loops included
(an inner loop's DMAs count once per inner iteration).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.loops import NON_LOOPS, nest_of
from ..model.semantic import Kernel
from .quantity import Qty
from .work import Transfer, Work


@dataclass(frozen=True)
class LoopRow:
    id: str
    line: int | None
    header: str  # `for k in nl.affine_range(K // 128)`
    kind: str
    depth: int
    parent: str | None
    trip: Qty
    dynamic: bool
    dma_in: Qty  # bytes HBM -> on-chip per iteration
    dma_out: Qty  # bytes on-chip -> HBM per iteration
    dmas: int  # DMA ops in the body (nested included)
    engines: tuple[str, ...]  # compute engines of the ops in the body (nested included)
    ops: int

    def to_json(self) -> dict:
        return {
            "id": self.id, "line": self.line, "header": self.header, "kind": self.kind, "depth": self.depth,
            "parent": self.parent, "trip_count": self.trip.to_json(), "dynamic": self.dynamic,
            "dma_in_bytes_per_iteration": self.dma_in.to_json(),
            "dma_out_bytes_per_iteration": self.dma_out.to_json(), "dma_ops": self.dmas,
            "engines": list(self.engines), "ops": self.ops,
        }


def _inner_times(graph, loops: tuple[str, ...], loop_id: str) -> Qty:
    """Executions of a node per iteration of ``loop_id``: the trip counts of
    the loops between them."""
    total = Qty.exact(1)
    inside = False
    for lid in loops:
        if inside:
            total = total * Qty.of(graph.attrs(lid).get("trip_v"))
        if lid == loop_id:
            inside = True
    return total


def build_loops(kernel: Kernel, transfers: list[Transfer], work: list[Work]) -> list[LoopRow]:
    graph = kernel.graph
    nest = nest_of(graph)
    rows = []
    ops_in: dict[str, int] = {}
    for _, d in graph.ops():
        for lid in d.get("loops") or ():
            ops_in[lid] = ops_in.get(lid, 0) + 1
    for loop_id, data in sorted(graph.loops(), key=lambda x: x[1]["seq"]):
        if data.get("loop_kind") in NON_LOOPS:
            continue
        loop = nest.loop(loop_id)
        dma_in, dma_out = Qty.exact(0), Qty.exact(0)
        dmas = 0
        for t in transfers:
            if loop_id not in t.loops:
                continue
            dmas += 1
            moved = t.bytes * _inner_times(graph, t.loops, loop_id)
            if t.direction == "load":
                dma_in = dma_in + moved
            elif t.direction == "store":
                dma_out = dma_out + moved
        engines = sorted({w.engine for w in work if loop_id in w.loops} | ({"dma"} if dmas else set()))
        ops = ops_in.get(loop_id, 0)
        rows.append(LoopRow(
            id=loop_id,
            line=loop.site.line if loop.site is not None else None,
            header=loop.header(),
            kind=str(data.get("loop_kind")),
            depth=len(loop.ancestors),
            parent=loop.parent,
            trip=Qty.of(loop.trip),
            dynamic=loop.dynamic,
            dma_in=dma_in,
            dma_out=dma_out,
            dmas=dmas,
            engines=tuple(engines),
            ops=ops,
        ))
    return rows


__all__ = ["LoopRow", "build_loops"]
