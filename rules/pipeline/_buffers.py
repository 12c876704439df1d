"""Single-buffer detection for NKI301/NKI302: a loop that refills one SBUF
buffer by DMA while compute reads it (or drains it by DMA while compute
writes it), so iteration i+1's transfer cannot overlap iteration i's compute.

Facts (aws-neuron-sdk): a tensor allocated once outside a loop and rewritten
every iteration carries a dependency from one iteration to the next and the
loop "will be serialized" (nki/migration/index.rst, block dimension section,
``sb_blocks_migrated_incorrect``); a tensor allocated inside a static loop
gets a fresh logical tile per iteration that the compiler can place in
rotating buffers (same section; address rotation is always on, 0.3 release
notes); in a dynamic loop (``fori_loop``/``dynamic_range``/``while``)
"tensors allocated inside the loop body are allocated once and reused across
iterations" (nki/deep-dives/nki-dynamic-loops.rst); legacy direct allocation
with one physical tile (``mod_alloc`` without ``num_free_tiles``) serializes
the loop (general/nki/nki_direct_allocation_guide.rst @0521004c).
"""

from __future__ import annotations

from dataclasses import dataclass

from nkilint.model.graph import KernelGraph
from nkilint.model.values import Const, TupleV, const_int

from nkilint.model.loops import INV, Loop, LoopNest, Loops

from . import _dma as dma

DMA_APIS = tuple(dma.COPY_APIS) + ("nki.isa.dma_compute", "nki.isa.sendrecv")


@dataclass
class Refill:
    """One tensor used as a single buffer by a loop."""

    tensor_id: str
    loop: Loop
    pattern: str  # load (DMA refills it) or store (DMA drains it)
    dma_op: str  # the transfer's op (for a legacy load: the nl.load call)
    transfer: dma.Transfer
    partner_op: str  # the compute op on the other side


class Accesses:
    """Who touches each on-chip tensor of a graph, in program order."""

    def __init__(self, graph: KernelGraph) -> None:
        self.graph = graph
        self.transfers = dma.transfers(graph)
        self.by_op: dict[str, dma.Transfer] = {}
        self._touching: dict[str, list[tuple[str, str]]] = {}
        for t in self.transfers:
            self.by_op[t.op_id] = t
            if t.landing_op:
                self.by_op[t.landing_op] = t

    def touching(self, tensor_id: str) -> list[tuple[str, str]]:
        """(op id, 'r' or 'w') for every access of a tensor, in program order."""
        cached = self._touching.get(tensor_id)
        if cached is not None:
            return cached
        g = self.graph
        out = [(op, "w") for op in g.ops_writing(tensor_id)] + [(op, "r") for op in g.ops_reading(tensor_id)]
        out.sort(key=lambda x: (g.seq(x[0]), x[1] == "w"))
        self._touching[tensor_id] = out
        return out

    def is_dma(self, op_id: str) -> bool:
        return op_id in self.by_op or (self.graph.attrs(op_id).get("api") or "") in DMA_APIS

    def dma_writes(self, op_id: str, tensor_id: str) -> bool:
        t = self.by_op.get(op_id)
        return t is not None and t.dst is not None and t.dst.base_id == tensor_id and (
            op_id == t.landing_op or t.landing_op is None)

    def dma_reads(self, op_id: str, tensor_id: str) -> bool:
        t = self.by_op.get(op_id)
        return t is not None and t.src is not None and t.src.base_id == tensor_id


def written_node(graph: KernelGraph, op_id: str, tensor_id: str) -> str | None:
    for node, _ in graph.writes(op_id):
        if graph.base_tensor(node) == tensor_id:
            return node
    return None


def read_node(graph: KernelGraph, op_id: str, tensor_id: str) -> str | None:
    for node, _ in graph.reads(op_id):
        if graph.base_tensor(node) == tensor_id:
            return node
    return None


def single_buffer_use(model, graph: KernelGraph, lf: LoopNest, acc: Accesses, tensor_id: str,
                      loop: Loop, allow_inside: bool = False) -> Refill | None:
    """The loop's iterations all use ``tensor_id`` as one buffer: its first
    access in an iteration is a whole-region write (same region every
    iteration) by a DMA that compute then reads, or by compute that a DMA
    then stores. ``allow_inside``: the tensor may be allocated in the loop
    (dynamic loops, fixed placements)."""
    data = graph.attrs(tensor_id)
    if not allow_inside and loop.loop_id in data.get("loops", ()):
        return None
    accesses = acc.touching(tensor_id)
    inside = [(op, rw) for op, rw in accesses if lf.inside(op, loop.loop_id)]
    if len(inside) < 2:
        return None
    # The buffer must be private to the loop: a use before it (a memset the
    # partial refills rely on) or after it (the last iteration's data) means
    # the loop does not simply need a fresh tile per iteration.
    if len(inside) != len(accesses):
        return None
    first_op, first_rw = inside[0]
    if first_rw != "w":
        return None
    written = written_node(graph, first_op, tensor_id)
    if written is None or lf.access_variance(written, loop) != INV:
        return None
    if not model.analysis(Loops).runs_every_iteration(graph.attrs(first_op).get("site"), loop):
        return None
    later = [(op, rw) for op, rw in inside if graph.seq(op) > graph.seq(first_op)]
    if acc.dma_writes(first_op, tensor_id):
        t = acc.by_op[first_op]
        if t.src is None or lf.access_variance(t.src.node_id, loop) == INV:
            return None  # a loop-invariant load: NKI303's case
        readers = [op for op, rw in later if rw == "r" and not acc.is_dma(op)]
        if not readers:
            return None
        return Refill(tensor_id, loop, "load", t.op_id, t, readers[0])
    if acc.is_dma(first_op):
        return None
    stores = [op for op, rw in later if rw == "r" and acc.dma_reads(op, tensor_id)]
    if not stores or any(acc.dma_writes(op, tensor_id) for op, rw in later if rw == "w"):
        return None
    t = acc.by_op[stores[0]]
    if t.dst is None or t.direction != "store" or lf.access_variance(t.dst.node_id, loop) == INV:
        return None
    return Refill(tensor_id, loop, "store", t.op_id, t, first_op)


def placement_copies(address) -> int | None:
    """Physical copies a legacy ``mod_alloc`` placement provides (None if
    not a mod_alloc or unknown)."""
    if getattr(address, "how", None) != "mod_alloc":
        return None
    kwargs = getattr(address, "kwargs", {}) or {}
    total = 1
    for key in ("num_free_tiles", "num_par_tiles"):
        value = kwargs.get(key)
        if value is None:
            continue
        items = value.items if isinstance(value, TupleV) else (value,)
        for item in items:
            n = const_int(item)
            if n is None:
                return None
            total *= n
    return total


def fixed_address(address, lf: LoopNest, loop: Loop) -> bool:
    """An explicit ``address=(partition, byte)`` that is the same in every iteration."""
    if not isinstance(address, TupleV) or not address.items:
        return False
    if any(isinstance(x, Const) and x.value is None for x in address.items):
        return False
    return lf.variance(address, loop) == INV


def engine_class(graph: KernelGraph, acc: Accesses, op_id: str) -> str:
    if acc.is_dma(op_id):
        return "dma"
    data = graph.attrs(op_id)
    api = data.get("api") or ""
    if api.endswith(("nc_matmul", "nc_matmul_mx", ".matmul")):
        return "tensor"
    return data.get("engine") or "any"


def pipeline_stage(graph: KernelGraph, lf: LoopNest, acc: Accesses, tensor_id: str,
                   loop: Loop) -> tuple[str, str] | None:
    """(writer, reader) API names when the tensor is written first in the
    iteration and then read by an op on another engine."""
    inside = [(op, rw) for op, rw in acc.touching(tensor_id) if lf.inside(op, loop.loop_id)]
    if not inside or inside[0][1] != "w":
        return None
    writer = inside[0][0]
    if writer in acc.by_op and acc.by_op[writer].landing_op == writer:
        writer_name = acc.by_op[writer].api
    else:
        writer_name = graph.attrs(writer).get("api") or "write"
    w = engine_class(graph, acc, writer)
    for op, rw in inside[1:]:
        if rw != "r":
            continue
        r = engine_class(graph, acc, op)
        if r != w and ("any" not in (w, r) or "dma" in (w, r) or "tensor" in (w, r)):
            return writer_name.rsplit(".", 1)[-1], (graph.attrs(op).get("api") or "read").rsplit(".", 1)[-1]
    return None
