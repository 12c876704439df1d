"""The memory picture: SBUF bytes per partition of the live set at the peak
against the target's capacity (one segment per buffer), and the PSUM banks
of 8 with the accumulators in each.

Everything comes from the memory model (``nkilint.model.memory``), the
same numbers ``nkilint graph`` shows under ``"memory"``: a buffer counts as
the model counts it (a loop-local tile once, a tile kept in a list once per
iteration, legacy blocks as one block). The model's sizes are lower bounds;
the picture adds the upper bound of each size (an unknown element type is
1 to 4 bytes, an unbounded dimension has no upper bound), so an unknown
size shows as a range, never as a number that was not derived.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model.dtypes import DTYPE_BYTES
from ..model.memory import KernelMemory, TensorMem, analyze, placement, summarize
from ..model.semantic import Kernel
from ..model.values import int_bounds
from ..targets import Target
from .quantity import INF, Qty

MAX_ITEMSIZE = 4


@dataclass(frozen=True)
class Buffer:
    id: str
    name: str
    line: int | None
    shape: str
    dtype: str | None
    bytes: Qty  # bytes per partition (SBUF) of all its live copies
    banks: Qty | None  # PSUM: banks taken
    copies: int
    counted: bool
    in_peak: bool
    loops: tuple[str, ...]
    live: tuple[int | None, int | None]
    explicit: bool
    first_bank: int | None = None  # PSUM: where the picture draws it (an exact placement, else packed)

    def to_json(self) -> dict:
        out = {
            "id": self.id, "name": self.name, "line": self.line, "shape": self.shape, "dtype": self.dtype,
            "bytes_per_partition": self.bytes.to_json(), "copies": self.copies, "counted": self.counted,
            "in_peak": self.in_peak, "loops": list(self.loops),
            "live": {"from_line": self.live[0], "to_line": self.live[1]}, "explicit": self.explicit,
        }
        if self.banks is not None:
            out["banks"] = self.banks.to_json()
            out["first_bank"] = self.first_bank
        return out


@dataclass(frozen=True)
class MemoryPicture:
    sbuf_capacity: int
    sbuf_peak: Qty  # bytes per partition live at the peak: the model's lower bound .. sum of upper bounds
    sbuf_peak_line: int | None
    sbuf_upper: float  # the most bytes any live set may hold (sum of upper bounds; inf: unbounded)
    sbuf_upper_line: int | None
    sbuf: tuple[Buffer, ...]
    psum_banks: int
    psum_bank_bytes: int
    psum_peak: Qty  # banks
    psum_peak_line: int | None
    psum: tuple[Buffer, ...]
    assumptions: str
    summary: dict = field(default_factory=dict, compare=False)  # the model's summary, as nkilint graph shows it

    @property
    def sbuf_over(self) -> bool:
        return self.sbuf_peak.lo > self.sbuf_capacity

    @property
    def psum_over(self) -> bool:
        return self.psum_peak.lo > self.psum_banks

    def to_json(self) -> dict:
        return {
            "sbuf": {
                "capacity_bytes": self.sbuf_capacity, "peak_bytes": self.sbuf_peak.to_json(),
                "peak_line": self.sbuf_peak_line, "over_capacity": self.sbuf_over,
                "upper_bound_bytes": None if self.sbuf_upper == INF else int(self.sbuf_upper),
                "upper_bound_line": self.sbuf_upper_line,
                "buffers": [b.to_json() for b in self.sbuf],
            },
            "psum": {
                "banks": self.psum_banks, "bank_bytes": self.psum_bank_bytes, "peak_banks": self.psum_peak.to_json(),
                "peak_line": self.psum_peak_line, "over_capacity": self.psum_over,
                "buffers": [b.to_json() for b in self.psum],
            },
            "assumptions": self.assumptions,
        }


def tile_bytes(t: TensorMem) -> Qty:
    """Bytes per partition of one physical tile: the model's lower bound, and
    an upper bound from the dims' upper bounds times the element size (4
    bytes, the widest type, when the type is unknown)."""
    lo = t.tile_lo
    hi = t.tile_hi
    if hi == INF:
        hi = _upper_from_shape(t)
    return Qty(lo, max(hi, lo), None if t.exact else "size not exact")


def _upper_from_shape(t: TensorMem) -> float:
    if t.shape_v is None:
        return INF
    axis = t.partition_axis
    total = float(DTYPE_BYTES.get(t.dtype, MAX_ITEMSIZE)) if t.dtype else float(MAX_ITEMSIZE)
    for i, d in enumerate(t.shape_v):
        if i <= axis:
            continue  # block dimensions count one block; the partition dim is not per partition
        b = int_bounds(d)
        if b is None or b[1] == INF:
            return INF
        total *= b[1]
    return total


def _banks(t: TensorMem, bank_bytes: int) -> Qty:
    lo = t.banks(bank_bytes)
    b = tile_bytes(t)
    hi = INF if b.hi == INF else max(1, -(-int(b.hi) // bank_bytes))
    return Qty(lo * t.copies, hi * t.copies if hi != INF else INF)


def _buffer(mem: KernelMemory, t: TensorMem, peak_ids: set[str], at_seq: dict[int, str],
            first_bank: int | None = None) -> Buffer:
    live_to = None
    site = mem.graph.attrs(at_seq.get(t.end, t.node_id)).get("site")
    if site is not None:
        live_to = getattr(site.node, "end_lineno", None) or site.line
    size = tile_bytes(t) * t.copies if t.counted else Qty.exact(0)
    return Buffer(
        id=t.node_id, name=t.name, line=t.line, shape=t.shape_text(), dtype=t.dtype, bytes=size,
        banks=_banks(t, mem.bank_bytes) if t.buffer == "psum" and t.counted else (
            Qty.exact(0) if t.buffer == "psum" else None),
        copies=t.copies, counted=t.counted, in_peak=t.node_id in peak_ids, loops=t.loops,
        live=(t.line, live_to), explicit=t.explicit, first_bank=first_bank,
    )


def _pack_banks(mem: KernelMemory, live: list[TensorMem]) -> dict[str, int]:
    """Where the picture draws each accumulator live at the peak: at its
    exact placement when it has one, else packed from bank 0 in program
    order (the compiler's own assignment is not known statically)."""
    bank = mem.bank_bytes
    out: dict[str, int] = {}
    taken: set[int] = set()
    for t in live:
        p = placement(t, mem.target) if t.explicit else None
        if p is not None:
            out[t.node_id] = p.b0 // bank
            taken.update(range(p.b0 // bank, p.b0 // bank + t.banks(bank) * t.copies))
    nxt = 0
    for t in sorted(live, key=lambda u: u.start):
        if t.node_id in out:
            continue
        while nxt in taken:
            nxt += 1
        out[t.node_id] = nxt
        n = t.banks(bank) * t.copies
        taken.update(range(nxt, nxt + n))
        nxt += n
    return out


def _upper_peak(mem: KernelMemory, buffers: dict[str, Buffer]) -> tuple[float, int | None]:
    """The largest sum of upper bounds over the live sets at each allocation
    (every live tensor counted, as an upper bound must)."""
    best, line = 0.0, None
    for t in mem.of("sbuf"):
        if not t.counted:
            continue
        total = sum(buffers[u.node_id].bytes.hi for u in mem.live_at("sbuf", t.start))
        if total > best:
            best, line = total, t.line
    return best, line


def build_memory(kernel: Kernel, target: Target) -> MemoryPicture:
    mem = analyze(kernel, target)
    summary = summarize(kernel, target)
    sbuf_peak_lo, sbuf_live = mem.peak("sbuf")
    psum_peak_lo, psum_live = mem.peak("psum")
    sbuf_ids = {t.node_id for t in sbuf_live}
    psum_ids = {t.node_id for t in psum_live}
    at_seq = mem.graph.memo.get("memory.at_seq") or {mem.graph.seq(n): n for n in mem.graph.g.nodes}
    sbuf = tuple(_buffer(mem, t, sbuf_ids, at_seq) for t in sorted(mem.of("sbuf"), key=lambda t: t.start))
    banks_at = _pack_banks(mem, [t for t in psum_live if t.counted])
    psum = tuple(_buffer(mem, t, psum_ids, at_seq, banks_at.get(t.node_id)) for t in sorted(mem.of("psum"), key=lambda t: t.start))
    sbuf_hi = sum((b.bytes.hi for b in sbuf if b.in_peak), 0.0)
    upper, upper_line = _upper_peak(mem, {b.id: b for b in sbuf})
    psum_hi = sum((b.banks.hi for b in psum if b.in_peak and b.banks is not None), 0.0)
    return MemoryPicture(
        sbuf_capacity=mem.capacity("sbuf"),
        sbuf_peak=Qty(sbuf_peak_lo, max(sbuf_hi, sbuf_peak_lo)),
        sbuf_peak_line=summary["sbuf"]["peak_line"],
        sbuf_upper=max(upper, sbuf_peak_lo),
        sbuf_upper_line=upper_line,
        sbuf=sbuf,
        psum_banks=mem.capacity("psum"),
        psum_bank_bytes=mem.bank_bytes,
        psum_peak=Qty(psum_peak_lo, max(psum_hi, psum_peak_lo)),
        psum_peak_line=summary["psum"]["peak_line"],
        psum=psum,
        assumptions=summary["assumptions"],
        summary=summary,
    )


__all__ = ["Buffer", "MemoryPicture", "build_memory", "tile_bytes"]
