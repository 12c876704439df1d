"""`nkilint graph` and `nkilint stats` on fixture kernels."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from nkilint.cli import cli

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "model"


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_graph_json_is_stable_and_complete():
    result = run("graph", str(FIXTURES / "current_softmax.py"), "--kernel", "softmax_kernel", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["schema_version"] == 1 and doc["dialect"] == "current"
    (kernel,) = doc["kernels"]
    assert kernel["name"] == "softmax_kernel" and kernel["kind"] == "root" and kernel["how"] == "@nki.jit"
    ids = [n["id"] for n in kernel["nodes"]]
    assert ids == sorted(ids, key=lambda i: int(i[1:]))
    tile = next(n for n in kernel["nodes"] if n.get("name") == "tile")
    assert tile["kind"] == "tensor" and tile["buffer"] == "sbuf" and tile["dtype"] == "float32"
    assert tile["shape"][0] == 128 and tile["shape"][1]["max"] == 2048
    assert tile["span"]["line"] == 16 and tile["span"]["column"] == 16
    loop = next(n for n in kernel["nodes"] if n["kind"] == "loop")
    assert loop["loop_kind"] == "static_range" and tile["loops"] == [loop["id"]]
    writes = [e for e in kernel["edges"] if e["kind"] == "writes" and e["target"] == tile["id"]]
    assert len(writes) == 1 and writes[0]["param"] == "dst"
    # Output is deterministic.
    again = run("graph", str(FIXTURES / "current_softmax.py"), "--kernel", "softmax_kernel")
    assert again.output == result.output


def test_graph_dot():
    result = run("graph", str(FIXTURES / "legacy_matmul.py"), "--format", "dot", "--kernel", "indexed_add")
    assert result.exit_code == 0
    assert result.output.startswith(f'digraph "{FIXTURES / "legacy_matmul.py"}" {{')
    assert 'label="indexed_add (@nki.jit)' in result.output
    assert "-> " in result.output and 'label="reads"' in result.output


def test_graph_unknown_kernel_exits_2_and_lists_kernels():
    result = CliRunner().invoke(cli, ["graph", str(FIXTURES / "legacy_matmul.py"), "--kernel", "nope"])
    assert result.exit_code == 2
    assert "matmul_kernel" in result.output and "indexed_add" in result.output


def test_stats_json_fields():
    result = run("stats", str(FIXTURES), "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    for key in ("files", "kernels", "allocations", "exact", "bounded", "unknown"):
        assert isinstance(doc[key], int)
    assert doc["files"] == 8  # 4 kernels + pkg/{__init__,constants,utils,kernel}
    assert doc["exact"] + doc["bounded"] + doc["unknown"] == doc["allocations"]
    assert doc["allocations"] >= 10 and doc["exact"] >= 8
    # probable_helper's (n, 64) buffer has an unknown partition size.
    assert doc["unknown"] >= 1 and doc["unknown_reasons"]


def test_stats_text():
    result = run("stats", str(FIXTURES))
    assert "on-chip allocations:" in result.output and "exact or bounded:" in result.output
