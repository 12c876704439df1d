"""The reports issue 16's "done when" names, made by the command line:
`nkilint review ... --original ... -o report.html` for the bundled example
and for a fixture kernel of each generation. Each opens in headless Chromium
with every section and picture, and its memory and PSUM figures are the
ones `nkilint graph` and `nkilint stats` give for the same file."""

from __future__ import annotations

import html as htmllib
import json
import re
from pathlib import Path

import pytest
from browser import count_color, dump_dom, hex_rgb, png_pixels, screenshot
from test_review_html import _chromium_or_skip

from nkilint.commands.review import EXAMPLE_ORIGINAL, EXAMPLE_PATH
from nkilint.review.charts import CAPACITY_COLOR
from nkilint.review.quantity import fmt_bytes
from nkilint.review.svg import MEMORY_COLORS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CURRENT = FIXTURES / "memory" / "current_matmul_psum_edge_good.py"
LEGACY = FIXTURES / "memory" / "legacy_matmul_psum_edge_good.py"

# A CUDA shared-memory tiled matmul, the kind of original the current fixture
# ports: __shared__ tiles, a float accumulator, a bounds check, barriers.
CUDA_MATMUL = """\
#define TILE 32
__global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < K / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * K + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * N + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

void launch(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul<<<grid, block>>>(A, B, C, M, N, K);
}
"""

SECTIONS = ("card", "memory", "graph", "loops", "cost", "findings")


def _cases(tmp_path: Path) -> dict[str, tuple[Path, list[str]]]:
    """name -> (the kernel file, the review arguments that make its report)."""
    cu = tmp_path / "matmul.cu"
    cu.write_text(CUDA_MATMUL, encoding="utf-8")
    return {
        "example": (EXAMPLE_PATH, ["--example"]),
        "current": (CURRENT, [str(CURRENT), "--original", str(cu)]),
        "legacy": (LEGACY, [str(LEGACY)]),
    }


def _json(cli, *args: str):
    result = cli(*args)
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def _text(fragment: str) -> str:
    """The words of an HTML fragment, without its tags and styles."""
    fragment = re.sub(r"<style.*?</style>", " ", fragment, flags=re.S)
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment)))


def test_report_figures_are_the_graph_and_stats_figures(cli, tmp_path):
    for name, (path, args) in _cases(tmp_path).items():
        graph = _json(cli, "graph", str(path))
        stats = _json(cli, "stats", "--format", "json", str(path))
        review = _json(cli, "review", *args, "--format", "json")
        kernels = [k for f in review["files"] for k in f["kernels"]]
        assert len(kernels) == len(graph["kernels"]) == stats["kernels"] == 1, name
        assert review["target"] == graph["target"] == stats["target"], name
        assert review["nki_version"] == graph["nki_version"] == stats["nki_version"], name
        g, r = graph["kernels"][0]["memory"], kernels[0]["memory"]
        gs, rs = g["sbuf"], r["sbuf"]
        peak = rs["peak_bytes"]
        assert rs["capacity_bytes"] == gs["capacity_bytes"], name
        # The review's peak starts at the model's lower bound and is exact only when the model's is.
        assert (peak if isinstance(peak, int) else peak["min"]) == gs["peak_bytes"] > 0, name
        if gs["exact"]:
            assert isinstance(peak, int), name
        assert rs["peak_line"] == gs["peak_line"], name
        assert [b["name"] for b in rs["buffers"] if b["in_peak"]] == gs["peak_tensors"], name
        by_id = {t["id"]: t for t in gs["tensors"]}
        for b in rs["buffers"]:
            size = b["bytes_per_partition"]
            assert b["counted"] == by_id[b["id"]]["counted"], (name, b["name"])
            if b["counted"]:
                assert (size if isinstance(size, int) else size["min"]) == by_id[b["id"]]["min_bytes"], (name, b["name"])
        gp, rp = g["psum"], r["psum"]
        assert (rp["banks"], rp["bank_bytes"], rp["peak_banks"], rp["peak_line"]) == (
            gp["banks"], gp["bank_bytes"], gp["peak_banks"], gp["peak_line"]), name
        assert [b["name"] for b in rp["buffers"] if b["in_peak"]] == gp["peak_tensors"], name
        # stats counts on-chip allocations (nl.ndarray, nl.zeros ...) by source position; each
        # is a buffer of the review, which also draws the tiles that loads and ops return.
        lines = {b["line"] for b in rs["buffers"] + rp["buffers"]}
        assert stats["allocations"] <= len(lines), name
        assert (stats["allocations"] > 0) == (name != "example"), name  # the example only loads
        # The HTML headlines print the same numbers.
        out = tmp_path / f"{name}.html"
        result = cli("review", *args, "-o", str(out))
        assert result.exit_code == 0, result.stderr
        words = _text(out.read_text(encoding="utf-8"))
        sbuf = (rf"SBUF: (>= )?{re.escape(fmt_bytes(gs['peak_bytes']))}( - [0-9.]+ [KMG]?i?B)? "
                rf"of {re.escape(fmt_bytes(gs['capacity_bytes']))} per partition at the peak \(line {gs['peak_line']}\)")
        assert re.search(sbuf, words), (name, sbuf)
        assert f"PSUM: {gp['peak_banks']} of {gp['banks']} banks" in words, name
    # The fixtures' accumulator takes one bank; the example's softmax none.
    assert gp["peak_banks"] == 1


def test_every_report_opens_in_chromium_with_every_section_and_picture(cli, tmp_path):
    chromium = _chromium_or_skip()
    for name, (_, args) in _cases(tmp_path).items():
        page = tmp_path / f"{name}.html"
        result = cli("review", *args, "-o", str(page))
        assert result.exit_code == 0, result.stderr
        dom, console = dump_dom(chromium, page)
        assert console == [], (name, console)
        assert dom.count('class="kernel"') == 1, name
        for section in SECTIONS:
            assert dom.count(f'<h3 class="{section}">') == 1, (name, section)
        for figure in ("sbuf", "psum", "graph"):
            assert len(re.findall(rf'data-figure="{figure}"[^>]*>\s*<svg\b', dom)) == 1, (name, figure)
        assert ('<section class="original">' in dom) == ("--original" in args or name == "example"), name
        if name != "legacy":
            # The checklist rows of the original: every aspect with a status.
            assert len(re.findall(r'data-aspect="[a-z_]+" data-status="', dom)) >= 6, name
        png = tmp_path / f"{name}.png"
        screenshot(chromium, page, png, width=1280, height=3200)
        width, height, rows = png_pixels(png)
        assert (width, height) == (1280, 3200), name
        # The pictures were painted: colours only the SVGs use are on screen.
        # (The example's 3 B peak is a sliver; its capacity bar is long.)
        for color in (CAPACITY_COLOR, MEMORY_COLORS["hbm"][0], MEMORY_COLORS["sbuf"][0]):
            assert count_color(rows, hex_rgb(color)) > 200, (name, color)
