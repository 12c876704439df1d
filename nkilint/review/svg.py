"""Small SVG helpers and the memory charts (SBUF bar, PSUM banks).

Hand-written SVG keeps the report free of heavy dependencies and the HTML
self-contained; sizes are computed from the data, text widths estimated
from the font size (the charts leave room for the estimate to be off).
"""

from __future__ import annotations

from html import escape

from .memory_picture import Buffer, MemoryPicture
from .quantity import INF, fmt_bytes

FONT = "font-family=\"DejaVu Sans, Arial, sans-serif\""
# Memory colours (fill, stroke), shared with the graph picture.
MEMORY_COLORS = {
    "hbm": ("#dbe9f6", "#3b6ea8"),
    "sbuf": ("#e1f2dc", "#3d8b37"),
    "psum": ("#fde5c8", "#c46a10"),
    "unknown": ("#ececec", "#7a7a7a"),
}
# Distinct fills for the buffers of one chart (colour-blind friendly order).
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")


def text_width(s: str, size: float = 12) -> float:
    return len(s) * size * 0.6


def esc(s: object) -> str:
    return escape(str(s), quote=True)


def svg_open(width: float, height: float, label: str, klass: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="{klass}" role="img" aria-label="{esc(label)}" '
            f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">'
            f'<title>{esc(label)}</title>')


def hatch_defs(pid: str, color: str = "#888") -> str:
    return (f'<defs><pattern id="{pid}" width="6" height="6" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff"/>'
            f'<line x1="0" y1="0" x2="0" y2="6" stroke="{color}" stroke-width="2"/></pattern></defs>')


def _label(x: float, y: float, s: str, size: int = 12, anchor: str = "start", weight: str = "normal",
           fill: str = "#222") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" {FONT} text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}">{esc(s)}</text>')


def sbuf_bar(m: MemoryPicture, uid: str) -> str:
    """One stacked bar: each buffer live at the peak as a segment of its
    known size (per partition), a hatched band up to the largest size the
    live set may have, and the capacity as a red line."""
    peak = [b for b in m.sbuf if b.in_peak and b.counted]
    width, left, right = 760, 10, 10
    bar_y, bar_h = 38, 30
    lo_total = sum(b.bytes.lo for b in peak)
    hi_total = sum(b.bytes.hi for b in peak)
    scale_max = max(m.sbuf_capacity, lo_total) * 1.08
    if hi_total != INF:
        scale_max = max(scale_max, min(hi_total, 2.5 * m.sbuf_capacity) * 1.04)
    usable = width - left - right

    def x_of(v: float) -> float:
        return left + usable * min(v, scale_max) / scale_max

    legend_rows = (len(peak) + 2) // 3
    height = bar_y + bar_h + 34 + 20 * max(legend_rows, 1) + 8
    pid = f"hatch-sbuf-{uid}"
    out = [svg_open(width, height, "SBUF bytes per partition at the peak", "chart sbuf-chart"), hatch_defs(pid)]
    title = f"SBUF per partition at the peak: {_range(lo_total, hi_total)} of {fmt_bytes(m.sbuf_capacity)}"
    out.append(_label(left, 20, title, 13, weight="bold"))
    out.append(f'<rect x="{left}" y="{bar_y}" width="{usable}" height="{bar_h}" fill="#f7f7f7" stroke="#bbb"/>')
    x = left
    for i, b in enumerate(peak):
        w = max(x_of(b.bytes.lo) - left, 2.0 if b.bytes.lo > 0 else 0.0)
        color = PALETTE[i % len(PALETTE)]
        out.append(f'<rect class="segment" data-buffer="{esc(b.name)}" x="{x:.1f}" y="{bar_y}" width="{w:.1f}" '
                   f'height="{bar_h}" fill="{color}" stroke="#fff" stroke-width="1">'
                   f'<title>{esc(b.name)}: {esc(_qtext(b))}</title></rect>')
        if w > text_width(b.name, 11) + 6:
            out.append(_label(x + w / 2, bar_y + bar_h / 2 + 4, b.name, 11, "middle", fill="#fff"))
        x += w
    if hi_total > lo_total:
        end = x_of(hi_total) if hi_total != INF else left + usable
        out.append(f'<rect class="uncertain" x="{x:.1f}" y="{bar_y}" width="{max(end - x, 2):.1f}" height="{bar_h}" '
                   f'fill="url(#{pid})" stroke="#888" stroke-dasharray="3,2">'
                   f'<title>sizes not known exactly: up to {esc(_range(hi_total, hi_total))}</title></rect>')
        if hi_total == INF:
            out.append(_label(left + usable - 4, bar_y - 4, "no upper bound ->", 11, "end", fill="#555"))
    cap_x = x_of(m.sbuf_capacity)
    out.append(f'<line class="capacity" x1="{cap_x:.1f}" y1="{bar_y - 8}" x2="{cap_x:.1f}" y2="{bar_y + bar_h + 8}" '
               f'stroke="#d62728" stroke-width="2" stroke-dasharray="5,3"/>')
    out.append(_label(cap_x - 4, bar_y + bar_h + 20, f"capacity {fmt_bytes(m.sbuf_capacity)}", 11, "end",
                      fill="#d62728"))
    y = bar_y + bar_h + 40
    col_w = (width - left) / 3
    for i, b in enumerate(peak):
        cx = left + (i % 3) * col_w
        cy = y + (i // 3) * 20
        out.append(f'<rect x="{cx:.1f}" y="{cy - 10}" width="12" height="12" fill="{PALETTE[i % len(PALETTE)]}"/>')
        out.append(_label(cx + 18, cy, f"{b.name} {_qtext(b)}", 11))
    if not peak:
        out.append(_label(left, y, "no SBUF buffer is live (nothing allocated on chip, or nothing used)", 11))
    out.append("</svg>")
    return "".join(out)


def psum_banks(m: MemoryPicture, uid: str) -> str:
    """The banks of one PSUM partition, with the accumulators live at the
    peak in the banks they take (a range's extra banks hatched)."""
    live = [b for b in m.psum if b.in_peak and b.counted and b.first_bank is not None]
    used_hi = max([b.first_bank + int(b.banks.lo) for b in live] + [m.psum_banks])
    n = max(m.psum_banks, used_hi)
    box_w, box_h, gap, left, top = 86, 56, 6, 10, 30
    width = max(left * 2 + n * (box_w + gap), 400)
    height = top + box_h + 44
    pid = f"hatch-psum-{uid}"
    out = [svg_open(width, height, "PSUM banks at the peak", "chart psum-chart"), hatch_defs(pid, "#c46a10")]
    lo = sum(b.banks.lo for b in live)
    out.append(_label(left, 18, f"PSUM banks at the peak: {m.psum_peak.text()} of {m.psum_banks} "
                                f"({fmt_bytes(m.psum_bank_bytes)} per partition each)", 13, weight="bold"))
    owner: dict[int, tuple[int, Buffer, bool]] = {}
    for i, b in enumerate(live):
        for k in range(int(b.banks.lo)):
            owner.setdefault(b.first_bank + k, (i, b, False))
    for bank in range(n):
        x = left + bank * (box_w + gap)
        over = bank >= m.psum_banks
        stroke = "#d62728" if over else "#999"
        held = owner.get(bank)
        fill = PALETTE[held[0] % len(PALETTE)] if held else "#fafafa"
        dash = ' stroke-dasharray="4,2"' if over else ""
        out.append(f'<rect class="bank" data-bank="{bank}" x="{x}" y="{top}" width="{box_w}" height="{box_h}" '
                   f'rx="4" fill="{fill}" stroke="{stroke}" stroke-width="{2 if over else 1}"{dash}>'
                   f'<title>bank {bank}{": " + esc(held[1].name) if held else ": free"}</title></rect>')
        out.append(_label(x + box_w / 2, top + 16, f"bank {bank}", 11, "middle", fill="#fff" if held else "#666"))
        if held:
            name = held[1].name if text_width(held[1].name, 11) < box_w - 6 else held[1].name[:11] + "..."
            out.append(_label(x + box_w / 2, top + 36, name, 11, "middle", "bold", fill="#fff"))
    extra = [b for b in live if b.banks.hi > b.banks.lo]
    if extra:
        out.append(_label(left, top + box_h + 20, "sizes not exact: " + ", ".join(
            f"{b.name} {b.banks.text()} banks" for b in extra), 11, fill="#555"))
    elif not live:
        out.append(_label(left, top + box_h + 20, "no accumulator in PSUM", 11, fill="#555"))
    else:
        out.append(_label(left, top + box_h + 20, f"{lo:.0f} bank{'s' if lo != 1 else ''} taken; placement drawn "
                                                   "packed from bank 0 unless the code places it", 11, fill="#555"))
    out.append("</svg>")
    return "".join(out)


def _range(lo: float, hi: float) -> str:
    if hi == INF:
        return f">= {fmt_bytes(lo)}"
    if lo == hi:
        return fmt_bytes(lo)
    return f"{fmt_bytes(lo)} - {fmt_bytes(hi)}"


def _qtext(b: Buffer) -> str:
    return _range(b.bytes.lo, b.bytes.hi)


__all__ = ["sbuf_bar", "psum_banks", "MEMORY_COLORS", "PALETTE", "esc", "svg_open", "text_width", "FONT"]
