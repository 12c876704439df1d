"""``nkilint review``: the report model computed from the semantic model,
and its JSON and Markdown renderings, on kernels of both generations."""

from __future__ import annotations

import json
import textwrap
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from nkilint.cli import cli
from nkilint.commands.common import _ruleset_and_enabled, build_settings
from nkilint.model.memory import summarize
from nkilint.review.quantity import INF, Qty
from nkilint.review.render_markdown import render_markdown
from nkilint.review.report import build_review

CURRENT_MATMUL = """\
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def matmul_kernel(a, b):
    K, M = a.shape
    K2, N = b.shape
    assert K == 256 and M == 128 and N == 512 and K2 == K
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    for k in range(K // 128):
        at = nl.ndarray((128, M), dtype=nl.bfloat16, buffer=nl.sbuf)
        bt = nl.ndarray((128, N), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=at, src=a[k * 128:(k + 1) * 128, :])
        nisa.dma_copy(dst=bt, src=b[k * 128:(k + 1) * 128, :])
        nisa.nc_matmul(dst=acc, stationary=at, moving=bt)
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out
"""

LEGACY_ADD = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def add_kernel(a, b):
    rows, cols = a.shape
    assert rows <= 1024 and cols == 2048
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // 128):
        at = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        bt = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        at[...] = nl.load(a[i * 128:(i + 1) * 128, :])
        bt[...] = nl.load(b[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(at, bt))
    return out
"""

UNKNOWN_SIZES = """\
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def copy_kernel(x):
    n, m = x.shape
    out = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, m), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, :])
    nisa.dma_copy(dst=out[0:128, :], src=t)
    return out
"""


def _review(tmp_path: Path, files: dict[str, str], **overrides):
    paths = []
    for name, text in files.items():
        p = tmp_path / name
        p.write_text(text)
        paths.append(str(p))
    settings = build_settings(tuple(paths), None, True, **overrides)
    ruleset, enabled = _ruleset_and_enabled(settings)
    return build_review(tuple(paths), settings, ruleset, enabled), settings


def _kernel(review, name):
    return next(k for k in review.kernels() if k.card.name == name)


# ------------------------------------------------------------------ numbers
def test_current_matmul_sections(tmp_path):
    review, settings = _review(tmp_path, {"mm.py": CURRENT_MATMUL})
    k = _kernel(review, "matmul_kernel")
    # Card: parameters with the shapes the asserts pin.
    params = {p.name: p for p in k.card.params}
    assert params["a"].shape == (256, 128) and params["a"].buffer == "hbm"
    assert params["b"].shape == (256, 512)
    assert k.card.generation == "current" and k.card.line == 7
    # Memory: the same peak the memory model (and nkilint graph) reports.
    summary = summarize(k.kernel, settings.target)
    assert k.memory.sbuf_peak.lo == summary["sbuf"]["peak_bytes"]
    assert k.memory.psum_peak.lo == summary["psum"]["peak_banks"] == 1
    acc = next(b for b in k.memory.psum if b.name == "acc")
    assert acc.first_bank == 0 and acc.banks.is_exact and acc.banks.lo == 1
    bt = next(b for b in k.memory.sbuf if b.name == "bt")
    assert bt.bytes.is_exact and bt.bytes.lo == 512 * 2
    # Loop table: two iterations, each loads one bf16 tile of a and one of b.
    (loop,) = k.loops
    assert loop.trip.is_exact and loop.trip.lo == 2
    assert loop.dma_in.is_exact and loop.dma_in.lo == (128 * 128 + 128 * 512) * 2
    assert loop.dma_out.lo == 0 and {"dma", "tensor"} <= set(loop.engines)
    # Cost: 2 K M N flops; HBM traffic from the tile types; DMA-bound on trn2.
    cost = k.cost
    assert cost.flops.is_exact and cost.flops.lo == 2 * 256 * 128 * 512
    assert cost.hbm_read.lo == 2 * (128 * 128 + 128 * 512) * 2
    assert cost.hbm_written.is_exact and cost.hbm_written.lo == 128 * 512 * 4
    assert cost.bound == "dma"
    dma = next(t for t in cost.terms if t.resource == "dma")
    assert dma.seconds.lo == pytest.approx((327680 + 262144) / min(368e9, 2.9e12 / 8))


def test_legacy_kernel_bounded_trip_and_fused_landing(tmp_path):
    review, settings = _review(tmp_path, {"add.py": LEGACY_ADD})
    k = _kernel(review, "add_kernel")
    assert k.card.generation == "legacy"
    (loop,) = k.loops
    # rows <= 1024: at most 8 iterations, at least 0 (rows // 128 may be 0).
    assert loop.trip.hi == 8 and not loop.trip.is_exact
    # Two fp32 loads of 128 x 2048 per iteration; one store of the sum.
    assert loop.dma_in.is_exact and loop.dma_in.lo == 2 * 2048 * 4 * 128
    assert k.cost.hbm_read.hi == 8 * 2 * 2048 * 4 * 128
    summary = summarize(k.kernel, settings.target)
    assert k.memory.sbuf_peak.lo == summary["sbuf"]["peak_bytes"]
    assert k.memory.sbuf_peak.lo >= 2 * 2048 * 4  # at and bt live together


def test_unknown_sizes_are_ranges_not_numbers(tmp_path):
    review, _ = _review(tmp_path, {"cp.py": UNKNOWN_SIZES})
    k = _kernel(review, "copy_kernel")
    t = next(b for b in k.memory.sbuf if b.name == "t")
    # m has no upper bound and the dtype comes from the caller: no upper bound.
    assert t.bytes.hi == INF and not t.bytes.is_exact
    assert "max" not in t.bytes.to_json() and t.bytes.to_json()["min"] == t.bytes.lo
    # Only DMAs: the launch is DMA-bound, but its time has no upper bound.
    dma = next(term for term in k.cost.terms if term.resource == "dma")
    assert k.cost.bound == "dma" and dma.seconds.hi == INF and dma.seconds.lo > 0
    md = render_markdown(review)
    assert ">= " in md and "unknown (from the caller)" in md


def test_qty_arithmetic_and_text():
    assert (Qty.exact(2) * Qty(3, 4)).to_json() == {"min": 6, "max": 8}
    assert (Qty(1, INF) + Qty.exact(2)).text() == ">= 3"
    assert Qty.unknown().text() == "unknown"
    assert Qty.exact(0) * Qty.unknown() == Qty(0, 0, None, False)
    assert Qty.exact(7).to_json() == 7


# --------------------------------------------------------------- findings
def test_findings_by_rubric_on_the_bundled_example():
    runner = CliRunner()
    result = runner.invoke(cli, ["review", "--example", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    (kernel,) = doc["files"][0]["kernels"]
    found = {r: {f["rule"] for f in fs} for r, fs in kernel["findings"].items()}
    assert "NKI504" in found["numerics"] and "NKI503" in found["numerics"]
    assert "NKI101" in found["correctness"]
    assert "NKI414" in found["fidelity"]
    # The import findings are outside the kernel's lines.
    assert "NKI601" in {f["rule"] for f in doc["files"][0]["outside_kernels"]["fidelity"]}
    fixed = [f for fs in kernel["findings"].values() for f in fs if f["fix"]]
    assert fixed and all(f["fix"]["diff"].startswith("--- a/") for f in fixed)
    assert any("+    for i in range(" in f["fix"]["diff"] for f in fixed)
    excerpt = next(f for f in kernel["findings"]["correctness"] if f["rule"] == "NKI101")["excerpt"]
    assert any(e["line"] == 20 and "nl.load" in e["text"] for e in excerpt)


# ------------------------------------------------------------------ formats
def _schema():
    return json.loads(resources.files("nkilint.data").joinpath("review.schema.json").read_text())


def test_json_matches_its_schema_for_both_generations(tmp_path):
    review, _ = _review(tmp_path, {"mm.py": CURRENT_MATMUL, "add.py": LEGACY_ADD, "cp.py": UNKNOWN_SIZES})
    doc = json.loads(json.dumps(review.to_json()))
    jsonschema.validate(doc, _schema())
    assert {k["card"]["generation"] for f in doc["files"] for k in f["kernels"]} == {"current", "legacy"}
    broken = json.loads(json.dumps(doc))
    broken["files"][0]["kernels"][0]["cost"]["bound"] = "fast"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, _schema())


def test_markdown_parses_as_commonmark_with_summary_first(tmp_path):
    review, _ = _review(tmp_path, {"mm.py": CURRENT_MATMUL, "add.py": LEGACY_ADD})
    md = render_markdown(review)
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    kinds = [t.type for t in tokens]
    first_table = kinds.index("table_open")
    first_h2 = next(i for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2")
    assert first_table < first_h2  # the summary table comes before the kernels
    html = MarkdownIt("commonmark").enable("table").render(md)
    assert html.count("<details") >= 4 and "<summary>Cost estimate: dma-bound" in html
    assert "matmul_kernel" in html and "add_kernel" in html


def test_cli_kernel_filter_and_unknown_kernel(tmp_path):
    path = tmp_path / "mm.py"
    path.write_text(CURRENT_MATMUL)
    runner = CliRunner()
    ok = runner.invoke(cli, ["review", str(path), "--kernel", "matmul_kernel", "--format", "json"])
    assert ok.exit_code == 0
    assert [k["card"]["name"] for k in json.loads(ok.output)["files"][0]["kernels"]] == ["matmul_kernel"]
    missing = runner.invoke(cli, ["review", str(path), "--kernel", "nope", "--format", "json"])
    assert missing.exit_code == 2
    out = tmp_path / "r.md"
    wrote = runner.invoke(cli, ["review", str(path), "-o", str(out)])
    assert wrote.exit_code == 0 and out.read_text().startswith("# nkilint review")


def test_review_module_imports_no_rule_pack():
    text = "\n".join(p.read_text() for p in Path(__file__).parent.parent.joinpath("nkilint", "review").glob("*.py"))
    assert "nkilint_rules" not in text and "import rules" not in text
    assert textwrap.dedent(text)  # non-empty


def test_card_says_how_the_project_launches_the_kernel(tmp_path):
    host = "from mm import matmul_kernel\n\n\ndef run(a, b):\n    return matmul_kernel(a, b)\n"
    review, _ = _review(tmp_path, {"mm.py": CURRENT_MATMUL, "host.py": host})
    card = _kernel(review, "matmul_kernel").card
    assert card.launch == "launched"
    (tmp_path / "alone").mkdir()
    alone, _ = _review(tmp_path / "alone", {"mm.py": CURRENT_MATMUL})
    assert _kernel(alone, "matmul_kernel").card.launch == "uncalled"
    assert "launched by host code" in render_markdown(review)


def test_fix_diffs_are_spliced_from_the_edits():
    from nkilint.findings import Edit, Span
    from nkilint.review.rubric import splice

    text = "for i in nl.affine_range(4):\n    x = nl.exp(t)\n"
    edits = [Edit(Span(1, 10, 1, 25), "range"), Edit(Span(2, 9, 2, 15), "nl.exp2")]
    assert splice(text, edits) == "for i in range(4):\n    x = nl.exp2(t)\n"
    assert splice(text, [Edit(Span(9, 1, 9, 2), "x")]) is None  # outside the text: no diff shown


def test_probable_code_with_nothing_on_chip_is_only_named(tmp_path):
    # Methods of an NKIObject subclass are probable device code; these have no op.
    config = CURRENT_MATMUL + (
        "\n\nclass Args(nl.NKIObject):\n    tile: int = 128\n\n"
        "    def doubled(self) -> int:\n        return self.tile * 2\n")
    review, _ = _review(tmp_path, {"mm.py": config})
    assert [k.card.name for k in review.kernels()] == ["matmul_kernel"]
    assert review.files[0].quiet == ["Args.doubled"]
    assert "also analysed as probable device code" in render_markdown(review) and "`Args.doubled`" in render_markdown(review)


SPECIALIZED = """\
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out


def main():
    return add(np.zeros((128, 512), dtype=np.float32), np.zeros((128, 512), dtype=np.float32))
"""


def test_the_card_lists_the_launches_the_kernel_was_specialized_for(tmp_path):
    review, _ = _review(tmp_path, {"k.py": SPECIALIZED})
    base = _kernel(review, "add").card
    assert base.launches == ("line 17: a=(128, 512) float32, b=(128, 512) float32",)
    special = _kernel(review, "add@launch:17").card
    assert special.launches == ()
    assert special.params[0].shape_text == "(128, 512)"
    assert "analysed again for 1 launch with concrete arguments" in render_markdown(review)
    jsonschema.validate(json.loads(json.dumps(review.to_json())), _schema())
