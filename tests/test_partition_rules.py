"""Partition rules (NKI1xx): precision cases beyond the embedded examples,
the model gaps the rules work around, and the shared shape helpers."""

from __future__ import annotations

import ast
import textwrap

import pytest

from fixture_markers import lint_file
from nkilint.model.values import Const, Int, Sym, attainable_upper, int_binop
from nkilint_rules.partition import _shapes as pf


def lint(tmp_path, code: str, rules: str = "NKI1", target: str = "trn2", version: str | None = None):
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(code).lstrip("\n"), encoding="utf-8")
    return [f for f in lint_file(path, target, version, select=(rules,)) if f.rule_id.startswith(rules)]


def lines(findings):
    return sorted((f.span.start_line, f.rule_id, f.level.label) for f in findings)


# ------------------------------------------------------------------ helpers
def test_attainable_upper_trusts_one_symbol_only():
    x = Int(sym=Sym("x", 1, 128))
    assert attainable_upper(x) == 128
    assert attainable_upper(int_binop(ast.Mult, x, Const(2))) == 256  # affine in one symbol
    # x + x % 2: interval arithmetic says 129, the true maximum is 128.
    padded = int_binop(ast.Add, x, int_binop(ast.Mod, x, Const(2)))
    assert padded.bounds[1] == 129
    assert attainable_upper(padded) is None
    assert pf.over_maybe(padded, 128) is None
    assert attainable_upper(Const(7)) == 7


def test_provably_different_uses_affine_forms():
    n = Sym("n", 1, 512)
    a = Int(sym=n)
    b = int_binop(ast.Add, a, Const(1))
    assert pf.provably_different(a, b)
    assert not pf.provably_different(a, Int(sym=n))
    assert pf.provably_different(Const(128), Const(64))
    assert not pf.provably_different(a, Const(128))  # n may be 128
    assert pf.provably_equal(a, int_binop(ast.Sub, b, Const(1)))


# ------------------------------------------------------------------ NKI101
def test_compound_arithmetic_bound_gives_no_warning(tmp_path):
    # nki-library output_projection_cte: padded = s + s % 2 with s <= 128.
    found = lint(tmp_path, """
        import nki
        import nki.language as nl

        @nki.jit
        def kernel(x, s):
            assert s <= 128
            padded = s + (s % 2)
            ps = nl.ndarray((padded, 512), dtype=nl.bfloat16, buffer=nl.psum)
            return ps
        """, "NKI101")
    assert found == []


def test_bound_reached_by_a_loop_index_warns(tmp_path):
    found = lint(tmp_path, """
        import nki
        import nki.language as nl

        @nki.jit
        def kernel(x):
            for i in range(4):
                t = nl.ndarray((64 * (i + 1), 512), dtype=nl.float32, buffer=nl.sbuf)
            return x
        """, "NKI101")
    assert lines(found) == [(7, "NKI101", "warning")]
    assert "256" in found[0].message


def test_legacy_result_reports_only_the_root_cause(tmp_path):
    found = lint(tmp_path, """
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl

        @nki.jit
        def kernel(a):
            out = nl.ndarray((256, 512), dtype=a.dtype, buffer=nl.shared_hbm)
            t = nl.load(a[0:256, 0:512])
            e = nl.exp(t)
            s = nl.multiply(e, 2.0)
            nl.store(out[0:256, 0:512], value=s)
            return out
        """, "NKI101")
    assert lines(found) == [(7, "NKI101", "error")]


def test_hbm_tensors_are_exempt(tmp_path):
    found = lint(tmp_path, """
        import nki
        import nki.language as nl

        @nki.jit
        def kernel(a):
            out = nl.ndarray((4096, 4096), dtype=nl.float32, buffer=nl.shared_hbm)
            return out
        """)
    assert found == []


def test_helper_in_another_module_is_reported_at_the_call(tmp_path):
    (tmp_path / "helpers.py").write_text(textwrap.dedent("""
        import nki.language as nl

        def make_tile(rows):
            return nl.ndarray((rows, 512), dtype=nl.float32, buffer=nl.sbuf)
        """), encoding="utf-8")
    found = lint(tmp_path, """
        import nki
        from helpers import make_tile

        @nki.jit
        def kernel(a):
            t = make_tile(256)
            return a
        """, "NKI101")
    assert lines(found) == [(6, "NKI101", "error")]
    assert "helpers.py" in found[0].message


# ------------------------------------------------------------------ NKI102
def test_opaque_shape_is_not_read_as_one_dimension(tmp_path):
    # Model gap: nl.ndarray(cfg.shape, ...) on an unknown object gives a 1-D shape.
    found = lint(tmp_path, """
        import nki
        import nki.language as nl

        def alloc(value):
            return nl.ndarray(value.shape, dtype=nl.float32, buffer=nl.sbuf)

        @nki.jit
        def kernel(a, cfg):
            t = alloc(cfg.weights)
            return a
        """, "NKI102")
    assert found == []


# ------------------------------------------------------------------ NKI103
def test_leading_par_dim_in_legacy_code_is_fine(tmp_path):
    found = lint(tmp_path, """
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl

        @nki.jit
        def kernel(a):
            t = nl.ndarray((nl.par_dim(128), 4, 512), dtype=nl.float32, buffer=nl.sbuf)
            b = nl.ndarray((4, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.shared_hbm)
            return a
        """, "NKI103")
    assert found == []


# ------------------------------------------------------------------ NKI104
def test_current_nl_binary_ops_do_not_broadcast_partitions(tmp_path):
    code = """
        import {nki} as nki
        import {nki}.language as nl

        @nki.jit
        def kernel(a, b):
            x = nl.load(a[0:128, 0:512])
            r = nl.load(b[0:1, 0:512])
            y = nl.add(x, r)
            return y
        """
    current = lint(tmp_path, code.format(nki="nki"), "NKI104")
    legacy = lint(tmp_path, code.format(nki="neuronxcc.nki"), "NKI104")
    assert lines(current) == [(8, "NKI104", "error")]
    assert legacy == []


def test_broadcast_to_result_is_not_trusted(tmp_path):
    # Model gap: nl.broadcast_to(x, shape) is sized like x, not like shape.
    found = lint(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def kernel(a, b):
            x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            r = nl.ndarray((1, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=x, src=a)
            nisa.dma_copy(dst=r, src=b)
            rb = nl.broadcast_to(r, (128, 512))
            y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=y, data1=x, data2=rb, op=nl.multiply)
            return y
        """, "NKI104")
    assert found == []


def test_symbolic_partition_counts_differ_only_when_provable(tmp_path):
    found = lint(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def kernel(a):
            n, f = a.shape
            assert n <= 128
            x = nl.ndarray((n, f), dtype=nl.float32, buffer=nl.sbuf)
            y = nl.ndarray((128, f), dtype=nl.float32, buffer=nl.sbuf)
            z = nl.ndarray((n + 1, f), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=y, src=x)
            nisa.tensor_copy(dst=z, src=x)
            return y
        """, "NKI104")
    assert lines(found) == [(13, "NKI104", "error")]


# ------------------------------------------------------------------ NKI105-107
MATMUL = """
    import nki
    import nki.language as nl
    import nki.isa as nisa

    @nki.jit
    def mm(lhsT, rhs):
        a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
        b = nl.ndarray((128, {n}), dtype=nl.bfloat16, buffer=nl.sbuf)
        ps = nl.ndarray((128, {n}), dtype=nl.{dst}, buffer=nl.psum)
        nisa.nc_matmul(dst=ps, stationary=a, moving=b)
        return ps
    """


@pytest.mark.parametrize("target,n,dst,expected", [
    ("trn1", 512, "float32", []),
    ("trn2", 1024, "float32", [(10, "NKI107", "error")]),
    ("trn3", 4096, "float32", []),
    ("trn3", 8192, "float32", [(10, "NKI107", "error")]),
    ("trn3", 8192, "bfloat16", []),
])
def test_moving_free_limit_per_generation(tmp_path, target, n, dst, expected):
    found = lint(tmp_path, MATMUL.format(n=n, dst=dst), "NKI107", target=target)
    assert lines(found) == expected


def test_double_row_contraction_dimension_is_not_free_size(tmp_path):
    found = lint(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def mm(lhsT, rhs):
            a = nl.ndarray((128, 2, 128), dtype=nl.float8_e4m3, buffer=nl.sbuf)
            b = nl.ndarray((128, 2, 512), dtype=nl.float8_e4m3, buffer=nl.sbuf)
            ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(dst=ps, stationary=a, moving=b, perf_mode=nisa.matmul_perf_mode.double_row)
            return ps
        """, "NKI10")
    assert found == []


def test_row_tiling_limits_the_contraction(tmp_path):
    found = lint(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def mm(lhsT, rhs):
            a = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
            b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
            ps = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(dst=ps, stationary=a, moving=b, tile_position=(0, 0), tile_size=(64, 128))
            return ps
        """, "NKI105")
    assert lines(found) == [(10, "NKI105", "error")]


# ------------------------------------------------------------------ NKI110
def test_three_dimensional_arange_index_is_not_one_dimensional(tmp_path):
    # Model gap: nl.arange(n)[:, None, None] stays 1-D in the model.
    found = lint(tmp_path, """
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl

        @nki.jit
        def kernel(a):
            t = nl.load(a)
            i_p = nl.arange(128)[:, None, None]
            i_f1 = nl.arange(4)[None, :, None]
            i_f2 = nl.arange(8)[None, None, :]
            u = nl.copy(t[i_p, i_f1 * 8 + i_f2])
            return u
        """, "NKI110")
    assert found == []


# ------------------------------------------------------------------ NKI111
def test_quadrant_starts_from_loop_indices(tmp_path):
    found = lint(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def kernel(a):
            x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=x, src=a)
            y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            for i in range(4):
                nisa.tensor_copy(dst=y[i * 32:(i + 1) * 32, :], src=x[i * 32:(i + 1) * 32, :])
            for i in range(3):
                nisa.tensor_copy(dst=y[i * 32 + 16:i * 32 + 32, :], src=x[0:16, :])
            for i in range(8):
                nisa.tensor_copy(dst=y[i * 16:(i + 1) * 16, :], src=x[0:16, :])
            return y
        """, "NKI111")
    # i * 32 + 16 is never a quadrant boundary; i * 16 sometimes is (not decidable: no finding).
    assert lines(found) == [(13, "NKI111", "error")]


def test_mx_scale_packing_is_not_a_quadrant_violation(tmp_path):
    # aws-neuron-sdk nki/deep-dives/mxfp-matmul.rst packs MX scales at partition offsets inside quadrants.
    found = lint(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def kernel(a):
            x = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=x, src=a)
            q = nl.ndarray((128, 128), dtype=nl.float8_e4m3fn_x4, buffer=nl.sbuf)
            s = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.sbuf)
            nisa.quantize_mx(dst=q, src=x, dst_scale=s[4:, :])
            return q
        """, "NKI111")
    assert found == []


def test_partition_start_helper_composes_views(tmp_path):
    found = lint(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def kernel(a):
            x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=x, src=a)
            top = x[64:128, :]
            nisa.activation(dst=top[16:48, :], op=nl.exp, data=x[0:32, :])
            nisa.activation(dst=top[32:64, :], op=nl.exp, data=x[0:32, :])
            return x
        """, "NKI111")
    # top[16:48] starts at 80 (not a quadrant); top[32:64] starts at 96 (fine for 32 partitions).
    assert lines(found) == [(10, "NKI111", "error")]
    assert "80" in found[0].message


@pytest.mark.parametrize("target,level", [("trn1", "error"), ("trn2", "warning"), ("trn3", "warning")])
def test_size_dependent_start_rule_is_an_error_only_where_documented(tmp_path, target, level):
    found = lint(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def kernel(a):
            x = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=x, src=a)
            y = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=y[32:96, :], src=x[0:64, :])
            nisa.tensor_copy(dst=y[32:64, :], src=x[0:32, :], engine=nisa.engine.gpsimd)
            nisa.memset(dst=y[5:6, :], value=0.0, engine=nisa.engine.gpsimd)
            return y
        """, "NKI111", target=target)
    assert lines(found) == [(10, "NKI111", level)]


def test_arange_index_names_follow_python_scoping(tmp_path):
    """NKI110 counts a name as a bare 1-D arange only when every assignment
    of it in the indexing function's own scope binds one (a nested function's
    `i` is another variable; an unpacked or re-bound name is not certain)."""
    code = """
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl

        @nki.jit
        def kernel(a):
            out = nl.ndarray((64, 1), dtype=nl.float32, buffer=nl.shared_hbm)
            tmp = nl.zeros((128, 1), dtype=nl.float32, buffer=nl.sbuf)
            i = nl.arange(64)
            c = nl.exp(tmp[i, 0])

            def helper():
                k = nl.arange(64)
                return k

            k = nl.arange(64)[:, None]
            d = nl.exp(tmp[k, 0])
            p, q = nl.arange(64), nl.arange(64)
            e = nl.exp(tmp[p, 0])
            return out
    """
    assert lines(lint(tmp_path, code, "NKI110")) == [(9, "NKI110", "error")]
