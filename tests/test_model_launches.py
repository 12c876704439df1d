"""Launch-site specialization: launches found in host code, the kernel
analysed again with their shapes, and findings that only a launch reveals
naming it (nkilint.model.launches, FileModel.specializations)."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from fixture_markers import lint_file
from nkilint.cli import cli
from nkilint.model.launches import find_launches
from nkilint.model.project import Project
from nkilint.model.semantic import analyze_file
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import V0_1, NkiVersion

CURRENT = '''
import numpy as np
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def scale(a):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out


ROWS = 2 * 128


def test_scale():
    small = np.ones((128, 512), dtype=np.float32)
    scale(small)
    big = np.random.rand(ROWS, 512).astype(np.float32)
    run = nki.jit(scale)
    run(big)
    scale[2](big)
'''

LEGACY = '''
import numpy as np
import torch
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def copy(a, n):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((a.shape[0], n), dtype=a.dtype, buffer=nl.sbuf)
    t[...] = nl.load(a[0:a.shape[0], 0:n])
    nl.store(out[0:a.shape[0], 0:n], value=t)
    return out


x = torch.randn(128, 1024, dtype=torch.bfloat16)
nki.simulate_kernel(copy, x, 512)
nki.baremetal(copy)(np.zeros((4096, 64), dtype=np.float16), 64)
'''


def _write(tmp_path: Path, code: str) -> Path:
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(code).lstrip("\n"), encoding="utf-8")
    return path


def _model(path: Path, version: NkiVersion):
    return analyze_file(SourceFile(str(path), path.read_text(encoding="utf-8"), path.name),
                        Project(path.parent), TRN2, version)


def test_launch_forms_and_argument_shapes(tmp_path):
    path = _write(tmp_path, CURRENT)
    tree = ast.parse(path.read_text())
    bindings = _model(path, NkiVersion.parse("0.6")).bindings
    kernel = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "scale")
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    launches = find_launches(tree, bindings, [kernel], {id(kernel)}, parents)
    # scale(small) and run(big); scale[2](big) has the same inputs as run(big).
    assert [(l.line, l.describe()) for l in launches] == [
        (22, "line 22: a=(128, 512) float32"),
        (25, "line 25: a=(256, 512) float32"),
    ]


def test_the_model_specializes_each_distinct_launch(tmp_path):
    model = _model(_write(tmp_path, LEGACY), V0_1)
    specs = model.specializations
    assert [k.base_name for k in specs] == ["copy", "copy"]
    assert [k.specialization.describe() for k in specs] == [
        "line 17: a=(128, 1024) bfloat16, n=512",
        "line 18: a=(4096, 64) float16, n=64",
    ]
    t = [d for _, d in specs[1].graph.tensors() if d.get("name") == "t"][0]
    assert [v.value for v in t["shape_v"]] == [4096, 64]
    assert str(t["dtype_v"].name) == "float16"


def test_a_fault_only_a_launch_reveals_names_the_launch(tmp_path):
    path = _write(tmp_path, CURRENT)
    found = [f for f in lint_file(path, nki_version="0.6", select=("NKI101",))]
    assert len(found) == 1, [f.message for f in found]
    f = found[0]
    assert f.span.start_line == 11 and f.level.label == "error"
    assert f.message.endswith("(with the inputs of the launch at line 25: a=(256, 512) float32)")
    assert "@launch" not in f.message and f.kernel == "scale"


def test_legacy_launch_with_a_partition_overflow(tmp_path):
    path = _write(tmp_path, LEGACY)
    found = lint_file(path, nki_version="0.1", select=("NKI101",))
    # The tile and the load's result tile, both 4096 partitions under the second launch only.
    assert [(f.span.start_line, "line 18" in f.message) for f in found] == [(10, True), (11, True)]


def test_a_fault_the_kernel_shows_alone_is_reported_once(tmp_path):
    code = LEGACY.replace("t = nl.ndarray((a.shape[0], n)", "t = nl.ndarray((256, n)")
    path = _write(tmp_path, code)
    found = lint_file(path, nki_version="0.1", select=("NKI101",))
    on_tile = [f for f in found if f.span.start_line == 10]
    assert len(on_tile) == 1 and "launch" not in on_tile[0].message


def test_stats_counts_specialized_kernels(tmp_path):
    _write(tmp_path, LEGACY)
    result = CliRunner().invoke(cli, ["stats", str(tmp_path), "--format", "json", "--sdk", "2.24"])
    doc = json.loads(result.output)
    assert (doc["kernels"], doc["specialized_kernels"], doc["specializations"]) == (1, 1, 2)
