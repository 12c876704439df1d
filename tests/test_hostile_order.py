"""A file's results never depend on which files the process checked first,
nor on the job count (issue 20).

The project used to add the package root of every file it checked to the
import search roots, so ``import util`` in a/k.py resolved to b/util.py only
when b/util.py had been checked earlier in the same process: the findings
of a/k.py changed with the file order and with how files were split
between worker processes."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from conftest import write
from hostile_support import findings_per_file as _per_file

CURRENT = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n"
LEGACY = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\n"


def _tree(root: Path) -> None:
    """Kernels importing constants and helpers from siblings, packages and
    directories that are not on their import path, in both generations."""
    (root / ".git").mkdir()
    write(root / "a" / "k.py", CURRENT + """import util


@nki.jit
def kernel(a):
    t = nl.ndarray((util.TILE, 512), dtype=nl.float32, buffer=nl.sbuf)
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out
""")
    write(root / "b" / "util.py", "TILE = 256\n")
    write(root / "a" / "util2.py", "PARTS = 256\n")
    write(root / "a" / "k2.py", LEGACY + """from util2 import PARTS


@nki.jit
def kernel(a):
    out = nl.ndarray((PARTS, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(a[0:PARTS, 0:512])
    nl.store(out, value=t)
    return out
""")
    write(root / "pkg" / "__init__.py", "")
    write(root / "pkg" / "sizes.py", "N = 512\n\n\ndef tile():\n    return 130\n")
    write(root / "pkg" / "kern.py", CURRENT + """from .sizes import N, tile


@nki.jit
def kernel(a):
    t = nl.ndarray((tile(), N), dtype=nl.float32, buffer=nl.sbuf)
    out = nl.ndarray((128, N), dtype=nl.float32, buffer=nl.shared_hbm)
    return out
""")
    write(root / "tests" / "test_k.py", CURRENT + """from pkg.kern import kernel
from pkg import sizes


def test_it():
    assert sizes.N == 512
    kernel(None)
""")
    for i in range(30):  # enough files for a process pool and several chunks
        write(root / "many" / f"m{i:02d}.py", CURRENT + f"""

@nki.jit
def kernel_{i}(a):
    t = nl.ndarray(({100 + i}, 512), dtype=nl.float32, buffer=nl.sbuf)
    return a
""")


def test_findings_do_not_depend_on_the_file_order(project):
    _tree(project)
    forward = _per_file(project, list)
    assert forward["a/k.py"] == [r for r in forward["a/k.py"] if r[0] != "NKI101"]  # util is not importable from a/
    backward = _per_file(project, lambda files: list(reversed(files)))
    shuffled = _per_file(project, lambda files: random.Random(20).sample(files, len(files)))
    assert forward == backward == shuffled


def test_findings_do_not_depend_on_the_job_count(project):
    _tree(project)

    def run(jobs: int) -> list:
        proc = subprocess.run([sys.executable, "-m", "nkilint", "check", ".", "--format", "json", f"-j{jobs}", "--no-cache"],
                              cwd=project, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 1, proc.stderr
        doc = json.loads(proc.stdout)
        return sorted((f["path"], f["rule"], json.dumps(f["range"]), f["message"]) for f in doc["findings"])

    one = run(1)
    assert any(path == "pkg/kern.py" and rule == "NKI101" for path, rule, *_ in one)  # relative imports resolve
    assert run(2) == one
    assert run(3) == one
