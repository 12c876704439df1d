"""The review's HTML and pictures: well-formed inline SVG, the memory charts
drawn from the numbers, the graph laid out by dot or by the pure-Python
layout, and the page rendered in a real headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from browser import count_color, dump_dom, find_chromium, hex_rgb, png_pixels, screenshot
from test_review import CURRENT_MATMUL, LEGACY_ADD, _kernel, _review

from nkilint.review.graph_picture import build_picture, layout
from nkilint.review.output import render
from nkilint.review.render_html import render_html
from nkilint.review import charts
from nkilint.review.charts import CAPACITY_COLOR, FREE_COLOR, INSTALL_HINT, psum_banks, sbuf_bar
from nkilint.review.quantity import fmt_bytes
from nkilint.review.svg import MEMORY_COLORS, PALETTE

SVG_NS = "{http://www.w3.org/2000/svg}"

MANY_ACCUMULATORS = """\
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def many_psum(a, b):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    at = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
    bt = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=at, src=a[0:128, 0:128])
    nisa.dma_copy(dst=bt, src=b[0:128, 0:512])
    accs = []
    for i in range(10):
        acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=at, moving=bt)
        accs.append(acc)
    res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    for acc in accs:
        nisa.tensor_tensor(dst=res, data1=res, data2=acc, op=nl.add)
    nisa.dma_copy(dst=out, src=res)
    return out
"""


def _svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg\b.*?</svg>", html, re.S)]


def test_html_is_self_contained_and_has_every_section(tmp_path):
    review, _ = _review(tmp_path, {"mm.py": CURRENT_MATMUL, "add.py": LEGACY_ADD})
    html = render_html(review)
    assert "<script" not in html and "<link" not in html and "<img" not in html
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls  # the SVG namespace only: nothing is fetched
    for kernel in ("matmul_kernel", "add_kernel"):
        assert f"<code>{kernel}</code>" in html
    for section in ("card", "memory", "graph", "loops", "cost", "findings"):
        assert html.count(f'<h3 class="{section}">') == 2
    svgs = _svgs(html)
    kinds = [s.get("class") for s in svgs]
    assert kinds.count("chart sbuf-chart pygal-chart") == kinds.count("chart psum-chart pygal-chart") == 2
    assert kinds.count("chart graph-chart") == 2
    # The charts are pygal's, named after the buffers, with the target's capacity.
    sbuf = next(s for s in svgs if s.get("class") == "chart sbuf-chart pygal-chart")
    legend = "".join(sbuf.itertext())
    assert "capacity 207.7 KiB" in legend


def _bars(svg: ET.Element) -> dict[str, list[ET.Element]]:
    """pygal's bars by series name: {legend text: [rect of each value drawn]}."""
    out = {}
    series = [g for g in svg.iter(f"{SVG_NS}g") if "series" in (g.get("class") or "").split()]
    legends = [t.text for g in svg.iter(f"{SVG_NS}g") if "legend" in (g.get("class") or "").split()
               for t in g.iter(f"{SVG_NS}text")]
    for name, g in zip(legends, series):
        out[name] = [r for r in g.iter(f"{SVG_NS}rect") if "rect" in (r.get("class") or "").split()
                     and float(r.get("width") or 0) > 0 and float(r.get("height") or 0) > 0]  # pygal draws None as empty
    return out


def _fill(svg_text: str, name_to_series: list[str], name: str) -> str:
    """The fill pygal's stylesheet gives the series called name."""
    i = name_to_series.index(name)
    return re.search(rf"\.color-{i} a:visited\{{stroke:(#[0-9a-f]+);fill:", svg_text).group(1)


def test_sbuf_bar_is_pygals_chart_of_the_peak_buffers_to_scale(tmp_path):
    review, _ = _review(tmp_path, {"add.py": LEGACY_ADD})
    m = _kernel(review, "add_kernel").memory
    text = sbuf_bar(m, "t")
    svg = ET.fromstring(text)
    assert "pygal-chart" in svg.get("class").split() and svg.get("id") == "chart-sbuf-t"
    assert "<script" not in text and "<!--" not in text  # pygal's config script and comments are stripped
    peak = [b for b in m.sbuf if b.in_peak and b.counted]
    assert len(peak) >= 2
    bars = _bars(svg)
    names = list(bars)
    capacity = f"capacity {fmt_bytes(m.sbuf_capacity)}"
    assert names == [f"{b.name} {fmt_bytes(b.bytes.lo)}" for b in peak] + [capacity]
    assert _fill(text, names, capacity) == CAPACITY_COLOR and _fill(text, names, names[0]) == PALETTE[0]
    # One byte scale: a buffer's bar / the capacity bar = its bytes / the capacity.
    (seg,), (cap,) = bars[names[0]], bars[capacity]
    assert float(seg.get("width")) / float(cap.get("width")) == pytest.approx(
        peak[0].bytes.lo / m.sbuf_capacity, rel=0.02)
    assert float(seg.get("x")) == pytest.approx(float(cap.get("x")))  # both start at 0 bytes


def test_sbuf_bar_shows_an_unknown_size_as_a_range(tmp_path):
    review, _ = _review(tmp_path, {"add.py": LEGACY_ADD})
    m = _kernel(review, "add_kernel").memory
    from dataclasses import replace

    from nkilint.review.quantity import Qty

    b0 = next(b for b in m.sbuf if b.in_peak and b.counted)
    wide = replace(b0, bytes=Qty(b0.bytes.lo, b0.bytes.lo * 4))
    text = sbuf_bar(replace(m, sbuf=tuple(wide if b is b0 else b for b in m.sbuf)), "r")
    names = list(_bars(ET.fromstring(text)))
    assert f"{b0.name} {fmt_bytes(b0.bytes.lo)} - {fmt_bytes(b0.bytes.lo * 4)}" in names
    assert any(n.startswith("sizes not exact: up to ") for n in names)


def test_psum_banks_draw_eight_banks_and_the_overflow(tmp_path):
    review, _ = _review(tmp_path, {"mm.py": CURRENT_MATMUL, "many.py": MANY_ACCUMULATORS})
    one = _kernel(review, "matmul_kernel").memory
    text = psum_banks(one, "a")
    svg = ET.fromstring(text)
    assert "pygal-chart" in svg.get("class").split()
    labels = [t.text for g in svg.iter(f"{SVG_NS}g") if (g.get("class") or "").startswith("axis x")
              for t in g.iter(f"{SVG_NS}text")]
    assert labels == [f"bank {k}" for k in range(8)]
    bars = _bars(svg)
    assert list(bars) == ["acc", "free"] and len(bars["acc"]) == 1 and len(bars["free"]) == 7
    assert _fill(text, list(bars), "acc") == PALETTE[0] and _fill(text, list(bars), "free") == FREE_COLOR
    many = _kernel(review, "many_psum").memory
    assert many.psum_over and many.psum_peak.lo == 10
    text = psum_banks(many, "b")
    svg = ET.fromstring(text)
    bars = _bars(svg)
    over = "over capacity (2 banks more than 8)"
    assert list(bars) == ["acc", "free", over]
    assert len(bars["acc"]) == 8 and len(bars["free"]) == 0 and len(bars[over]) == 2
    assert _fill(text, list(bars), over) == CAPACITY_COLOR
    assert "PSUM banks at the peak: 10 of 8" in "".join(svg.itertext())  # pygal draws the title


def test_without_pygal_the_review_works_and_says_how_to_get_charts(tmp_path, monkeypatch):
    monkeypatch.setattr(charts, "have_pygal", lambda: False)
    from nkilint.review import render_html as html_mod
    from nkilint.review import render_markdown as md_mod

    monkeypatch.setattr(html_mod, "have_pygal", lambda: False)
    monkeypatch.setattr(md_mod, "have_pygal", lambda: False)
    review, _ = _review(tmp_path, {"mm.py": CURRENT_MATMUL})
    html = render_html(review, use_dot=False)
    assert "pip install &#x27;nkilint[review]&#x27;" in html and "pygal-chart" not in html
    kinds = [s.get("class") for s in _svgs(html)]
    assert "chart sbuf-chart missing" in kinds and "chart psum-chart missing" in kinds
    text, files = render(review, "markdown", str(tmp_path / "out" / "review.md"))
    assert INSTALL_HINT in text and len(files) == 3


@pytest.mark.parametrize("use_dot", [False, True])
def test_graph_layout_puts_loop_members_inside_their_cluster(tmp_path, use_dot):
    if use_dot and not shutil.which("dot"):
        pytest.skip("Graphviz dot is not installed (the networkx layout is tested without it)")
    review, _ = _review(tmp_path, {"mm.py": CURRENT_MATMUL})
    k = _kernel(review, "matmul_kernel")
    p = layout(build_picture(k.kernel), use_dot=use_dot)
    assert p.engine == ("dot" if use_dot else "networkx")
    ops = [n for n in p.nodes.values() if n.kind == "op"]
    assert {n.label for n in ops} >= {"nisa.dma_copy", "nisa.nc_matmul", "nisa.tensor_copy"}
    (cluster,) = p.clusters.values()
    x0, y0, x1, y1 = cluster.box
    inside = [n for n in p.nodes.values() if n.cluster == cluster.id]
    assert len(inside) == 5  # two DMAs, the matmul, the two loop-local tiles
    for n in inside:
        assert x0 <= n.x - n.width / 2 and n.x + n.width / 2 <= x1 and y0 <= n.y <= y1
    outside = [n for n in p.nodes.values() if n.cluster is None]
    assert {n.memory for n in outside if n.kind == "tensor"} == {"hbm", "psum", "sbuf"}
    for n in p.nodes.values():
        assert 0 <= n.x <= p.width and 0 <= n.y <= p.height
    # Data flows left to right: every forward edge goes rightwards.
    for e in p.edges:
        a, b = p.nodes[e.src], p.nodes[e.dst]
        if a.seq < b.seq and not (a.label == "acc" or b.label == "acc"):
            assert a.x < b.x, (a.label, b.label)


def test_markdown_written_to_a_file_links_svg_pictures(tmp_path):
    review, _ = _review(tmp_path, {"mm.py": CURRENT_MATMUL})
    text, files = render(review, "markdown", str(tmp_path / "out" / "review.md"))
    assert len(files) == 3
    for path, svg in files.items():
        assert Path(path).name in text  # linked from the report
        ET.fromstring(svg.split("\n", 1)[1])


# ------------------------------------------------------------- a browser
def _chromium_or_skip() -> str:
    chromium = find_chromium()
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is not installed: .ci/run installs it (apt-get install chromium)")
        pytest.skip("Chromium is not installed here (.ci/run installs it; apt-get install chromium)")
    return chromium


def test_report_renders_in_headless_chromium(tmp_path):
    chromium = _chromium_or_skip()
    review, _ = _review(tmp_path, {"mm.py": CURRENT_MATMUL, "add.py": LEGACY_ADD})
    page = tmp_path / "review.html"
    page.write_text(render_html(review, use_dot=False), encoding="utf-8")
    dom, console = dump_dom(chromium, page)
    assert console == [], console  # no console message at all: nothing failed to load, no script
    assert dom.count("<svg") >= 8 and dom.count('class="kernel"') == 2
    for figure in ("sbuf", "psum", "graph"):
        assert dom.count(f'data-figure="{figure}"') == 2
    png = tmp_path / "review.png"
    screenshot(chromium, page, png, width=1280, height=3200)
    width, height, rows = png_pixels(png)
    assert width >= 1000 and height >= 3000
    # The pictures were painted: colours that only the SVGs use are on screen.
    for color in (PALETTE[0], MEMORY_COLORS["hbm"][0], MEMORY_COLORS["sbuf"][0], MEMORY_COLORS["psum"][0]):
        assert count_color(rows, hex_rgb(color)) > 200, color


def test_console_check_would_catch_an_error(tmp_path):
    chromium = _chromium_or_skip()
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><body><script>console.error('broken report')</script></body></html>")
    _, console = dump_dom(chromium, page)
    assert any("broken report" in line for line in console)
