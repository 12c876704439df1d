"""DMA transfers of a kernel graph: for each DMA op, the node it reads, the
node it writes and, for a legacy call that returns a tile, the tensor the
tile lands in.

The pipeline rules (sizes, strides, reuse of what a DMA moves) and the
review's traffic table (bytes per launch) read the same extraction from
here, so a DMA means the same endpoints to both.

Which operand is the source and which the destination is decided by the
parameter the graph records: a plain copy names them (``src=``/``dst=``,
legacy ``nl.store(dst, value=)``, a legacy result tile). Other DMAs
(collectives, ``dma_compute``, ``sendrecv``) fall back to the first operand
whose memory the model knows.

A legacy ``t[...] = nl.load(...)`` copies the returned tile whole into
``t``; the compiler writes ``t`` directly, so the transfer's destination
is ``t`` (with its type and size) and the assignment op is its landing.
"""

from __future__ import annotations

from dataclasses import dataclass

from .api_semantics import is_dma
from .dtypes import dtype_of
from .graph import HBM, ON_CHIP, KernelGraph
from .values import Const, Value, int_bounds

# DMA APIs whose operands are a plain source and destination, and what each does.
COPY_KINDS = {
    "nki.language.load": "load",
    "nki.language.store": "store",
    "nki.isa.dma_copy": "copy",
    "nki.language.load_transpose2d": "transpose",
    "nki.isa.dma_transpose": "transpose",
}

# Parameters naming a DMA's source (in order of preference) and destination.
SOURCE_PARAMS = ("src", "data", "value", "arg0")
DESTINATION_PARAMS = ("dst", "result")
KNOWN_BUFFERS = HBM + ON_CHIP


@dataclass(frozen=True)
class Endpoint:
    """One operand of a transfer: the node read or written and its base tensor.

    ``partition_axis`` is the position of the partition dimension in
    ``shape`` (a legacy block tensor's), -1 when a view of a block tensor
    leaves it undecided."""

    node_id: str
    base_id: str
    name: str
    buffer: str
    shape: tuple[Value, ...] | None
    dtype: str | None
    partition_axis: int = 0


@dataclass(frozen=True)
class DmaTransfer:
    op_id: str
    api: str
    kind: str | None  # load, store, copy, transpose for the plain copies (COPY_KINDS); None for other DMAs
    src: Endpoint | None
    dst: Endpoint | None
    # For a legacy `t[...] = nl.load(...)`: the assignment op that lands the tile.
    landing_op: str | None = None

    @property
    def hbm(self) -> Endpoint | None:
        for side in (self.src, self.dst):
            if side is not None and side.buffer in HBM:
                return side
        return None

    @property
    def onchip(self) -> Endpoint | None:
        for side in (self.dst, self.src):
            if side is not None and side.buffer in ON_CHIP:
                return side
        return None

    @property
    def direction(self) -> str:
        """load (HBM -> on-chip), store (on-chip -> HBM), onchip, hbm or unknown."""
        s = self.src.buffer if self.src else "unknown"
        d = self.dst.buffer if self.dst else "unknown"
        if s in HBM and d in ON_CHIP:
            return "load"
        if s in ON_CHIP and d in HBM:
            return "store"
        if s in ON_CHIP and d in ON_CHIP:
            return "onchip"
        if s in HBM and d in HBM:
            return "hbm"
        return "unknown"


def endpoint(graph: KernelGraph, node_id: str) -> Endpoint:
    """The endpoint facts of a tensor or view node."""
    data = graph.attrs(node_id)
    base_id = graph.base_tensor(node_id)
    base = graph.attrs(base_id)
    buffer = base.get("buffer") or data.get("buffer") or "unknown"
    axis = 0
    if node_id == base_id:
        axis = base.get("partition_axis") or 0
    elif base.get("partition_axis"):
        # A view of a legacy block tensor: the partition dim is first only if
        # every block dimension is indexed by an integer.
        items = data.get("index_v") or []
        blocks = base.get("partition_axis")
        if len(items) < blocks or any(int_bounds(x) is None or isinstance(x, Const) and x.value is None
                                      for x in items[:blocks]):
            axis = -1
    return Endpoint(node_id, base_id, str(data.get("name") or base.get("name") or node_id), str(buffer),
                    data.get("shape_v"), dtype_of(graph, node_id), axis)


def landing(graph: KernelGraph, result_id: str) -> str | None:
    """The assignment op that copies a legacy result tile whole into a tensor
    (``t[...] = nl.load(...)``), or None. An assignment of a slice of the tile
    later on is a copy, not the landing."""
    for op_id in graph.ops_reading(result_id):
        op = graph.attrs(op_id)
        if not op.get("assignment"):
            continue
        if any(n == result_id and e.get("param") == "value" for n, e in graph.reads(op_id)):
            return op_id
    return None


def _by_param(edges: list[tuple[str, dict]], params: tuple[str, ...]) -> str | None:
    named: dict[str, str] = {}
    for node_id, edge in edges:
        named[edge.get("param")] = node_id  # the last edge of a parameter, as the graph records it
    return next((named[p] for p in params if p in named), None)


def _first_known(graph: KernelGraph, nodes: list[str]) -> str | None:
    return next((n for n in nodes if endpoint(graph, n).buffer in KNOWN_BUFFERS), nodes[0] if nodes else None)


def _extract(graph: KernelGraph, op_id: str, api: str) -> DmaTransfer:
    reads = graph.reads(op_id)
    writes = graph.writes(op_id)
    src_id = _by_param(reads, SOURCE_PARAMS)
    dst_id = _by_param(writes, DESTINATION_PARAMS)
    kind = COPY_KINDS.get(api)
    if kind is None:
        # No named source or destination: the first operand in known memory.
        src_id = src_id or _first_known(graph, [n for n, _ in reads])
        dst_id = dst_id or _first_known(graph, [n for n, _ in writes])
    landed = None
    if dst_id is not None and any(n == dst_id and e.get("param") == "result" for n, e in writes):
        landed = landing(graph, dst_id)
        if landed is not None:
            dst_id = next(n for n, e in graph.writes(landed) if e.get("param") == "dst")
    return DmaTransfer(op_id, api, kind, endpoint(graph, src_id) if src_id else None,
                       endpoint(graph, dst_id) if dst_id else None, landed)


def transfers(graph: KernelGraph) -> tuple[DmaTransfer, ...]:
    """Every DMA op of a finished graph, in creation order (built once, kept
    with the graph)."""
    found = graph.memo.get("dma_transfers")
    if found is None:
        ops = sorted(graph.ops(), key=lambda x: x[1]["seq"])
        found = graph.memo["dma_transfers"] = tuple(
            _extract(graph, op_id, str(data.get("api") or "")) for op_id, data in ops if is_dma(str(data.get("api") or "")))
    return found


def copies(graph: KernelGraph) -> tuple[DmaTransfer, ...]:
    """The plain copies (COPY_KINDS) among the graph's transfers."""
    return tuple(t for t in transfers(graph) if t.kind is not None)


__all__ = ["COPY_KINDS", "Endpoint", "DmaTransfer", "endpoint", "landing", "transfers", "copies"]
