"""``nkilint review --original``: the GPU original's structure (CUDA through
tree-sitter, Triton/PyTorch through ast) put next to the port's, with the
gaps as open questions."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from test_review import _review

from nkilint.cli import cli
from nkilint.review.original import correspond, read_original
from nkilint.review.original_source import read_structure
from nkilint.review.render_html import render_html
from nkilint.review.render_markdown import render_markdown

CUDA_ORIGINAL = """\
#include <cuda_runtime.h>

__global__ void row_sum(const float* x, float* out, int n) {
    __shared__ float partial[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    if (i < n) {
        acc += x[i];
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

void launch(const float* x, float* out, int n) {
    row_sum<<<(n + 255) / 256, 256>>>(x, out, n);
}
"""

# The port: bf16 accumulation, no mask, no atomics.
PORT = """\
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def row_sum(x):
    n, m = x.shape
    assert n == 128 and m <= 4096
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, m), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    acc = nl.ndarray((128, 1), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=acc, op=nl.add, data=t, axis=1)
    nisa.dma_copy(dst=out, src=acc)
    return out
"""

PORT_ASSERTS_DIVISIBLE = PORT.replace("assert n == 128 and m <= 4096", "assert n == 128 and m % 512 == 0")


def _rows(orig):
    return {r.aspect: r for r in orig.rows}


def test_cuda_structure_from_tree_sitter(tmp_path):
    src = tmp_path / "row_sum.cu"
    src.write_text(CUDA_ORIGINAL)
    s = read_structure(src)
    assert s.language == "cuda"
    assert [i.text for i in s.items["kernels"]] == ["__global__ row_sum"]
    assert s.items["shared_memory"][0].line == 4 and "partial[256]" in s.items["shared_memory"][0].text
    (launch,) = s.items["launch"]
    assert launch.line == 20 and "grid (n + 255) / 256" in launch.detail and "block 256" in launch.detail
    assert {i.line for i in s.items["barriers"]} == {11, 14}
    assert [i.line for i in s.items["atomics"]] == [16]
    assert 12 in {i.line for i in s.items["reductions"]}  # the s >>= 1 tree reduction
    mask_lines = {i.line for i in s.items["masks"]}
    assert 7 in mask_lines and 13 in mask_lines  # i < n, threadIdx.x < s
    assert 16 not in mask_lines  # threadIdx.x == 0 is not a bounds check
    (acc,) = s.items["accumulators"]
    assert acc.detail == "float32" and acc.line == 6


def test_checklist_shows_the_fidelity_gaps_of_a_cuda_port(tmp_path):
    src = tmp_path / "row_sum.cu"
    src.write_text(CUDA_ORIGINAL)
    review, _ = _review(tmp_path, {"port.py": PORT})
    rows = _rows(read_original(src, review))
    assert rows["shared_memory"].status == "matched"  # __shared__ <-> SBUF tiles
    assert rows["barriers"].status == "no counterpart needed"
    assert rows["atomics"].status == "open question"
    assert rows["masks"].status == "open question" and "tail" in rows["masks"].note
    acc = rows["accumulators"]
    assert acc.status == "differs" and "float32" in acc.note and "bfloat16" in acc.note
    assert rows["reductions"].status == "matched"
    # One launch of the port, no loop: does it cover the original's grid?
    assert rows["launch"].status == "open question"
    md = render_markdown(review)
    assert md.count("OPEN QUESTION") == 0  # the checklist is rendered only when attached
    review.original = read_original(src, review)
    md = render_markdown(review)
    assert "## Original and port" in md and md.count("OPEN QUESTION") == 3 and "DIFFERS" in md
    html = render_html(review, use_dot=False)
    assert html.count('data-status="open question"') == 3 and 'data-aspect="accumulators" data-status="differs"' in html
    doc = json.loads(json.dumps(review.to_json()))
    assert doc["original"]["language"] == "cuda" and doc["original"]["open_questions"] == 4
    schema = json.loads(resources.files("nkilint.data").joinpath("review.schema.json").read_text())
    jsonschema.validate(doc, schema)
    doc["original"]["rows"][0]["status"] = "fine"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_a_divisibility_assert_answers_the_mask_question_differently(tmp_path):
    src = tmp_path / "row_sum.cu"
    src.write_text(CUDA_ORIGINAL)
    review, _ = _review(tmp_path, {"port.py": PORT_ASSERTS_DIVISIBLE})
    masks = _rows(read_original(src, review))["masks"]
    assert masks.status == "differs" and "assert" in masks.note
    assert any("m % 512 == 0" in i.text for i in masks.port)


def test_the_bundled_triton_original_shows_the_example_gaps():
    runner = CliRunner()
    result = runner.invoke(cli, ["review", "--example", "--format", "json"])
    assert result.exit_code == 0, result.output
    orig = json.loads(result.output)["original"]
    assert orig["language"] == "triton"
    rows = {r["aspect"]: r for r in orig["rows"]}
    # The port dropped the masked tail, the max subtraction and the fp32 accumulator;
    # NKI718's findings answer the mask question.
    assert rows["masks"]["status"] == "differs" and "drops the tail" in rows["masks"]["note"]
    assert "softmax_port.py:20" in rows["masks"]["note"] and "softmax_port.py:24" in rows["masks"]["note"]
    assert rows["reductions"]["status"] == "differs" and "max" in rows["reductions"]["note"]
    assert rows["accumulators"]["status"] == "differs"
    assert {i["line"] for i in rows["launch"]["original"]} >= {11, 25}
    assert any(i["text"].startswith("BLOCK_SIZE") for i in rows["block_sizes"]["original"])


def test_the_bundled_example_shows_the_dropped_tail_in_the_findings_too():
    # Issue 16: a reviewer sees the fidelity gap in the checklist (open
    # question above) and in the findings: NKI718 on the load and the store
    # of the last of ceil(rows / 256) tiles, under correctness.
    result = CliRunner().invoke(cli, ["review", "--example", "--format", "json"])
    assert result.exit_code == 0, result.output
    kernel = json.loads(result.output)["files"][0]["kernels"][0]
    tails = [f for f in kernel["findings"]["correctness"] if f["rule"] == "NKI718"]
    assert [f["line"] for f in tails] == [20, 24]
    assert all(f["level"] == "warning" and "multiple of 256" in f["message"] for f in tails)
    assert not any(f["rule"] == "NKI718" for r in ("fidelity", "performance", "numerics") for f in kernel["findings"][r])


def test_the_original_is_read_never_run(tmp_path):
    marker = tmp_path / "ran.txt"
    src = tmp_path / "orig.py"
    src.write_text(f"import triton\nopen({str(marker)!r}, 'w').write('ran')\nraise SystemExit(3)\n")
    review, _ = _review(tmp_path, {"port.py": PORT})
    read_original(src, review)
    assert not marker.exists()


def test_pytorch_original_and_bad_inputs(tmp_path):
    src = tmp_path / "ref.py"
    src.write_text("import torch\n\ndef ref(x):\n    return torch.softmax(x.float(), dim=-1)\n")
    s = read_structure(src)
    assert s.language == "pytorch" and [i.line for i in s.items["reductions"]] == [4]
    bad = tmp_path / "k.txt"
    bad.write_text("x")
    with pytest.raises(ValueError, match="CUDA"):
        read_structure(bad)
    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n")
    with pytest.raises(ValueError, match="not valid Python"):
        read_structure(broken)


def test_missing_cuda_grammar_is_a_clear_usage_error(tmp_path, monkeypatch):
    src = tmp_path / "k.cu"
    src.write_text(CUDA_ORIGINAL)
    port = tmp_path / "port.py"
    port.write_text(PORT)
    monkeypatch.setitem(sys.modules, "tree_sitter_cuda", None)  # import fails as if not installed
    result = CliRunner().invoke(cli, ["review", str(port), "--original", str(src), "--format", "json"])
    assert result.exit_code == 2
    assert "nkilint[review]" in result.output


def test_correspond_without_kernels_asks_the_launch_question(tmp_path):
    src = tmp_path / "row_sum.cu"
    src.write_text(CUDA_ORIGINAL)
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    review, _ = _review(tmp_path, {"empty2.py": "x = 1\n"})
    rows = _rows(correspond(read_structure(src), review))
    assert rows["launch"].status == "open question" and rows["shared_memory"].status == "open question"
    assert Path(review.files[0].path).name == "empty2.py"
