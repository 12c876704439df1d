"""Migration family (NKI6xx): levels by target version, API-table lookups,
and the cases the embedded examples do not pin down (false-positive guards
taken from the real kernels, fix safety decisions)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from nkilint.findings import Level
from nkilint.versions import NkiVersion
from nkilint.model import api_history as api

from conftest import write
from fixture_markers import lint_file

V = NkiVersion.parse


def lint(tmp_path: Path, code: str, version: str = "0.6", name: str = "k.py"):
    path = write(tmp_path / name, textwrap.dedent(code))
    return [f for f in lint_file(path, nki_version=version, select=("NKI6",)) if f.rule_id.startswith("NKI6")]


def ids(findings) -> list[tuple[int, str, str]]:
    return sorted((f.span.start_line, f.rule_id, f.level.label) for f in findings)


LEGACY_KERNEL = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a):
    i = nl.arange(128)[:, None]
    return nl.load(a[i, 0:512])
"""


@pytest.mark.parametrize(
    "version,expected",
    [
        ("0.1", []),
        ("0.2", [(1, "NKI601", "warning"), (2, "NKI601", "warning"), (6, "NKI603", "note"), (7, "NKI603", "note")]),
        ("0.3", [(1, "NKI601", "warning"), (2, "NKI601", "warning"), (6, "NKI603", "note")]),
        ("0.4", [(1, "NKI601", "error"), (2, "NKI601", "error"), (6, "NKI603", "error")]),
        ("0.6", [(1, "NKI601", "error"), (2, "NKI601", "error"), (6, "NKI603", "error")]),
    ],
)
def test_level_follows_the_target_version(tmp_path, version, expected):
    """Legacy code is the port list: notes while the target compiles it
    (0.2, 0.3; the deprecated namespace itself is the warning), errors from
    0.4; nl.load is gone only in 0.2."""
    assert ids(lint(tmp_path, LEGACY_KERNEL, version)) == expected


def test_legacy_host_code_is_a_warning_and_its_port_items_notes(tmp_path):
    code = """\
    import numpy as np
    from neuronxcc import nki

    def test_kernel(kernel):
        return nki.simulate_kernel(kernel, np.zeros((128, 512)))
    """
    assert ids(lint(tmp_path, code)) == [(2, "NKI601", "warning"), (5, "NKI603", "note")]


def test_nki_library_idioms_are_not_errors(tmp_path):
    """Constructs seen in aws-neuron/nki-library (targets 0.6): `is None`,
    nki.isa.constants, nki.meta, nl.range (undocumented: a warning at most)."""
    code = """\
    import nki
    import nki.isa as nisa
    import nki.language as nl
    from nki.isa.constants import oob_mode, dge_mode

    @nki.jit
    def k(a, bias=None):
        out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a, oob_mode=oob_mode.skip, dge_mode=dge_mode.hwdge)
        if bias is not None:
            pass
        for i in nl.range(2):
            pass
        spec = nki.meta.tensor
        nisa.dma_copy(dst=out, src=t)
        return out
    """
    found = lint(tmp_path, code)
    assert ids(found) == [(13, "NKI614", "warning")]


def test_decorated_subkernel_outputs_are_not_kernel_outputs(tmp_path):
    """A @nki.jit function called from another kernel returns into that
    kernel, not to the host (nki-library all_expert_mx_impl.py)."""
    code = """\
    import nki
    import nki.isa as nisa
    import nki.language as nl

    @nki.jit
    def stage(x):
        scratch = nl.ndarray((1, 8), dtype=x.dtype, buffer=nl.private_hbm)
        nisa.dma_copy(dst=scratch, src=x)
        return scratch

    @nki.jit
    def top(x):
        out = nl.ndarray((1, 8), dtype=x.dtype, buffer=nl.shared_hbm)
        s = stage(x)
        nisa.dma_copy(dst=out, src=s)
        return out
    """
    assert ids(lint(tmp_path, code)) == []


def test_register_bounded_loop_gets_no_fix(tmp_path):
    """sequential_range with a register bound is a dynamic loop in 0.3-0.5:
    rewriting it as range() would change its meaning."""
    code = """\
    import nki
    import nki.isa as nisa
    import nki.language as nl

    @nki.jit
    def k(a, n_sb):
        reg = nisa.register_alloc(0)
        nisa.register_load(reg, n_sb)
        for i in nl.sequential_range(reg):
            pass
        for j in nl.sequential_range(4):
            pass
    """
    found = lint(tmp_path, code, "0.4")
    assert ids(found) == [(9, "NKI606", "note"), (11, "NKI606", "note")]
    by_line = {f.span.start_line: f for f in found}
    assert by_line[9].fix is None
    assert by_line[11].fix is not None and by_line[11].fix.safe


def test_import_rewrite_is_offered_only_without_other_port_items(tmp_path):
    clean = """\
    import neuronxcc.nki.language as nl

    def k(a):
        return nl.load(a)
    """
    (finding,) = lint(tmp_path, clean, name="clean.py")
    assert finding.rule_id == "NKI601" and finding.fix is not None and not finding.fix.safe
    assert finding.fix.edits[0].replacement == "import nki.language as nl"
    ported = [f for f in lint(tmp_path, LEGACY_KERNEL, name="port.py") if f.rule_id == "NKI601"]
    assert ported and all(f.fix is None for f in ported)
    no_alias = lint(tmp_path, "import neuronxcc.nki.language\n", name="noalias.py")
    assert [f.fix for f in no_alias] == [None]
    # neuronxcc.nki.kernels (legacy reference kernels) has no nki.* counterpart.
    kernels = lint(tmp_path, "from neuronxcc.nki.kernels.attention import flash_fwd\n", name="kernels.py")
    assert [f.fix for f in kernels] == [None]
    # All or nothing: a file must not end up mixing the namespaces.
    partial = lint(tmp_path, "import neuronxcc.nki.language as nl\nfrom neuronxcc.nki.kernels import k\n",
                   name="partial.py")
    assert [f.fix for f in partial] == [None, None]
    # nki.typing arrives in 0.3.
    typing02 = lint(tmp_path, "import neuronxcc.nki.typing as nt\n", "0.2", name="typing02.py")
    assert [f.fix for f in typing02] == [None]


def test_mixed_namespaces_error_only_when_both_are_used(tmp_path):
    code = """\
    import neuronxcc.nki.language as nl_old
    import nki.language as nl

    def k(a):
        t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        return nl_old.load(a)
    """
    mixed = [f for f in lint(tmp_path, code) if f.rule_id == "NKI602"]
    assert [(f.span.start_line, f.level) for f in mixed] == [(1, Level.ERROR)]
    for_legacy = [f for f in lint(tmp_path, code, "0.1", name="k01.py") if f.rule_id == "NKI602"]
    assert [f.span.start_line for f in for_legacy] == [2]  # the namespace 0.1 does not have


def test_unknown_keyword_suggests_and_newer_api_names_its_version(tmp_path):
    code = """\
    import nki.isa as nisa
    import nki.language as nl

    def k(dst, src, reg):
        nisa.tensor_copy(dst=dst, src=src, enigne=nisa.engine.vector)
        nisa.dma_copy(dst=dst, src=src, priority=1)
        nl.fori_loop(0, reg, print)
    """
    found = lint(tmp_path, code, "0.3")
    messages = {f.span.start_line: f.message for f in found}
    assert "did you mean `engine`" in messages[5]
    assert "added in NKI 0.4" in messages[6]
    assert "added in NKI 0.6" in messages[7]
    assert {f.level for f in found} == {Level.ERROR}


def test_api_table_lookups():
    assert api.name_status("nki.language.arange", V("0.6")).state == "gone"
    load = api.name_status("nki.language.load", V("0.2"))
    assert load.state == "gone" and V("0.1") in load.earlier and V("0.3") in load.later
    assert api.name_status("nki.language.load", V("0.3")).state == "found"
    assert api.name_status("nki.isa.constants.oob_mode.skip", V("0.6")).state == "found"
    assert api.name_status("nki.meta.tensor", V("0.6")).state == "unjudged"
    assert api.name_status("nki.language.zeroes", V("0.6")).state == "unknown"
    # deprecated in 0.3, removed in 0.4 although the 2.29.1 stubs dropped it already
    assert api.fmt_versions(api.versions_with("nki.isa.tensor_copy_dynamic_src")) == "0.1-0.3"
    assert api.closest("zeroes", api.member_names("nki.language", V("0.6"))) == ["zeros"]
    assert V("0.1") in api.param_history("nki.isa.dma_copy", "dst_rmw_op")
    assert V("0.3") not in api.param_history("nki.isa.dma_copy", "dst_rmw_op")


def test_register_bound_passed_to_a_helper_gets_no_fix(tmp_path):
    """The register reaches the loop through a helper's parameter: the model
    follows the value, so the helper's loop is dynamic too."""
    code = """\
    import nki
    import nki.isa as nisa
    import nki.language as nl

    def repeat(n, t):
        for i in nl.sequential_range(n):
            nisa.memset(dst=t, value=0.0)

    @nki.jit
    def k(a, n_sb):
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        reg = nisa.register_alloc(0)
        nisa.register_load(reg, n_sb)
        repeat(reg, t)
        repeat(4, t)
    """
    found = lint(tmp_path, code, "0.4")
    assert ids(found) == [(6, "NKI606", "note")]
    assert found[0].fix is None


def test_presence_tested_uses_of_missing_names_are_not_reported(tmp_path):
    """Removed (NKI603), moved (NKI604) and later (NKI614) names under a
    hasattr/getattr test never run on a release without them; the same uses
    without the test are reported."""
    code = """
    import nki
    import nki.language as nl

    def spec(shape, dtype, n):
        t = nki.tensor(shape, dtype) if hasattr(nki, "tensor") else nki.meta.tensor(shape, dtype)
        if not hasattr(nl, "spmd_dim"):
            return t, (n,)
        grid = (nl.spmd_dim(n, nl.nc(2)),) if getattr(nl, "nc", None) is not None else (n,)
        loop = hasattr(nl, "fori_loop") and nl.fori_loop
        return t, grid, loop, nki.tensor, nl.spmd_dim(n, nl.nc(2)), nl.fori_loop
    """
    found = ids(lint(tmp_path, textwrap.dedent(code), version="0.5"))
    # Line 11: the unguarded copies (nl.spmd_dim is guarded by the early return, nl.nc is not).
    assert found == [(11, "NKI603", "error"), (11, "NKI604", "error"), (11, "NKI614", "error")]
