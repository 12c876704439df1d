"""The JSON ``kernel`` field names the kernel a finding's code runs in,
whichever rule reported it (issue 18: it was null for most findings)."""

from __future__ import annotations

import json

import pytest

from conftest import write

KERNEL_FILE = """\
import nki
import nki.language as nl
import nki.isa as nisa

ROWS = [i for i in nl.affine_range(2)]


def _copy(dst, src):
    for j in nl.static_range(1):
        nisa.dma_copy(dst=dst, src=src)


def unused_helper(x):
    for j in nl.static_range(1):
        pass


@nki.jit
def copy_tiles(a):
    out = nl.ndarray((512, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, 0:512])
        _copy(out[i * 128:(i + 1) * 128, 0:512], t)
    return out


@nki.jit
def second(a):
    def inner(b):
        for k in nl.static_range(1):
            pass
        return b

    return inner(a)
"""


def _kernels(cli, *args: str) -> list[tuple[str, int, str | None]]:
    doc = json.loads(cli("check", "--format", "json", "--no-cache", *args).stdout)
    return [(f["rule"], f["range"]["start"]["line"], f["kernel"]) for f in doc["findings"]]


@pytest.mark.parametrize("select", [["--select", "NKI606"], []])
def test_findings_name_the_kernel_they_run_in(cli, project, select):
    """Also when no selected rule needs the model (--select NKI606)."""
    write(project / "k.py", KERNEL_FILE)
    found = [f for f in _kernels(cli, *select, "k.py") if f[0] == "NKI606"]
    assert found == [
        ("NKI606", 5, None),  # module level
        ("NKI606", 9, "copy_tiles"),  # a helper copy_tiles calls
        ("NKI606", 14, None),  # a helper no kernel calls
        ("NKI606", 21, "copy_tiles"),  # the kernel's own body
        ("NKI606", 31, "second"),  # a function nested in a kernel
    ]


def test_decorator_line_belongs_to_the_kernel(cli, project):
    text = "import nki\nimport nki.language as nl\n\n\n@nki.jit(mode='baremetal')\ndef k(a):\n    return a\n"
    write(project / "k.py", text)
    doc = json.loads(cli("check", "--format", "json", "--select", "ALL", "k.py").stdout)
    on_decorator = [f for f in doc["findings"] if f["range"]["start"]["line"] == 5]
    assert on_decorator, "expected a finding on the decorator line"
    assert {f["kernel"] for f in on_decorator} == {"k"}


def test_findings_of_every_rule_inside_a_kernel_are_named(cli, project):
    """Findings of all rules in a kernel and its helper: none is null."""
    write(project / "k.py", KERNEL_FILE.split("\n\n@nki.jit\ndef second")[0] + "\n")
    found = _kernels(cli, "--select", "ALL", "k.py")
    inside = [f for f in found if 18 <= f[1] <= 25 or 8 <= f[1] <= 10]
    assert inside and all(kernel == "copy_tiles" for _, _, kernel in inside), inside
