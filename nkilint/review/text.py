"""Wording shared by the Markdown and HTML renderers: how a section's
numbers read, so both formats say the same thing."""

from __future__ import annotations

from .card import GENERATION, LAUNCH, Card
from .cost import Cost, Term
from .loop_table import LoopRow
from .memory_picture import Buffer, MemoryPicture
from .quantity import INF, Qty, fmt_bytes, fmt_count, fmt_seconds

LEVEL_ORDER = {"error": 0, "warning": 1, "note": 2}


def qbytes(q: Qty) -> str:
    return q.text(fmt=fmt_bytes)


def qcount(q: Qty) -> str:
    return q.text(fmt=lambda n: fmt_count(n).strip())


def qseconds(q: Qty) -> str:
    return q.text(fmt=fmt_seconds)


def card_rows(card: Card) -> list[tuple[str, str]]:
    rows = [
        ("kernel", f"{card.name} ({card.kind}: {card.how})"),
        ("where", f"{card.file}:{card.line}-{card.end_line}"),
        ("generation", GENERATION.get(card.generation, card.generation)),
        ("target", f"SDK {card.sdk} (NKI {card.nki_version}) {card.target_origin}; {card.hardware}"),
    ]
    if card.launch:
        rows.append(("launch", LAUNCH.get(card.launch, card.launch)))
    if card.launches:
        n = len(card.launches)
        rows.append(("specialized", f"analysed again for {n} launch{'es' if n != 1 else ''} with concrete "
                                    f"arguments (a section each): " + "; ".join(card.launches)))
    if card.partial:
        rows.append(("partial", card.partial))
    return rows


def param_rows(card: Card) -> list[tuple[str, str, str, str]]:
    out = []
    for p in card.params:
        if p.tensor:
            out.append((p.name, p.shape_text or "rank unknown", p.dtype or "unknown (from the caller)",
                        p.buffer or "unknown"))
        else:
            out.append((p.name, "-", "not a tensor" + (f" (default {p.default})" if p.default else ""), "-"))
    return out


def sbuf_headline(m: MemoryPicture) -> str:
    cap = fmt_bytes(m.sbuf_capacity)
    text = f"{qbytes(m.sbuf_peak)} of {cap} per partition at the peak"
    if m.sbuf_peak_line:
        text += f" (line {m.sbuf_peak_line})"
    if m.sbuf_over:
        text += ": OVER CAPACITY"
    if m.sbuf_upper > m.sbuf_peak.hi:
        where = f" (at line {m.sbuf_upper_line})" if m.sbuf_upper_line else ""
        if m.sbuf_upper == INF:
            text += f"; a live set{where} has no upper bound"
        else:
            text += f"; any live set holds at most {fmt_bytes(m.sbuf_upper)} (the largest{where})"
    return text


def psum_headline(m: MemoryPicture) -> str:
    text = f"{m.psum_peak.text()} of {m.psum_banks} banks ({fmt_bytes(m.psum_bank_bytes)} each) at the peak"
    if m.psum_peak_line:
        text += f" (line {m.psum_peak_line})"
    if m.psum_over:
        text += ": OVER CAPACITY"
    return text


def buffer_row(b: Buffer) -> tuple[str, ...]:
    size = qbytes(b.bytes) if b.counted else "not counted"
    banks = b.banks.text() if b.banks is not None and b.counted else ""
    live = f"{b.live[0]}-{b.live[1]}" if b.live[0] and b.live[1] else str(b.live[0] or "?")
    copies = f"x{b.copies}" if b.copies > 1 else ""
    notes = ", ".join(x for x in (
        "in the peak" if b.in_peak else "",
        "explicit placement" if b.explicit else "",
        f"in loop {', '.join(b.loops)}" if b.loops else "",
    ) if x)
    return (b.name, f"{b.shape} {b.dtype or '?'}", size + (f" {copies}" if copies else ""), banks, live, notes)


def loop_row(r: LoopRow) -> tuple[str, ...]:
    engines = ", ".join(r.engines) or "-"
    return ("  " * r.depth + r.header, str(r.line or "?"), r.kind + (" (dynamic)" if r.dynamic else ""),
            r.trip.text(), qbytes(r.dma_in), qbytes(r.dma_out), engines)


def term_row(t: Term) -> tuple[str, str, str, str]:
    amount = qbytes(t.amount) if t.unit == "bytes" else f"{qcount(t.amount)} {t.unit}"
    return (t.resource, amount, qseconds(t.seconds), t.rate)


def cost_headline(c: Cost) -> str:
    if c.bound in ("none",):
        return "no traffic or compute the model could see"
    if c.bound == "undecided":
        return f"bound undecided: {c.bound_why}"
    return f"{c.bound}-bound: {c.bound_why}"


def intensity_text(c: Cost) -> str:
    return (f"{c.intensity.text(fmt=lambda n: f'{n:.3g}')} flops per HBM byte "
            f"(TensorE bf16 and DMA balance at {c.ridge:.0f})")


def sorted_findings(fs):
    return sorted(fs, key=lambda f: (LEVEL_ORDER.get(f.level, 3), f.line, f.rule_id))


__all__ = [
    "qbytes", "qcount", "qseconds", "card_rows", "param_rows", "sbuf_headline", "psum_headline", "buffer_row",
    "loop_row", "term_row", "cost_headline", "intensity_text", "sorted_findings",
]
