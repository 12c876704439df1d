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
from nkilint.review.svg import MEMORY_COLORS, PALETTE, psum_banks, sbuf_bar

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
    assert kinds.count("chart sbuf-chart") == kinds.count("chart psum-chart") == kinds.count("chart graph-chart") == 2


def test_sbuf_bar_draws_the_peak_buffers_to_scale(tmp_path):
    review, _ = _review(tmp_path, {"add.py": LEGACY_ADD})
    m = _kernel(review, "add_kernel").memory
    svg = ET.fromstring(sbuf_bar(m, "t"))
    segments = [r for r in svg.iter(f"{SVG_NS}rect") if r.get("class") == "segment"]
    peak = [b for b in m.sbuf if b.in_peak and b.counted]
    assert [s.get("data-buffer") for s in segments] == [b.name for b in peak] and len(peak) >= 2
    capacity = next(ln for ln in svg.iter(f"{SVG_NS}line") if ln.get("class") == "capacity")
    # Widths are proportional to bytes: segment / capacity line position.
    cap_x = float(capacity.get("x1")) - 10
    seg_w = float(segments[0].get("width"))
    assert seg_w / cap_x == pytest.approx(peak[0].bytes.lo / m.sbuf_capacity, rel=0.02)


def test_psum_banks_draw_eight_banks_and_the_overflow(tmp_path):
    review, _ = _review(tmp_path, {"mm.py": CURRENT_MATMUL, "many.py": MANY_ACCUMULATORS})
    one = _kernel(review, "matmul_kernel").memory
    banks = [r for r in ET.fromstring(psum_banks(one, "a")).iter(f"{SVG_NS}rect") if r.get("class") == "bank"]
    assert len(banks) == 8 and banks[0].get("fill") == PALETTE[0] and banks[1].get("fill") == "#fafafa"
    many = _kernel(review, "many_psum").memory
    assert many.psum_over and many.psum_peak.lo == 10
    drawn = [r for r in ET.fromstring(psum_banks(many, "b")).iter(f"{SVG_NS}rect") if r.get("class") == "bank"]
    assert len(drawn) == 10
    assert all(r.get("stroke") == "#d62728" for r in drawn[8:]) and drawn[7].get("stroke") != "#d62728"


@pytest.mark.parametrize("use_dot", [False, True])
def test_graph_layout_puts_loop_members_inside_their_cluster(tmp_path, use_dot):
    if use_dot and not shutil.which("dot"):
        pytest.skip("Graphviz dot is not installed (the pure-Python layout is tested without it)")
    review, _ = _review(tmp_path, {"mm.py": CURRENT_MATMUL})
    k = _kernel(review, "matmul_kernel")
    p = layout(build_picture(k.kernel), use_dot=use_dot)
    assert p.engine == ("dot" if use_dot else "python")
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
