"""Migration levels by Neuron SDK release (issue 13 phase 2).

Every level here comes from the release facts (nkilint/releases/facts.py),
and every expectation from the documentation of that release:

* block dimensions: the compiler warns in SDK 2.23 and 2.24, an error from
  2.25 (announce-eos-block-dimension-nki; NKI release notes 2.23);
* ``nl.dynamic_range`` and ``while reg:``: deprecated in NKI 0.6 (SDK 2.32),
  a TypeError under the tracing frontend of NKI 0.7 (SDK 2.33 migration
  guide);
* ``neuronxcc.nki``: deprecated from 2.27, no longer importable in 2.34
  (announce-removal-neuronxcc-nki-2-34);
* aliases with no announced removal (``affine_range``, ``sequential_range``,
  the ``nisa.*_engine`` aliases, ``tile_size.psum_fmax``) are notes;
* NKI 0.8 (2.34) deprecates ``nisa.sendrecv`` / ``core_barrier`` (now
  ``nki.lnc``) and the register APIs, with removal announced: warnings.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from nkilint.cli import cli

LEGACY_BLOCKS = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((8, nl.par_dim(128), 512), dtype=a.dtype, buffer=nl.sbuf)
    buf[0] = nl.load(a)
    nl.store(out, value=buf[0])
    return out
"""

DYNAMIC_LOOPS = """\
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def count(data, n_sb):
    temp = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    reg = nisa.register_alloc(0)
    nisa.register_load(reg, n_sb)
    for i in nl.dynamic_range(reg):
        nisa.dma_copy(dst=temp, src=data.ap([[1, 1], [1, 1]], scalar_offset=i, indirect_dim=1))
    while reg:
        nisa.register_load(reg, n_sb)
"""

ALIASES = """\
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(4):
        nisa.dma_copy(dst=t, src=a[0:128, 0:512])
    for j in nl.sequential_range(2):
        nisa.dma_copy(dst=t, src=a[0:128, 0:512])
    nisa.tensor_copy(dst=t, src=t, engine=nisa.vector_engine)
    width = nl.tile_size.psum_fmax
    nisa.dma_copy(dst=out, src=t)
    return out
"""

LNC_AND_REGISTERS = """\
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[0:128, 0:512])
    nisa.core_barrier(t, (0, 1))
    reg = nisa.register_alloc(0)
    nisa.dma_copy(dst=out, src=t)
    return out
"""

LEGACY_COMPILER_HOST = """\
from neuronxcc.nki.compiler._internal import frontend_helper
import neuronxcc.nki.compiler as ncc


def build_flags():
    return ncc.skip_middle_end_transformations, frontend_helper
"""

LEGACY_COMPILER_KERNEL = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.compiler as ncc


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    t[...] = nl.load(a)
    nl.store(out, value=t)
    return out
"""

NKI07_KERNEL = """\
import nki
import nki.language as nl
import nki.isa as nisa


@nki.jit
def kernel(a):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)

    def load(dst):
        nisa.dma_copy(dst=dst, src=a[0:128, 0:512])

    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    load(t)
    flag = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=flag, value=1)
    s = nisa.scalar_load(flag)

    def then_fn():
        nisa.dma_copy(dst=out, src=t)

    def else_fn():
        nisa.dma_copy(dst=out, src=t)

    nl.if_else(s, then_fn, else_fn)
    return out
"""


def check(tmp_path: Path, code: str, sdk: str, select: str = "NKI6") -> list[tuple[int, str, str, str]]:
    (tmp_path / "k.py").write_text(textwrap.dedent(code))
    runner = CliRunner()
    result = runner.invoke(cli, ["check", "--isolated", "--exit-zero", "--sdk", sdk, "--select", select,
                                 "--format", "json", str(tmp_path / "k.py")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    return sorted((f["range"]["start"]["line"], f["rule"], f["level"], f["message"]) for f in doc["findings"])


def levels(findings) -> list[tuple[int, str, str]]:
    return [(line, rule, level) for line, rule, level, _ in findings]


@pytest.mark.parametrize("sdk, expected", [
    ("2.22", []),
    ("2.23", [(8, "NKI103", "warning")]),
    ("2.24", [(8, "NKI103", "warning")]),
    ("2.25", [(8, "NKI103", "error")]),
])
def test_block_dimensions_warn_at_2_23_and_2_24_and_are_errors_from_2_25(tmp_path, sdk, expected):
    found = check(tmp_path, LEGACY_BLOCKS, sdk, select="NKI103")
    assert levels(found) == expected
    if expected and expected[0][2] == "warning":
        assert "a compile error from 2.25" in found[0][3]


@pytest.mark.parametrize("sdk, level", [("2.31", None), ("2.32", "warning"), ("2.33", "error"), ("2.34", "error")])
def test_dynamic_range_and_while_register_are_warnings_at_2_32_and_errors_from_2_33(tmp_path, sdk, level):
    found = [f for f in check(tmp_path, DYNAMIC_LOOPS, sdk, select="NKI607")]
    if level is None:
        assert found == []
        return
    assert levels(found) == [(11, "NKI607", level), (13, "NKI607", level)]
    if level == "error":
        assert all("removed in NKI 0.7 (Neuron SDK 2.33)" in f[3] for f in found)


@pytest.mark.parametrize("sdk, level", [("2.26", None), ("2.33", "warning"), ("2.34", "error")])
def test_legacy_import_in_host_code_is_a_deprecation_until_2_33_and_an_error_at_2_34(tmp_path, sdk, level):
    found = check(tmp_path, "from neuronxcc import nki\n", sdk, select="NKI601")
    assert levels(found) == ([(1, "NKI601", level)] if level else [])
    if level == "error":
        assert "no longer imports" in found[0][3] and "2.34" in found[0][3]


@pytest.mark.parametrize("sdk", ["2.30", "2.32", "2.34"])  # psum_fmax is deprecated from 0.4 (2.30)
def test_aliases_without_an_announced_removal_are_notes(tmp_path, sdk):
    found = check(tmp_path, ALIASES, sdk, select="NKI604,NKI606")
    assert levels(found) == [(10, "NKI606", "note"), (12, "NKI606", "note"), (14, "NKI604", "note"),
                             (15, "NKI604", "note")]


def test_nki_0_8_deprecations_with_announced_removal_are_warnings_only_from_2_34(tmp_path):
    assert check(tmp_path, LNC_AND_REGISTERS, "2.33", select="NKI604") == []
    found = check(tmp_path, LNC_AND_REGISTERS, "2.34", select="NKI604")
    assert levels(found) == [(11, "NKI604", "warning"), (12, "NKI604", "warning")]
    assert "nki.lnc.core_barrier" in found[0][3]


@pytest.mark.parametrize("sdk", ["2.27", "2.30", "2.33", "2.34"])
def test_legacy_compiler_module_in_host_code_is_never_a_removed_api(tmp_path, sdk):
    found = check(tmp_path, LEGACY_COMPILER_HOST, sdk)
    assert [f for f in found if f[1] == "NKI603"] == []
    assert {f[1] for f in found} == {"NKI601"}  # the namespace itself is still reported


@pytest.mark.parametrize("sdk", ["2.30", "2.32", "2.34"])
def test_legacy_compiler_module_in_a_kernel_is_removed_and_never_comes_back(tmp_path, sdk):
    removed = [f for f in check(tmp_path, LEGACY_COMPILER_KERNEL, sdk) if f[1] == "NKI603"]
    assert levels(removed) == [(9, "NKI603", "error")]
    # nki.compiler of NKI 0.7 is compile configuration, not the allocation API.
    assert "back in" not in removed[0][3]


def test_an_nki_0_7_kernel_gives_no_error_at_2_34_but_2_32_rejects_its_new_apis(tmp_path):
    assert [f for f in check(tmp_path, NKI07_KERNEL, "2.34", select="ALL") if f[2] == "error"] == []
    at_2_32 = check(tmp_path, NKI07_KERNEL, "2.32")
    assert levels(at_2_32) == [(17, "NKI614", "error"), (25, "NKI614", "error")]


def test_unknown_api_message_names_the_newest_release_of_the_table(tmp_path):
    code = "import nki.language as nl\n\n\ndef f():\n    return nl.not_a_real_function\n"
    found = check(tmp_path, code, "2.34", select="NKI614")
    assert len(found) == 1
    assert "from 2.20 to 2.34" in found[0][3] and "2.32" not in found[0][3]


def test_public_nki_jit_is_removed_but_the_internal_xla_impl_one_is_not(tmp_path):
    public = check(tmp_path, "from torch_neuronx import nki_jit\n", "2.31", select="NKI603")
    assert levels(public) == [(1, "NKI603", "error")]
    internal = check(tmp_path, "from torch_neuronx.xla_impl.ops import nki_jit\n", "2.31", select="NKI603")
    assert internal == []


ISA_DTYPE = """
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def evict(a):
    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    sb = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=sb, src=ps, dtype=nl.bfloat16)
    out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=sb)
    return out
"""


@pytest.mark.parametrize("sdk, level", [("2.27", "warning"), ("2.28", "error"), ("2.29", "error"), ("2.34", "error")])
def test_isa_dtype_keyword_is_ignored_at_2_27_and_rejected_from_2_28(tmp_path, sdk, level):
    """The 2.27 notes remove dtype= from every nki.isa API, but 2.27 still
    drops unknown keywords silently; 2.28 raises 'unexpected keyword
    argument' (release notes, 0.2.0 bug fixes)."""
    found = check(tmp_path, ISA_DTYPE, sdk, select="NKI605")
    assert levels(found) == [(10, "NKI605", level)]
    assert ("ignores the keyword silently" in found[0][3]) is (level == "warning")


ISA_MASK = """
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def evict(a, n):
    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    sb = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=sb, src=ps, mask=n)
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=sb)
    return out
"""


@pytest.mark.parametrize("sdk, level", [("2.27", "warning"), ("2.28", "error"), ("2.31", "error"), ("2.34", "error")])
def test_isa_mask_keyword_is_ignored_at_2_27_and_rejected_from_2_28(tmp_path, sdk, level):
    """The 2.27 notes remove mask= from every nki.isa API; 2.27 drops the
    keyword silently, so the copy also writes what the mask excluded."""
    found = check(tmp_path, ISA_MASK, sdk, select="NKI605")
    assert levels(found) == [(10, "NKI605", level)]
    assert ("writes the elements the mask excluded" in found[0][3]) is (level == "warning")


UNKNOWN_KEYWORD = """
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def evict(a):
    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    sb = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=sb, src=ps, engin=nisa.engine.vector)
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=sb)
    return out
"""


@pytest.mark.parametrize("sdk, level", [("2.27", "warning"), ("2.28", "error"), ("2.33", "error")])
def test_unknown_keyword_is_ignored_at_2_27_and_rejected_from_2_28(tmp_path, sdk, level):
    """Release notes 2.28 (0.2.0 bug fixes): before, a misspelled keyword
    'was ignored without warning'; now 'unexpected keyword argument'."""
    found = check(tmp_path, UNKNOWN_KEYWORD, sdk, select="NKI615")
    assert levels(found) == [(10, "NKI615", level)]
    assert ("ignores it silently" in found[0][3]) is (level == "warning")


NC_MATMUL_227 = """
import nki
import nki.isa as nisa
import nki.language as nl

@nki.jit
def mm(a, b):
    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ps, stationary=a, moving=b, is_moving_zero=False, psumAccumulateFlag=3)
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=ps)
    return out
"""


@pytest.mark.parametrize("sdk, expected", [
    ("2.27", []),
    ("2.28", [(9, "NKI605", "error"), (9, "NKI605", "error")]),
])
def test_nc_matmul_2_27_names_are_accepted_at_2_27(tmp_path, sdk, expected):
    """SDK 2.27 and 2.28 both ship NKI 0.2.0; 2.27's known issues say
    is_moving_onezero 'was incorrectly named is_moving_zero in this
    release', and psumAccumulateFlag was removed in 2.28: no false error at
    2.27 (and no unknown-keyword report either)."""
    assert levels(check(tmp_path, NC_MATMUL_227, sdk, select="NKI605,NKI615")) == expected
