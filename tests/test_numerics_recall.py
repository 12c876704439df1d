"""NKI506 beyond its embedded examples: the range-reduction check on the
syntax around a ScalarE sin (AST, not source text), eps recognised through
separate instructions, and the inverse-square-root forms of a variance."""

from __future__ import annotations

import textwrap
from pathlib import Path

from fixture_markers import lint_file

SIN = """
import math
import nki
import nki.language as nl
import nki.isa as nisa
{prelude}

@nki.jit
def rope_sin(pos):
    out = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    ang = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ang, src=pos)
    {line}
    nisa.activation(dst=ang, op=nl.sin, data=ang)
    nisa.dma_copy(dst=out, src=ang)
    return out
"""


def _lint(tmp_path: Path, code: str, select=("NKI506",)):
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    return [f for f in lint_file(path, select=select) if f.rule_id.startswith(select)]


def _sin_lines(tmp_path: Path, line: str, prelude: str = "") -> list[int]:
    return [f.span.start_line for f in _lint(tmp_path, SIN.format(line=line, prelude=prelude))]


def test_sin_without_any_reduction_is_reported(tmp_path):
    assert _sin_lines(tmp_path, "x = 1") == [14]


def test_pi_in_a_comment_or_string_is_not_a_range_reduction(tmp_path):
    # The old text search took "pi" and "%" in comments and strings for a reduction.
    assert _sin_lines(tmp_path, 'name = "pi %d" % 3  # angles mod 2 pi') == [14]


def test_pi_or_modulo_in_the_function_counts(tmp_path):
    assert _sin_lines(tmp_path, "half = math.pi / 2") == []
    assert _sin_lines(tmp_path, "k = 7 % 3") == []


def test_a_module_constant_bound_to_pi_counts(tmp_path):
    assert _sin_lines(tmp_path, "period = TWO_PI", prelude="TWO_PI = 2 * math.pi") == []


def test_pi_after_the_call_does_not_count(tmp_path):
    code = SIN.format(line="x = 1", prelude="").replace(
        "    return out", "    half = math.pi\n    return out")
    assert [f.span.start_line for f in _lint(tmp_path, code)] == [14]


# -- NKI514 log-of-low-precision-sum -------------------------------------------------------
LOG_OF = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def kernel(x, y):
    out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512], dtype={dtype})
    u = nl.load(y[0:128, 0:512], dtype=nl.bfloat16)
    s = {expr}
    nl.store(out, value=nl.log(s))
    return out
"""


def _log_rules(tmp_path: Path, expr: str, dtype: str = "nl.bfloat16") -> list[tuple[str, int]]:
    code = LOG_OF.format(expr=expr, dtype=dtype)
    return [(f.rule_id, f.span.start_line) for f in _lint(tmp_path, code, select=("NKI5",))]


def test_one_plus_x_rounded_to_bf16_or_fp16_is_reported_at_the_add(tmp_path):
    assert _log_rules(tmp_path, "t + 1.0") == [("NKI514", 10)]
    assert _log_rules(tmp_path, "nl.add(2.0, t)", dtype="nl.float16") == [("NKI514", 10)]


def test_an_eps_a_tensor_sum_an_fp32_sum_or_an_unknown_dtype_is_not(tmp_path):
    assert _log_rules(tmp_path, "t + 1e-6") == []  # log(p + eps): the sum is not near 1
    assert _log_rules(tmp_path, "t + u") == []  # the values of u are unknown
    assert _log_rules(tmp_path, "nl.add(t, 1.0, dtype=nl.float32)") == []
    assert _log_rules(tmp_path, "t + 1.0", dtype="nl.float32") == []


def test_a_low_precision_reduction_is_left_to_nki503(tmp_path):
    # The rounded sum of a reduction is NKI503's finding; NKI514 does not repeat it.
    assert _log_rules(tmp_path, "nl.sum(t, axis=1)") == [("NKI503", 10)]


def test_the_message_names_the_log_and_the_lost_bits(tmp_path):
    code = LOG_OF.format(expr="t + 1.0", dtype="nl.bfloat16")
    (finding,) = _lint(tmp_path, code, select=("NKI514",))
    assert "rounded to bfloat16 before the log at line 11" in finding.message
    assert "below 2^-8" in finding.message


def test_a_per_iteration_sum_in_a_loop_is_reported_a_running_sum_is_not(tmp_path):
    code = """
    import nki
    import nki.language as nl
    import nki.isa as nisa

    @nki.jit
    def kernel(x):
        out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        s = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
        acc = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.memset(dst=acc, value=0.0)
        for i in range(16):
            t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, :])
            nisa.tensor_scalar(dst=s, data=t, op0=nl.add, operand0=1.0)
            nisa.activation(dst=t, op=nl.log, data=s)
            nisa.tensor_scalar(dst=acc, data=acc, op0=nl.add, operand0=1.0)
        nisa.activation(dst=acc, op=nl.log, data=acc)
        nisa.dma_copy(dst=out, src=acc)
        return out
    """
    assert [f.span.start_line for f in _lint(tmp_path, code, select=("NKI514",))] == [15]


# -- NKI506: the inversions of a variance ------------------------------------------------
EPS_LEGACY = """import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k1(x, eps):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    ms = nl.mean(nl.square(t), axis=1)
    r = nl.reciprocal(nl.sqrt(ms + eps))
    nl.store(out, value=t * r)
    return out

@nki.jit
def k2(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    ms = nl.mean(nl.square(t), axis=1)
    r = 1.0 / (nl.sqrt(ms) + 1e-6)
    nl.store(out, value=t * r)
    return out

@nki.jit
def k3(x, eps=1e-5):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    ms = nl.mean(t * t, axis=1)
    nl.store(out, value=nl.divide(t, nl.sqrt(nl.add(ms, eps))))
    return out

@nki.jit
def k4(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    v = nl.var(t, axis=1)
    nl.store(out, value=t * nl.reciprocal(nl.maximum(v, 1e-6)))
    return out

@nki.jit
def k5(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    s = nl.sum(t, axis=1)
    nl.store(out, value=t / s)
    return out
"""

EPS_CURRENT = """import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def k1(x, eps):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
    rms = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=rms, op=nl.sqrt, data=ss, scale=1.0 / 512, bias=eps)
    inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=inv, data=rms)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def k2(x, eps):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
    var = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=var, data=ss, op0=nl.multiply, operand0=1.0 / 512, op1=nl.add, operand1=eps)
    inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=inv, data=var)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def k3(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
    inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=inv, data=ss, op0=nl.add, operand0=1e-6, op1=nl.rsqrt)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def k4(x, eps):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
    inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=inv, data=ss, op0=nl.add, operand0=eps, op1=nl.power, operand1=-0.5)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def k5(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    st = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.sbuf)
    nisa.bn_stats(dst=st, data=t)
    mv = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
    nisa.bn_aggr(dst=mv, data=st)
    ve = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=ve, data=mv[:, 1:2], op0=nl.add, operand0=1e-5)
    inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=inv, data=ve)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=t)
    return out
"""

NO_EPS_LEGACY = """import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k_recip(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    ms = nl.mean(nl.square(t), axis=1)
    r = nl.reciprocal(nl.sqrt(ms))
    nl.store(out, value=t * r)
    return out

@nki.jit
def k_div(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    ms = nl.mean(nl.square(t), axis=1)
    r = 1.0 / nl.sqrt(ms)
    nl.store(out, value=t * r)
    return out

@nki.jit
def k_div2(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    ms = nl.mean(t * t, axis=1)
    nl.store(out, value=nl.divide(t, nl.sqrt(ms)))
    return out

@nki.jit
def k_rsqrt(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    ms = nl.mean(nl.square(t), axis=1)
    nl.store(out, value=t * nl.rsqrt(ms))
    return out

@nki.jit
def k_recip_var(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:512])
    v = nl.var(t, axis=1)
    nl.store(out, value=t * nl.reciprocal(v))
    return out
"""

NO_EPS_CURRENT = """import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def k_sqrt_recip(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
    rms = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=rms, op=nl.sqrt, data=ss, scale=1.0 / 512)
    inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=inv, data=rms)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def k_rsqrt_act(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
    inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=inv, op=nl.rsqrt, data=ss, scale=1.0 / 512)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def k_recip_direct(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=sq, data1=t, data2=t, op=nl.multiply)
    ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=ss, data=sq, op=nl.add, axis=1)
    inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=inv, data=ss)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def k_bn(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    st = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.sbuf)
    nisa.bn_stats(dst=st, data=t)
    mv = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
    nisa.bn_aggr(dst=mv, data=st)
    inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=inv, op=nl.rsqrt, data=mv[:, 1:2])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def k_tsc_rsqrt(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
    inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=inv, data=ss, op0=nl.multiply, operand0=1.0 / 512, op1=nl.rsqrt)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=t)
    return out

@nki.jit
def k_pow(x):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:512])
    sq = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    ss = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=sq, op=nl.square, data=t, reduce_op=nl.add, reduce_res=ss)
    inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=inv, data=ss, op0=nl.multiply, operand0=1.0 / 512, op1=nl.power, operand1=-0.5)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=t)
    return out
"""


def test_every_eps_or_clamp_form_silences_the_inversion(tmp_path):
    # sqrt(ms + eps), sqrt(ms) + eps, nl.add(ms, eps), a maximum, a plain sum;
    # a scalar bias on the sqrt, an add stage, add-then-rsqrt, add-then-power, bn_aggr + eps.
    assert _lint(tmp_path, EPS_LEGACY) == []
    assert _lint(tmp_path, EPS_CURRENT) == []


def test_every_eps_free_inversion_is_reported_once(tmp_path):
    assert [f.span.start_line for f in _lint(tmp_path, NO_EPS_LEGACY)] == [9, 18, 27, 35, 43]
    assert [f.span.start_line for f in _lint(tmp_path, NO_EPS_CURRENT)] == [16, 30, 45, 60, 74, 88]
