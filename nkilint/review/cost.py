"""The cost estimate of one launch: bytes between HBM and on-chip memory,
TensorE flops and Vector/Scalar/GpSimd elements, the time each would take
at the target's peak rates, the arithmetic intensity, and the bound.

A first-order (roofline) estimate, stated with its assumptions: one
NeuronCore; every engine and the DMA queues run at their peak and overlap
perfectly, so the launch takes as long as its busiest resource; no DMA
fixed cost; an engine-selectable op runs on the Vector engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .hardware import Peaks, peaks
from .quantity import INF, Qty, fmt_count, fmt_rate, fmt_seconds
from .work import Transfer, Work, total


@dataclass(frozen=True)
class Term:
    """One resource: how much it has to do and how long that takes."""

    resource: str  # dma, tensor, vector, scalar, gpsimd
    amount: Qty  # bytes (dma), flops (tensor), elements (others)
    unit: str
    seconds: Qty
    rate: str  # the peak rate(s) used, for the reader

    def to_json(self) -> dict:
        return {"resource": self.resource, "amount": self.amount.to_json(), "unit": self.unit,
                "seconds": self.seconds.to_json(), "rate": self.rate}


@dataclass(frozen=True)
class Cost:
    target: str
    hbm_read: Qty  # bytes HBM -> on-chip per launch
    hbm_written: Qty  # bytes on-chip -> HBM per launch
    onchip_copies: Qty  # bytes moved by DMA within on-chip memory
    flops: Qty
    intensity: Qty  # flops per HBM byte
    ridge: float  # flops per byte at which TensorE (bf16) and DMA take equally long
    terms: tuple[Term, ...]
    bound: str  # dma, tensor, vector, scalar, gpsimd, undecided, none
    bound_why: str
    assumptions: tuple[str, ...] = field(default=())
    rates: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "target": self.target, "hbm_read_bytes": self.hbm_read.to_json(),
            "hbm_written_bytes": self.hbm_written.to_json(), "onchip_dma_bytes": self.onchip_copies.to_json(),
            "matmul_flops": self.flops.to_json(), "arithmetic_intensity": self.intensity.to_json(),
            "ridge_flops_per_byte": round(self.ridge, 3), "terms": [t.to_json() for t in self.terms],
            "bound": self.bound, "bound_why": self.bound_why, "assumptions": list(self.assumptions),
            "rates": self.rates,
        }


def _seconds(amount: Qty, slow: float, fast: float) -> Qty:
    """Time range of an amount between the slowest and fastest peak rate."""
    return Qty(amount.lo / fast, amount.hi / slow if amount.hi != INF else INF, None, amount.known)


def _engine_term(engine: str, items: list[Work], p: Peaks) -> Term | None:
    mine = [w for w in items if w.engine == engine]
    if not mine:
        return None
    amount = Qty.exact(0)
    seconds = Qty.exact(0)
    rates = set()
    for w in mine:
        if engine == "tensor":
            slow, fast = p.matmul_flops_per_s(w.dtype)
        else:
            slow, fast = p.engine_elements_per_s(engine, w.dtype)
        amount = amount + w.total
        seconds = seconds + _seconds(w.total, slow, fast)
        rates.add((slow, fast))
    unit = "flops" if engine == "tensor" else "elements"
    per = "FLOP" if engine == "tensor" else "elem"
    rate = ", ".join(sorted(fmt_rate(a, per) if a == b else f"{fmt_rate(a, per)} - {fmt_rate(b, per)}"
                            for a, b in rates))
    return Term(engine, amount, unit, seconds, rate)


def _bound(terms: list[Term]) -> tuple[str, str]:
    known = [t for t in terms if t.amount.known and t.seconds.hi > 0]
    if not terms or all(t.amount.is_exact and t.amount.lo == 0 for t in terms):
        return "none", "the kernel moves and computes nothing the model could see"
    if not known:
        return "undecided", "no amount of work or traffic is known"
    # A resource bounds the launch when its shortest time is at least every
    # other resource's longest.
    for t in known:
        if all(t.seconds.lo >= u.seconds.hi for u in terms if u is not t):
            return t.resource, f"{t.resource} takes at least {fmt_seconds(t.seconds.lo)}, every other resource at most as long"
    ranked = sorted(known, key=lambda t: -t.seconds.lo)
    lead = ranked[0]
    unbounded = [t.resource for t in terms if t.seconds.hi == INF]
    why = "the time ranges overlap"
    if unbounded:
        verb = "has" if len(unbounded) == 1 else "have"
        why += f" ({', '.join(unbounded)} {verb} no upper bound: a size or trip count the model could not bound)"
    if lead.seconds.lo <= 0:
        return "undecided", f"{why}; every resource may do no work (a loop that may run zero times)"
    return "undecided", f"{why}; {lead.resource} has the largest lower bound ({fmt_seconds(lead.seconds.lo)})"


def build_cost(target: str, transfers: list[Transfer], work: list[Work]) -> Cost:
    p = peaks(target)
    loads = [t for t in transfers if t.direction == "load"]
    stores = [t for t in transfers if t.direction == "store"]
    onchip = [t for t in transfers if t.direction == "onchip"]
    unknown_dir = [t for t in transfers if t.direction in ("unknown", "hbm")]
    read, written = total(loads), total(stores)
    hbm = read + written
    terms: list[Term] = []
    if transfers:
        moved = hbm + total(onchip) + total(unknown_dir)
        rate = p.transfer_bytes_per_s
        terms.append(Term("dma", moved, "bytes", moved / rate, fmt_rate(rate, "B")))
    for engine in ("tensor", "vector", "scalar", "gpsimd"):
        term = _engine_term(engine, work, p)
        if term is not None:
            terms.append(term)
    flops = total([w for w in work if w.engine == "tensor"])
    if hbm.lo > 0 or hbm.hi < INF:
        intensity = Qty(flops.lo / hbm.hi if hbm.hi not in (0, INF) else 0,
                        flops.hi / hbm.lo if hbm.lo > 0 else INF, None, flops.known and hbm.known)
    else:
        intensity = Qty.unknown("no HBM traffic bounded")
    ridge = p.tensor_flops_per_s["bfloat16"] / p.transfer_bytes_per_s
    bound, why = _bound(terms)
    assumptions = (
        f"one {p.neuron_core} of {p.target}; DMA at {fmt_rate(p.transfer_bytes_per_s, 'B')}, the smaller of the "
        f"16 DMA engines' {fmt_rate(p.dma_bytes_per_s, 'B')} and the core's share of HBM "
        f"({fmt_rate(p.hbm_device_bytes_per_s, 'B')} / {p.cores_per_device} cores)",
        "every engine and the DMA queues at their peak rate, overlapping perfectly: the launch takes as long "
        "as its busiest resource (a lower bound of the real time)",
        "no fixed cost per DMA or per instruction; small transfers and short instructions are slower "
        "(see the pipeline findings)",
        "an engine-selectable op (tensor_copy, tensor_tensor, memset, nl.* math) is counted on the Vector engine",
        "a loop with an unknown trip count, or a dimension with no upper bound, makes the upper end unbounded; "
        "an op under an undecided condition may not run (low end 0)",
    )
    rates = {
        "hbm_device_bytes_per_s": p.hbm_device_bytes_per_s, "cores_per_device": p.cores_per_device,
        "dma_bytes_per_s": p.dma_bytes_per_s, "transfer_bytes_per_s": p.transfer_bytes_per_s,
        "tensor_flops_per_s": p.tensor_flops_per_s, "sources": p.sources,
    }
    return Cost(target, read, written, total(onchip), flops, intensity, ridge, tuple(terms), bound, why,
                assumptions, rates)


__all__ = ["Cost", "Term", "build_cost"]
