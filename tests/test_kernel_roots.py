"""Kernel roots from the whole project (issue 14): a decorated kernel that
only other kernels call is a sub-kernel, and a helper's finding is reported
once, in the helper's file, when that file is checked too."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from nkilint.model.callgraph import LAUNCHED, SUBKERNEL, UNCALLED, KernelCallIndex
from nkilint.model.project import Project

# A decorated kernel that works on SBUF tiles its caller passes.
SUB = """\
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def scale_tile(tile, out_tile):
    nisa.tensor_scalar(dst=out_tile, data=tile, op0=nl.multiply, operand0=2.0)
    return out_tile
"""

CALLER = """\
import nki
import nki.language as nl
import nki.isa as nisa

from .sub import scale_tile


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    r = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    scale_tile(t, r)
    nisa.dma_copy(dst=out, src=r)
    return out
"""

HOST = """\
import numpy as np

from pkg.sub import scale_tile


def test_scale():
    scale_tile(np.zeros((128, 512), np.float32), np.zeros((128, 512), np.float32))
"""


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def findings(cli, *args: str) -> list[dict]:
    result = cli("check", "--format", "json", "--exit-zero", *args)
    return json.loads(result.stdout)["findings"]


def test_index_classifies_launched_subkernel_and_uncalled(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/sub.py": SUB, "pkg/caller.py": CALLER})
    project = Project(tmp_path)
    index = KernelCallIndex(project, [tmp_path])
    sub = (tmp_path / "pkg" / "sub.py").resolve()
    assert index.status(sub, "scale_tile") == SUBKERNEL
    (ref,) = index.info(sub, "scale_tile").refs
    assert ref.caller == "kernel" and ref.line == 14 and ref.how == "call"
    assert index.status((tmp_path / "pkg" / "caller.py").resolve(), "kernel") == UNCALLED
    write(tmp_path, {"tests/test_sub.py": HOST})
    index = KernelCallIndex(Project(tmp_path), [tmp_path])
    assert index.status(sub, "scale_tile") == LAUNCHED  # a host call launches it too


def test_subkernel_parameters_are_not_reported_as_hbm_operands(cli, project):
    # On its own (no caller anywhere), scale_tile's tile parameters are taken
    # for HBM inputs of a launched kernel: a hedged warning, never an error.
    write(project, {"solo.py": SUB})
    alone = [f for f in findings(cli, "--isolated", "solo.py") if f["rule"] == "NKI210"]
    assert [f["level"] for f in alone] == ["warning"] and "if scale_tile is launched" in alone[0]["message"]
    # In a package whose other kernel calls it with SBUF tiles, it is a
    # sub-kernel: no memory finding, whether the package or the file is named.
    write(project, {"pkg/__init__.py": "", "pkg/sub.py": SUB, "pkg/caller.py": CALLER})
    for target in ("pkg", "pkg/sub.py"):
        memory = [f for f in findings(cli, "--isolated", target) if f["rule"].startswith("NKI2")]
        assert memory == [], (target, memory)


HELPER = """\
import nki.language as nl


def make_tile():
    return nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
"""

USER = """\
import nki
import nki.language as nl

from helper import make_tile


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = make_tile()
    return out
"""


def test_helper_finding_reported_once_in_its_own_file(cli, project):
    write(project, {"helper.py": HELPER, "user.py": USER})
    both = [f for f in findings(cli, "--isolated", ".") if f["rule"] == "NKI101"]
    assert [(f["path"], f["range"]["start"]["line"]) for f in both] == [("helper.py", 5)]
    # The helper's file is not checked: the fault is reported at the call,
    # naming the helper's file and line.
    only_user = [f for f in findings(cli, "--isolated", "user.py") if f["rule"] == "NKI101"]
    assert [(f["path"], f["range"]["start"]["line"]) for f in only_user] == [("user.py", 10)]
    assert "helper.py:5" in only_user[0]["message"]
