"""Behaviour of the semantics rules (NKI7xx) beyond their embedded examples:
levels by dialect and target version, messages that name the tensor and
the numbers, and the cases the rules must stay silent on."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fixture_markers import lint_file
from nkilint.findings import Level
from nkilint.plugins import installed_rules

RULES = [r for r in installed_rules() if r.family == "semantics"]


def _lint(tmp_path: Path, code: str, select: str, version: str | None = None, name: str = "kernel.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(code).lstrip("\n"), encoding="utf-8")
    return [f for f in lint_file(path, nki_version=version, select=(select,)) if f.rule_id == select]


def test_family_has_its_rules_in_range():
    ids = sorted(r.id for r in RULES)
    assert ids and all(i.startswith("NKI7") for i in ids)
    assert len(ids) >= 24


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_explanation_cites_the_frontend_error_or_doc(rule):
    text = rule.explanation + " ".join(rule.references)
    cited = ("err_", "nki.errors", "error-codes/", "nki/migration", "nki-dynamic-loops", "nki/api/generated/",
             "nki/deep-dives/")
    assert any(c in text for c in cited), rule.id
    assert rule.references, rule.id


LEGACY_IF = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a, flag):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    cnd = nl.load(flag[0:1, 0:1])
    t = nl.load(a[0:128, 0:512])
    if cnd:
        nl.store(out, value=t)
    return out
"""

CURRENT_IF = """
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def k(a, flag, bias=None):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    f = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=f, src=flag)
    t = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    if bias:
        nisa.tensor_tensor(dst=t, data1=t, data2=bias, op=nl.add)
    if f:
        nisa.dma_copy(dst=out, src=t)
    return out
"""


def test_tensor_condition_is_an_error_in_legacy_and_names_the_tile(tmp_path):
    found = _lint(tmp_path, LEGACY_IF, "NKI701")
    assert [(f.span.start_line, f.level) for f in found] == [(9, Level.ERROR)]
    assert "`cnd` (SBUF (1, 1))" in found[0].message
    assert "err_dynamic_control_flow_not_supported" in found[0].message


def test_tensor_condition_is_a_warning_in_current_nki_and_optional_params_are_none_checks(tmp_path):
    found = _lint(tmp_path, CURRENT_IF, "NKI701")
    # `if bias:` only checks that a tensor was passed (NKI 0.3+ has no `is`); `if f:` tests data.
    assert [(f.span.start_line, f.level) for f in found] == [(14, Level.WARNING)]


def test_truth_of_last_and_operand_is_not_taken(tmp_path):
    code = """
    import neuronxcc.nki as nki
    import neuronxcc.nki.language as nl

    @nki.jit
    def k(a, b):
        out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
        ta = nl.load(a)
        tb = nl.load(b)
        pick = ta and tb
        nl.store(out, value=pick)
        return out
    """
    found = _lint(tmp_path, code, "NKI702")
    assert len(found) == 1 and found[0].span.start_col == 12  # `ta`, not `tb`


AFFINE = """
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def k(x):
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    part = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(4):
        t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[:, i * 512:(i + 1) * 512])
        nisa.tensor_reduce(dst=part, data=t, op=nl.add, axis=1)
    nisa.dma_copy(dst=out, src=part)
    return out
"""


@pytest.mark.parametrize("version,expected", [("0.2", [(12, Level.WARNING)]), ("0.3", []), ("0.6", [])])
def test_affine_range_conflict_depends_on_the_target_version(tmp_path, version, expected):
    found = _lint(tmp_path, AFFINE, "NKI711", version)
    assert [(f.span.start_line, f.level) for f in found] == expected
    if found:
        assert "`part`" in found[0].message and "line 9" in found[0].message


def test_affine_range_conflict_is_an_error_for_legacy_kernels_but_not_for_a_loop_indexed_write(tmp_path):
    code = """
    import neuronxcc.nki as nki
    import neuronxcc.nki.language as nl

    @nki.jit
    def k(x):
        out = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        buf = nl.ndarray((4, 128, 512), dtype=nl.float32, buffer=nl.sbuf)
        for i in nl.affine_range(4):
            row = i * 1
            buf[row] = nl.load(x[i])
            buf[0] = nl.load(x[i])
        for i in nl.affine_range(4):
            nl.store(out[i], value=buf[i])
        return out
    """
    found = _lint(tmp_path, code, "NKI711")
    assert [(f.span.start_line, f.level) for f in found] == [(11, Level.ERROR)]


SUBKERNEL = """
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit(mode="trace")
def helper(dst, src):
    nisa.tensor_copy(dst=dst, src=src)

@nki.jit
def k(x):
    out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    helper(t, t)
    nisa.dma_copy(dst=out, src=t)
    return out
"""


@pytest.mark.parametrize("version,lines", [("0.2", [14]), ("0.4", []), (None, [])])
def test_decorated_subkernel_only_for_nki_0_2(tmp_path, version, lines):
    assert [f.span.start_line for f in _lint(tmp_path, SUBKERNEL, "NKI721", version)] == lines


def test_out_of_bounds_message_names_range_and_dimension(tmp_path):
    code = """
    import nki
    import nki.language as nl
    import nki.isa as nisa

    @nki.jit
    def k(x):
        out = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.shared_hbm)
        src = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=src, src=x)
        for i in range(8):
            nisa.dma_copy(dst=out[:, i * 512:(i + 1) * 512], src=src[:, i * 512:(i + 1) * 512])
        return out
    """
    found = _lint(tmp_path, code, "NKI718")
    assert len(found) == 2 and {f.level for f in found} == {Level.ERROR}
    msg = found[0].message
    assert "4095" in msg and "size 4000" in msg and "dimension 1" in msg


def test_out_of_bounds_with_an_assert_bounded_size_is_a_warning(tmp_path):
    code = """
    import nki
    import nki.language as nl
    import nki.isa as nisa

    @nki.jit
    def k(x, n):
        assert n <= 1024
        assert n >= 256
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[:, 0:512])
        nisa.dma_copy(dst=out[:, 0:n], src=t[:, 0:n])
        return out
    """
    found = _lint(tmp_path, code, "NKI718")
    assert found and {f.level for f in found} == {Level.WARNING}


def test_out_of_bounds_is_silent_under_a_guard(tmp_path):
    code = """
    import nki
    import nki.language as nl
    import nki.isa as nisa

    @nki.jit
    def k(x):
        out = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.shared_hbm)
        src = nl.ndarray((128, 4000), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=src, src=x)
        for i in range(8):
            if (i + 1) * 512 <= 4000:
                nisa.dma_copy(dst=out[:, i * 512:(i + 1) * 512], src=src[:, i * 512:(i + 1) * 512])
        return out
    """
    assert _lint(tmp_path, code, "NKI718") == []


def test_scope_rule_reports_once_for_a_helper_reached_twice(tmp_path):
    code = """
    import neuronxcc.nki as nki
    import neuronxcc.nki.language as nl

    def last_pick(a, n):
        for i in nl.sequential_range(n):
            if i < 2:
                tmp = nl.load(a[i])
            else:
                tmp = nl.load(a[0])
        return nl.exp(tmp)

    @nki.jit
    def k(a):
        out = nl.ndarray((2, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out[0], value=last_pick(a, 4))
        nl.store(out[1], value=last_pick(a, 3))
        return out
    """
    found = _lint(tmp_path, code, "NKI709")
    assert [f.span.start_line for f in found] == [10]


def test_scope_rule_ignores_branches_on_specialization_time_values(tmp_path):
    code = """
    import neuronxcc.nki as nki
    import neuronxcc.nki.language as nl

    @nki.jit
    def k(a, use_exp: bool = False):
        out = nl.ndarray((4, 128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(4):
            if use_exp:
                t = nl.exp(nl.load(a[i]))
            else:
                t = nl.load(a[i])
            nl.store(out[i], value=t)
        return out
    """
    assert _lint(tmp_path, code, "NKI709") == []


def test_output_written_in_a_helper_from_another_module_is_not_reported(tmp_path):
    (tmp_path / "helpers.py").write_text(textwrap.dedent("""
        import nki.isa as nisa

        def fill(dst, src):
            nisa.dma_copy(dst=dst, src=src)
    """), encoding="utf-8")
    code = """
    import nki
    import nki.language as nl
    from helpers import fill

    @nki.jit
    def k(x):
        out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
        fill(out, x)
        return out
    """
    assert _lint(tmp_path, code, "NKI708") == []


def test_mutable_output_never_stored_is_an_error_in_current_nki(tmp_path):
    code = """
    import nki
    import nki.language as nl
    import nki.typing as nt

    @nki.jit
    def k(x, y: nt.mutable_tensor):
        return None
    """
    found = _lint(tmp_path, code, "NKI708")
    assert [(f.span.start_line, f.level) for f in found] == [(6, Level.ERROR)]
    assert "NCC_IGCA090" in found[0].message


def test_immutable_parameter_rule_skips_pass_by_reference_kernels(tmp_path):
    code = """
    import neuronxcc.nki as nki
    import neuronxcc.nki.language as nl

    @nki.trace
    def reduce_into(a, b):
        nl.store(b, value=nl.load(a))

    @nki.jit
    def returns_nothing(a, b):
        nl.store(b, value=nl.load(a))
    """
    assert _lint(tmp_path, code, "NKI706") == []


def test_legacy_only_rules_are_silent_on_current_kernels(tmp_path):
    code = """
    import nki
    import nki.language as nl
    import nki.isa as nisa

    @nki.jit
    def k(x):
        out = nl.ndarray((4, 128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
        for i in range(4):
            if i < 2:
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
            else:
                t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[i])
            nisa.dma_copy(dst=out[i], src=t)
        return out
    """
    for rule in ("NKI709", "NKI710", "NKI711", "NKI712", "NKI713", "NKI714", "NKI706"):
        assert _lint(tmp_path, code, rule) == [], rule


def test_nki_api_in_a_launching_host_function_and_static_cast_allowed(tmp_path):
    code = """
    import numpy as np
    import neuronxcc.nki as nki
    import neuronxcc.nki.language as nl

    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(a))
        return out

    def run():
        a = nl.static_cast(np.ones((128, 512)), np.float32)
        b = nki.simulate_kernel(k, a)
        return nl.load(b)
    """
    assert [f.span.start_line for f in _lint(tmp_path, code, "NKI719")] == [14]


def test_register_while_loop_inside_no_reorder_is_found_through_a_helper(tmp_path):
    """`while reg:` is a dynamic loop when the model knows ``reg`` is a
    runtime register, here a helper's VirtualRegister parameter; a `while`
    on a Python value is not."""
    code = """
    import nki
    import nki.isa as nisa
    import nki.language as nl

    def drain(reg: nisa.VirtualRegister, flags, t):
        with nl.no_reorder():
            while reg:
                nisa.memset(dst=t, value=0.0)
                nisa.register_load(reg, flags)

    @nki.jit
    def k(flags):
        t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
        reg = nisa.register_alloc(1)
        drain(reg, flags, t)
        again = 1
        with nl.no_reorder():
            while again:
                nisa.memset(dst=t, value=1.0)
                again = 0
    """
    found = _lint(tmp_path, code, "NKI705", version="0.5")
    assert [(f.span.start_line, f.level) for f in found] == [(7, Level.ERROR)]
    assert "`while reg:` register loop" in found[0].message


# -- NKI734: values returned by project helpers ----------------------------------------
NKI734_LEGACY_HELPER = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

def load_bias(bias):
    return nl.load(bias)

def bias_width(bias):
    return bias.shape[1] * 2

@nki.jit
def add_bias(x, bias, use_bias: bool):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    if use_bias:
        b = load_bias(bias)
        w = bias_width(bias)
    y = nl.add(t, b)
    nl.store(out, value=y)
    return out + w
"""

NKI734_CURRENT_HELPER = """
import nki
import nki.language as nl
import nki.isa as nisa
from utils import scale_tiles, scale_count

@nki.jit
def scaled(x, scales, post_scale: bool):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    if post_scale:
        s = scale_tiles(scales, 2)
        k = scale_count(scales)
    nisa.tensor_tensor(dst=t, data1=t, data2=s[0], op=nl.multiply)
    nisa.dma_copy(dst=out[0:k], src=t[0:k])
    return out
"""

NKI734_UTILS = """
import nki.language as nl
import nki.isa as nisa

def scale_tiles(scales, n):
    tiles = []
    for i in range(n):
        s = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=s, src=scales)
        tiles.append(s[0:128, 0:512])
    return tiles

def scale_count(scales):
    return scales.shape[0]
"""


def test_nki734_tile_returned_by_a_helper_is_reported_a_size_is_not(tmp_path):
    found = _lint(tmp_path, NKI734_LEGACY_HELPER, "NKI734", version="0.2")
    assert [(f.span.start_line, f.level) for f in found] == [(17, Level.WARNING)]
    assert "`b`" in found[0].message and "line 15" in found[0].message


def test_nki734_list_of_tiles_from_an_imported_helper_is_reported(tmp_path):
    (tmp_path / "utils.py").write_text(textwrap.dedent(NKI734_UTILS), encoding="utf-8")
    found = _lint(tmp_path, NKI734_CURRENT_HELPER, "NKI734")
    # s (the helper's list of tiles) is reported; k (a size from the other helper) is left to the caller's checks
    assert [(f.span.start_line, f.level) for f in found] == [(14, Level.WARNING)]
    assert "`s`" in found[0].message
