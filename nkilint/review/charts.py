"""The memory charts (SBUF stacked bar, PSUM banks), drawn by pygal.

pygal writes the SVG; this module only chooses the data and the style, and
strips what a self-contained report must not carry: pygal's configuration
``<script>``, its comments (a date, links), and its random chart id (so the
same kernel gives the same report). pygal is the ``review`` extra: without
it the charts are a one-line notice saying how to install it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from .memory_picture import Buffer, MemoryPicture
from .quantity import INF, fmt_bytes
from .svg import PALETTE, esc

INSTALL_HINT = "charts need pygal: python3 -m pip install 'nkilint[review]'"
CAPACITY_COLOR = "#d62728"
UNCERTAIN_COLOR = "#bdbdbd"
FREE_COLOR = "#f0f0f0"
# A live set with no upper bound is drawn this far past the capacity.
UNBOUNDED_SCALE = 2.5


def have_pygal() -> bool:
    try:
        import pygal  # noqa: F401
    except ImportError:
        return False
    return True


def _missing(kind: str, label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {kind}-chart missing" role="img" '
            f'aria-label="{esc(label)}" width="760" height="30" viewBox="0 0 760 30"><title>{esc(label)}</title>'
            f'<text x="10" y="20" font-size="12" fill="#555">{esc(INSTALL_HINT)}</text></svg>')


def _style(colors: tuple[str, ...]):
    from pygal.style import Style

    return Style(background="white", plot_background="white", colors=colors,
                 font_family="DejaVu Sans, Arial, sans-serif", title_font_size=14, legend_font_size=11,
                 label_font_size=11, value_font_size=10, foreground_strong="#222", foreground="#444",
                 opacity="1", opacity_hover="1")


def _finish(chart, kind: str, uid: str, label: str) -> str:
    """pygal's SVG as an inline, script-free element with a stable id."""
    root = chart.render_tree()
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag == "script" or child.tag is ET.Comment:
                parent.remove(child)
    old = root.get("id")
    new = f"chart-{kind}-{uid}"
    root.set("class", f"chart {kind}-chart pygal-chart")
    root.set("role", "img")
    root.set("aria-label", label)
    title = ET.Element("title")
    title.text = label
    root.insert(0, title)
    text = ET.tostring(root, encoding="unicode")
    return text.replace(old, new) if old else text


def _range(lo: float, hi: float) -> str:
    if hi == INF:
        return f">= {fmt_bytes(lo)}"
    if lo == hi:
        return fmt_bytes(lo)
    return f"{fmt_bytes(lo)} - {fmt_bytes(hi)}"


def _qtext(b: Buffer) -> str:
    return _range(b.bytes.lo, b.bytes.hi)


def sbuf_bar(m: MemoryPicture, uid: str) -> str:
    """Two horizontal bars on one byte scale: the buffers live at the peak
    stacked at their known sizes (per partition) with a grey band up to the
    largest size the live set may have, and the target's capacity."""
    label = "SBUF bytes per partition at the peak"
    if not have_pygal():
        return _missing("sbuf", label)
    import pygal

    peak = [b for b in m.sbuf if b.in_peak and b.counted]
    lo_total = sum(b.bytes.lo for b in peak)
    hi_total = sum(b.bytes.hi for b in peak)
    series: list[tuple[str, list, str]] = [
        (f"{b.name} {_qtext(b)}", [b.bytes.lo, None], PALETTE[i % len(PALETTE)]) for i, b in enumerate(peak)]
    if hi_total > lo_total:
        unbounded = hi_total == INF
        top = UNBOUNDED_SCALE * max(m.sbuf_capacity, lo_total) if unbounded else hi_total
        name = "no upper bound" if unbounded else f"sizes not exact: up to {fmt_bytes(hi_total)}"
        series.append((name, [top - lo_total, None], UNCERTAIN_COLOR))
    series.append((f"capacity {fmt_bytes(m.sbuf_capacity)}", [None, m.sbuf_capacity], CAPACITY_COLOR))
    chart = pygal.HorizontalStackedBar(
        js=[], disable_xml_declaration=True, explicit_size=True, width=760, height=150 + 20 * ((len(peak) + 3) // 3),
        style=_style(tuple(c for _, _, c in series)), legend_at_bottom=True, legend_at_bottom_columns=3, truncate_legend=-1,
        show_y_guides=False, margin=8, margin_bottom=8 + 20 * ((len(series) + 2) // 3), spacing=6, truncate_label=-1, x_labels_major_count=6,
        show_minor_x_labels=False,
        title=f"SBUF per partition at the peak: {_range(lo_total, hi_total)} of {fmt_bytes(m.sbuf_capacity)}",
        value_formatter=lambda v: fmt_bytes(v), x_title="bytes per partition",
    )
    chart.x_labels = ["live at the peak", "capacity"]
    for name, values, _ in series:
        chart.add(name, values)
    return _finish(chart, "sbuf", uid, label)


def psum_banks(m: MemoryPicture, uid: str) -> str:
    """One column per bank of a PSUM partition, coloured by the accumulator
    live at the peak that takes it; banks past the capacity are counted
    in red as "over capacity", a range's extra banks named in the title."""
    label = "PSUM banks at the peak"
    if not have_pygal():
        return _missing("psum", label)
    import pygal

    live = [b for b in m.psum if b.in_peak and b.counted and b.first_bank is not None]
    n = max([b.first_bank + int(b.banks.lo) for b in live] + [m.psum_banks])
    owner: dict[int, int] = {}
    for i, b in enumerate(live):
        for k in range(int(b.banks.lo)):
            owner.setdefault(b.first_bank + k, i)
    over = [k for k in range(m.psum_banks, n)]
    colors = tuple(PALETTE[i % len(PALETTE)] for i in range(len(live))) + (FREE_COLOR,)
    colors += (CAPACITY_COLOR,) if over else ()
    extra = [b for b in live if b.banks.hi > b.banks.lo]
    title = (f"PSUM banks at the peak: {m.psum_peak.text()} of {m.psum_banks} "
             f"({fmt_bytes(m.psum_bank_bytes)} per partition each)")
    if extra:
        title += "; sizes not exact: " + ", ".join(f"{b.name} {b.banks.text()} banks" for b in extra)
    chart = pygal.StackedBar(
        js=[], disable_xml_declaration=True, explicit_size=True, width=max(400, 60 + 80 * n), height=190 + 20 * ((len(live) + 4) // 4),
        style=_style(colors), legend_at_bottom=True, legend_at_bottom_columns=4, truncate_legend=-1,
        show_y_labels=False, show_y_guides=False, range=(0, 1), margin=8, margin_bottom=8 + 20 * ((len(live) + 4) // 4), spacing=4, title=title,
        truncate_label=-1,
    )
    chart.x_labels = [f"bank {k}" + (" (over)" if k >= m.psum_banks else "") for k in range(n)]
    for i, b in enumerate(live):
        chart.add(b.name, [1 if owner.get(k) == i and k < m.psum_banks else None for k in range(n)])
    chart.add("free", [1 if k not in owner else None for k in range(n)])
    if over:
        chart.add(f"over capacity ({len(over)} bank{'s' if len(over) != 1 else ''} more than {m.psum_banks})",
                  [1 if k in over else None for k in range(n)])
    return _finish(chart, "psum", uid, label)


__all__ = ["sbuf_bar", "psum_banks", "have_pygal", "INSTALL_HINT"]
