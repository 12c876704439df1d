"""DMA transfers as the pipeline rules see them: which operand is in HBM and
which on chip, how many partitions and bytes per partition move, and which
HBM elements are read or written.

Hardware facts (per NeuronCore, aws-neuron-sdk nki/get-started/about/
nki-dma-overview.rst and nki/deep-dives/nki-dma-bandwidth-guide.rst): 16 DMA
engines, each typically serving 8 of the 128 partitions; bytes per partition
per transfer below 256 B are severely overhead-bound, 2 KiB is the
recommended minimum and 4 KiB saturates; every DMA has a fixed cost of about
1.3 us (descriptor setup and cross-engine semaphores). The target table of
the engine has no DMA facts yet, so they live here, keyed by generation.
"""

from __future__ import annotations

import ast

from nkilint.model.graph import DTYPE_BYTES, HBM, ON_CHIP, KernelGraph  # HBM: read by the rules as dma.HBM
from nkilint.model.transfers import COPY_KINDS, DmaTransfer, Endpoint, copies, endpoint
from nkilint.model.values import Const, DsV, Int, SliceV, TensorV, Value, const_int, int_binop, int_bounds

DMA_ENGINES = 16
PARTITIONS_PER_ENGINE = 8
SEVERE_BYTES = 256
MIN_BYTES = 2048
SATURATE_BYTES = 4096
FIXED_COST_NS = 1300
# Aggregate DMA bandwidth per NeuronCore in bytes per ns (= GB/s), by NeuronCore version.
DMA_BYTES_PER_NS = {2: 272, 3: 368, 4: 528}
MAX_ITEMSIZE = 4  # largest NKI element type (fp32/int32)

# The transfers themselves (which node a DMA reads and writes, where a
# legacy result tile lands) are a model fact shared with the review.
COPY_APIS = COPY_KINDS
COPY_SHORT = {name.rsplit(".", 1)[-1] for name in COPY_APIS}
Side = Endpoint
Transfer = DmaTransfer
side = endpoint


def transfers(graph: KernelGraph) -> list[Transfer]:
    """The graph's plain copies (load, store, copy, transpose), in creation order."""
    return list(copies(graph))


def itemsize(dtype: str | None) -> int | None:
    return DTYPE_BYTES.get(dtype) if dtype else None


def partitions(s: Side) -> Value | None:
    if s.shape is None or s.partition_axis < 0 or s.partition_axis >= len(s.shape):
        return None
    return s.shape[s.partition_axis]


def free_elements(s: Side) -> Value | None:
    """Elements per partition of an on-chip operand (product of the free dims)."""
    if s.shape is None or s.partition_axis < 0 or len(s.shape) < 2:
        return None
    total: Value = Const(1)
    for i, d in enumerate(s.shape):
        if i == s.partition_axis:
            continue
        total = int_binop(ast.Mult, total, d)
    return total


def bytes_per_partition(s: Side) -> tuple[float, float, bool] | None:
    """(low, high, exact_dtype) bytes each partition moves, or None."""
    elems = free_elements(s)
    b = int_bounds(elems) if elems is not None else None
    if b is None or b[0] < 1:
        return None
    size = itemsize(s.dtype)
    if size is not None:
        return b[0] * size, b[1] * size, True
    return b[0], b[1] * MAX_ITEMSIZE, False


def hbm_items(graph: KernelGraph, s: Side) -> list[Value] | None:
    """The index items applied to the HBM base tensor (one view deep only)."""
    if s.node_id == s.base_id:
        return []
    data = graph.attrs(s.node_id)
    parent = [v for _, v, _d in graph.edges_of(s.node_id, "view_of")]
    if not parent or parent[0] != s.base_id:
        return None
    items = data.get("index_v")
    return list(items) if items is not None else None


def item_extent(item: Value, dim: Value | None) -> Value | None:
    """Number of elements an index item selects along its dimension."""
    if isinstance(item, SliceV):
        if not (isinstance(item.step, Const) and item.step.value in (None, 1)):
            return None
        start = Const(0) if isinstance(item.start, Const) and item.start.value is None else item.start
        stop = dim if isinstance(item.stop, Const) and item.stop.value is None else item.stop
        if stop is None:
            return None
        return int_binop(ast.Sub, stop, start)
    if isinstance(item, DsV):
        return item.size
    if isinstance(item, (Int, Const)) and int_bounds(item) is not None:
        return Const(1)
    return None


def item_start(item: Value) -> Value | None:
    if isinstance(item, SliceV):
        return Const(0) if isinstance(item.start, Const) and item.start.value is None else item.start
    if isinstance(item, DsV):
        return item.start
    if isinstance(item, (Int, Const)) and int_bounds(item) is not None:
        return item
    return None


def is_integer_index(item: Value) -> bool:
    return not isinstance(item, (SliceV, DsV, TensorV)) and int_bounds(item) is not None


def fmt_bytes(n: float) -> str:
    n = int(n)
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} B"


def total_bytes_upper(graph: KernelGraph, t: "Transfer") -> float | None:
    """The most bytes a transfer may move in all: the smaller of its two
    sides' element bounds (both move the same elements; an on-chip side is
    bounded by its tile when the view's size is not) times the element size,
    4 bytes when the type is unknown."""
    best = None
    for s in (t.src, t.dst):
        if s is None:
            continue
        # An on-chip view's size is bounded by its tile; an HBM view's is
        # not bounded by its whole tensor (a one-row slice of a large
        # output is still one row).
        shapes = [s.shape]
        if s.buffer in ON_CHIP:
            shapes.append(graph.attrs(s.base_id).get("shape_v"))
        for shape, dtype in ((shape, s.dtype) for shape in shapes):
            if not shape:
                continue
            total = 1.0
            for d in shape:
                b = int_bounds(d)
                if b is None or b[1] < 1:
                    total = None
                    break
                total *= b[1]
            if total is not None:
                total *= itemsize(dtype) or MAX_ITEMSIZE
                # Both sides move the same elements: the tighter bound holds.
                best = total if best is None else min(best, total)
                break
    return best


def exact(v: Value | None) -> int | None:
    return const_int(v) if v is not None else None


def fmt_dim(v: Value | None) -> str:
    if v is None:
        return "?"
    c = const_int(v)
    if c is not None:
        return str(c)
    b = int_bounds(v)
    if b is not None and b[1] != float("inf"):
        return f"<= {int(b[1])}"
    return "unknown"
