"""Small SVG helpers and the colours shared by the graph picture and the
memory charts (the charts themselves are pygal's: ``charts.py``); text
widths are estimated from the font size.
"""

from __future__ import annotations

from html import escape


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


__all__ = ["MEMORY_COLORS", "PALETTE", "esc", "svg_open", "text_width", "FONT"]
