"""Launches from other project files (nkilint.model.project_launches): a test
that imports a kernel and launches it with concrete arrays specializes the
kernel as a launch in the kernel's own file does, whatever the file order
or the job count."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from conftest import write
from hostile_support import findings_per_file as _per_file
from nkilint.cli import cli
from nkilint.model.project import Project
from nkilint.model.semantic import analyze_file
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import NkiVersion

KERNEL = """import nki
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
"""


def _tree(root: Path) -> None:
    (root / ".git").mkdir()
    write(root / "pkg" / "__init__.py", "")
    write(root / "pkg" / "k.py", KERNEL)
    write(root / "tests" / "test_k.py", """import numpy as np
from pkg.k import scale as run_scale


def test_small():
    run_scale(np.zeros((128, 512), np.float32))


def test_big():
    x = np.zeros((256, 512), dtype=np.float32)
    run_scale(x)
""")
    write(root / "tests" / "test_mod.py", """import numpy as np
import pkg.k as kmod


def test_half():
    kmod.scale(np.ones((512, 64), dtype=np.float16))
    kmod.scale(np.zeros((256, 512), dtype=np.float32))  # the same inputs as test_k.py: one specialization
""")


def test_launches_in_other_files_specialize_the_kernel(project):
    _tree(project)
    path = project / "pkg" / "k.py"
    model = analyze_file(SourceFile(str(path), path.read_text(), "pkg/k.py"), Project(project, scan_roots=(project,)),
                         TRN2, NkiVersion.parse("0.6"))
    assert [k.specialization.describe() for k in model.specializations] == [
        "tests/test_k.py line 6: a=(128, 512) float32",
        "tests/test_k.py line 11: a=(256, 512) float32",
        "tests/test_mod.py line 6: a=(512, 64) float16",
    ]
    t = [d for _, d in model.specializations[2].graph.tensors() if d.get("name") == "t"][0]
    assert [v.value for v in t["shape_v"]] == [512, 64]


def test_without_scan_roots_nothing_is_read_elsewhere(project):
    _tree(project)
    path = project / "pkg" / "k.py"
    model = analyze_file(SourceFile(str(path), path.read_text(), "pkg/k.py"), Project(project), TRN2,
                         NkiVersion.parse("0.6"))
    assert model.specializations == []


def test_findings_name_the_other_file_and_do_not_depend_on_order(project):
    _tree(project)
    forward = _per_file(project, list)
    on_tile = [m for rule, line, m in forward["pkg/k.py"] if rule == "NKI101"]
    assert [m.rsplit("(with the inputs of the launch at ", 1)[-1] for m in on_tile] == [
        "tests/test_k.py line 11: a=(256, 512) float32)",
        "tests/test_mod.py line 6: a=(512, 64) float16)",
    ]
    backward = _per_file(project, lambda files: list(reversed(files)))
    shuffled = _per_file(project, lambda files: random.Random(7).sample(files, len(files)))
    assert forward == backward == shuffled


def test_findings_do_not_depend_on_the_job_count(project):
    _tree(project)
    for i in range(26):  # enough files for a process pool
        write(project / "many" / f"m{i:02d}.py", f"X{i} = {i}\n")

    def run(jobs: int) -> list:
        proc = subprocess.run([sys.executable, "-m", "nkilint", "check", ".", "--format", "json", f"-j{jobs}",
                               "--no-cache", "--nki-version", "0.6"],
                              cwd=project, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 1, proc.stderr
        doc = json.loads(proc.stdout)
        return sorted((f["path"], f["rule"], json.dumps(f["range"]), f["message"]) for f in doc["findings"])

    one = run(1)
    assert sum(1 for path, rule, *_ in one if path == "pkg/k.py" and rule == "NKI101") == 2
    assert run(2) == one


def test_stats_counts_kernels_specialized_from_other_files(project):
    _tree(project)
    result = CliRunner().invoke(cli, ["stats", ".", "--format", "json", "--nki-version", "0.6"])
    doc = json.loads(result.output)
    assert (doc["kernels"], doc["specialized_kernels"], doc["specializations"]) == (1, 1, 3)


def test_the_cache_rechecks_the_kernel_when_a_launching_test_changes(cli, project, tmp_path):
    _tree(project)
    cache = tmp_path / "cache"

    def tile_messages() -> list[str]:
        result = cli("check", "--format", "json", "--cache-dir", str(cache), "--nki-version", "0.6", ".")
        return sorted(f["message"].rsplit(" at ", 1)[-1] for f in json.loads(result.stdout)["findings"]
                      if f["rule"] == "NKI101")

    assert tile_messages() == ["tests/test_k.py line 11: a=(256, 512) float32)",
                               "tests/test_mod.py line 6: a=(512, 64) float16)"]
    write(project / "tests" / "test_mod.py", "import numpy as np\nimport pkg.k as kmod\n\n\n"
          "def test_half():\n    kmod.scale(np.ones((384, 64), dtype=np.float16))\n")
    assert tile_messages() == ["tests/test_k.py line 11: a=(256, 512) float32)",
                               "tests/test_mod.py line 6: a=(384, 64) float16)"]


def test_legacy_kernel_launched_through_a_launcher_from_another_file(project):
    (project / ".git").mkdir()
    write(project / "kern" / "__init__.py", "")
    write(project / "kern" / "copy.py", """import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def copy(a, n):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((a.shape[0], n), dtype=a.dtype, buffer=nl.sbuf)
    t[...] = nl.load(a[0:a.shape[0], 0:n])
    nl.store(out[0:a.shape[0], 0:n], value=t)
    return out
""")
    write(project / "bench.py", """import numpy as np
import neuronxcc.nki as nki
import kern.copy as kc
from kern.copy import copy as c2

ROWS = 2 * 256
nki.simulate_kernel(kc.copy, np.zeros((ROWS, 64), dtype=np.float16), 64)
nki.baremetal(c2)(np.zeros((128, 64), dtype=np.float32), 32)
""")
    path = project / "kern" / "copy.py"
    model = analyze_file(SourceFile(str(path), path.read_text(), "kern/copy.py"),
                         Project(project, scan_roots=(project,)), TRN2, NkiVersion.parse("0.1"))
    assert [k.specialization.describe() for k in model.specializations] == [
        "bench.py line 7: a=(512, 64) float16, n=64",
        "bench.py line 8: a=(128, 64) float32, n=32",
    ]
    t = [d for _, d in model.specializations[0].graph.tensors() if d.get("name") == "t"][0]
    assert [v.value for v in t["shape_v"]] == [512, 64]
