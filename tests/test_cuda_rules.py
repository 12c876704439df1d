"""Behaviour of the cuda (NKI4xx) and numerics (NKI5xx) families beyond the
embedded examples: name classification, dialect-dependent severities,
host/device scoping, default enablement, and the bundled example."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from nkilint.findings import Level
from nkilint.plugins import installed_rules
from nkilint_rules.cuda import _names as gn
from nkilint_rules.cuda.port_residue import residue_tokens

from fixture_markers import lint_file

RULES = installed_rules()


def _lint(tmp_path: Path, code: str, select=("NKI4", "NKI5"), target: str = "trn2", name: str = "kernel.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    return [f for f in lint_file(path, target=target, select=select) if f.rule_id.startswith(select)]


@pytest.mark.parametrize("qual,category", [
    ("triton.language.load", gn.MEMORY),
    ("triton.language.program_id", gn.PROGRAM_ID),
    ("triton.language.atomic_add", gn.ATOMIC),
    ("triton.language.dot", gn.TRITON_CALL),
    ("triton.language.math.exp2", gn.MATH),
    ("triton.language.float16", gn.DTYPE),
    ("triton.jit", gn.JIT),
    ("triton.autotune", gn.LAUNCH),
    ("triton.next_power_of_2", gn.POW2),
    ("numba.cuda.threadIdx.x", gn.THREAD),
    ("numba.cuda.blockDim.x", gn.BLOCK),
    ("numba.cuda.shared.array", gn.SHARED),
    ("numba.cuda.syncthreads", gn.BARRIER),
    ("numba.cuda.atomic.add", gn.ATOMIC),
    ("numba.cuda.shfl_down_sync", gn.WARP),
    ("numba.cuda.to_device", gn.RUNTIME),
    ("cupyx.jit.threadIdx.x", gn.THREAD),
    ("torch.cuda.synchronize", gn.BARRIER),
    ("torch.cuda.is_available", gn.RUNTIME),
    ("torch.bfloat16", gn.DTYPE),
    ("jax.experimental.pallas.program_id", gn.PROGRAM_ID),
])
def test_qualified_gpu_names_are_classified(qual, category):
    hit = gn.classify_qual(qual)
    assert hit is not None and hit.category == category
    assert hit.replacement  # every category names the NKI replacement


@pytest.mark.parametrize("qual", ["numpy.float32", "torch.matmul", "math.ceil", "numba.njit", "numba.cuda"])
def test_ordinary_names_are_not_gpu_names(qual):
    assert gn.classify_qual(qual) is None


def test_pasted_cuda_identifiers():
    assert gn.classify_bare("__syncthreads").category == gn.BARRIER
    assert gn.classify_bare("atomicAdd").category == gn.ATOMIC
    assert gn.classify_bare("threadIdx").category == gn.THREAD
    assert gn.classify_bare("rsqrtf").category == gn.MATH
    assert gn.classify_bare("tid") is None


def test_a_local_variable_named_like_cuda_is_not_a_leftover(tmp_path):
    findings = _lint(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def copy_kernel(x):
            threadIdx = 0
            out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[threadIdx:threadIdx + 128, :])
            nisa.dma_copy(dst=out, src=t)
            return out
    """)
    assert not [f for f in findings if f.rule_id == "NKI401"]


def test_gpu_names_in_docstrings_and_comments_are_never_errors(tmp_path):
    findings = _lint(tmp_path, '''
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def copy_kernel(x):
            """Each threadIdx.x used to call __syncthreads() and tl.load(ptr + offs)."""
            out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x)  # was: tl.load(x_ptr + offs, mask=mask); atomicAdd(...)
            nisa.dma_copy(dst=out, src=t)
            return out
    ''')
    assert {f.rule_id for f in findings} == {"NKI433"}
    assert all(f.level is Level.NOTE for f in findings)
    assert len(findings) == 1  # one summary per kernel
    assert "2 comment/docstring line(s)" in findings[0].message


def test_port_residue_is_off_by_default_and_a_note():
    rule = RULES.get("NKI433")
    assert rule is not None and rule.default_enabled is False and rule.level is Level.NOTE
    assert RULES.get("port-residue") is rule


def test_residue_tokens_keep_the_most_specific_match():
    assert residue_tokens("tl.load(x_ptr + offs)") == ["tl.load"]
    assert residue_tokens("plain NKI comment") == []


@pytest.mark.parametrize("rule_id", ["NKI432", "NKI433", "NKI509", "NKI511"])
def test_informational_rules_are_notes(rule_id):
    assert RULES.get(rule_id).level is Level.NOTE


def test_no_rule_of_the_families_is_an_error_on_data_dependent_numerics():
    # Numerics hazards depend on data values: never errors.
    for rule in RULES:
        if rule.id.startswith("NKI5"):
            assert rule.level in (Level.WARNING, Level.NOTE), rule.id


def test_program_id_severity_follows_the_dialect(tmp_path):
    current = _lint(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def k(x):
            out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
            j = nl.program_id(1)
            t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x)
            nisa.dma_copy(dst=out, src=t)
            return out
    """, name="current.py")
    legacy = _lint(tmp_path, """
        import neuronxcc.nki as nki
        import neuronxcc.nki.language as nl

        @nki.jit
        def k(x):
            out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
            j = nl.program_id(1)
            t = nl.load(x[0:128, j * 512:(j + 1) * 512])
            nl.store(out, value=t)
            return out
    """, name="legacy.py")
    assert [f.rule_id for f in current] == ["NKI434"] and current[0].level is Level.WARNING
    assert not [f for f in legacy if f.rule_id == "NKI434"]


def test_one_tile_per_program_is_a_note_in_legacy_and_a_warning_in_current(tmp_path):
    body = """
        @nki.jit
        def k(a):
            out = nl.ndarray((256, 512), dtype=a.dtype, buffer=nl.shared_hbm)
            i = nl.program_id(0)
            t = nl.load(a[i * 128:(i + 1) * 128, 0:512])
            nl.store(out[i * 128:(i + 1) * 128, 0:512], value=t)
            return out
    """
    legacy = _lint(tmp_path, "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n" + textwrap.dedent(body),
                   select=("NKI417",), name="legacy.py")
    current = _lint(tmp_path, "import nki\nimport nki.language as nl\n" + textwrap.dedent(body),
                    select=("NKI417",), name="current.py")
    assert [f.level for f in legacy] == [Level.NOTE]
    assert [f.level for f in current] == [Level.WARNING]


def test_host_runtime_calls_only_in_modules_with_kernels(tmp_path):
    findings = _lint(tmp_path, """
        import torch

        def reference(x):
            return torch.softmax(x.cuda(), dim=-1)
    """, name="host_only.py")
    assert not findings


def test_fp8_range_rule_depends_on_the_target(tmp_path):
    code = """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def quantize(x, amax):
            out = nl.ndarray((128, 512), dtype=nl.float8_e4m3, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x)
            q = nl.ndarray((128, 512), dtype=nl.float8_e4m3, buffer=nl.sbuf)
            nisa.tensor_scalar(dst=q, data=t, op0=nl.multiply, operand0=448.0 / amax)
            nisa.dma_copy(dst=out, src=q)
            return out
    """
    assert [f.rule_id for f in _lint(tmp_path, code, select=("NKI507",), target="trn2")] == ["NKI507"]
    assert [f.rule_id for f in _lint(tmp_path, code, select=("NKI507",), target="trn1")] == ["NKI507"]
    assert not _lint(tmp_path, code, select=("NKI507",), target="trn3")


def test_mx_matmul_with_bf16_psum_is_not_reported(tmp_path):
    # nc_matmul_mx documents bf16 PSUM as a supported destination (trn3 MX path).
    findings = _lint(tmp_path, """
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def mx(a, b, sa, sb):
            out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
            acc = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.psum)
            for k in range(4):
                nisa.nc_matmul_mx(dst=acc, stationary=a, moving=b, stationary_scale=sa, moving_scale=sb)
            res = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out, src=res)
            return out
    """, select=("NKI501",), target="trn3")
    assert not findings


def test_bundled_example_shows_the_port_leftovers():
    from nkilint import examples

    path = Path(examples.__file__).resolve().parent / "softmax_port.py"
    ids = {f.rule_id for f in lint_file(path, select=("NKI4", "NKI5"))}
    assert {"NKI414", "NKI503", "NKI504"} <= ids


def test_scalar_parameters_are_not_mistaken_for_tiles_or_pointers(tmp_path):
    # `scale` reaches an ISA call as operand0, so the model materialises it as a
    # parameter tensor of unknown shape; math on it and index arithmetic with
    # `start` are compile-time Python and must not be reported.
    findings = _lint(tmp_path, """
        import math
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def scale_kernel(x, scale, start):
            out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[start + 1:start + 129, :])
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scale)
            inv = 1.0 / math.sqrt(scale)
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=inv)
            nisa.dma_copy(dst=out, src=t)
            return out
    """)
    assert not findings, [f"{f.rule_id} {f.message}" for f in findings]


def test_torch_cuda_synchronize_in_host_code_is_a_runtime_warning(tmp_path):
    findings = _lint(tmp_path, """
        import torch
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def copy_kernel(x):
            out = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x)
            nisa.dma_copy(dst=out, src=t)
            return out

        def bench(x):
            y = copy_kernel(x)
            torch.cuda.synchronize()
            return y
    """)
    assert [(f.rule_id, f.level) for f in findings] == [("NKI426", Level.WARNING)]


MASKED_LOAD_TWO_REDUCTIONS = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def row_stats(x, n):
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:512]
    t = nl.load(x[i_p, i_f], mask=(i_f < n))
    m = nl.max(t, axis=1)
    s = nl.sum(t, axis=1)
    nl.store(out, value=nl.add(m, s))
    return out
"""


def test_masked_load_fill_names_the_first_reduction_in_the_source_whatever_the_hash_seed(tmp_path):
    # The reductions fed by the load are found as a set of op ids; the one
    # the message names must not depend on Python's string hash order.
    from conftest import run_nkilint

    (tmp_path / "kernel.py").write_text(textwrap.dedent(MASKED_LOAD_TWO_REDUCTIONS), encoding="utf-8")
    messages = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        proc = run_nkilint("check", "--isolated", "--no-cache", "--select", "NKI425", "--format", "json",
                           "--exit-zero", "kernel.py", cwd=tmp_path, env_extra={"PYTHONHASHSEED": seed})
        found = [f["message"] for f in json.loads(proc.stdout)["findings"] if f["rule"] == "NKI425"]
        assert len(found) == 1, proc.stdout
        messages |= set(found)
    assert len(messages) == 1
    assert "feeds a reduction (max at line 10)" in messages.pop()


SHADOWED_ELEMENT_LOOPS = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def add_kernel(a, b):
    out = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(OUTER):
        for i in nl.affine_range(INNER):
            x = nl.load(a[i, 0])
            y = nl.load(b[i, 0])
            nl.store(out[i, 0], value=nl.add(x, y))
    return out
"""


def _shadowed(outer: int, inner: int) -> str:
    return SHADOWED_ELEMENT_LOOPS.replace("OUTER", str(outer)).replace("INNER", str(inner))


def test_per_element_loop_lands_on_the_loop_that_binds_the_reused_iterator(tmp_path):
    # Both loops are named `i`; the index reads the inner one's.
    found = _lint(tmp_path, _shadowed(4, 128), select=("NKI418",))
    assert [(f.rule_id, f.span.start_line) for f in found] == [("NKI418", 9)]
    assert "(128 iterations)" in found[0].message
    # An inner loop of one trip indexes one element once: nothing to report,
    # although the outer loop of the same name runs 64 times.
    assert _lint(tmp_path, _shadowed(64, 1), select=("NKI418",)) == []


def test_one_element_dma_counts_the_loop_that_binds_the_reused_iterator(tmp_path):
    # The outer `i` runs once; the inner `i`, which the index reads, 64 times.
    found = _lint(tmp_path, _shadowed(1, 64), select=("NKI419",))
    assert sorted(f.span.start_line for f in found) == [10, 11, 12]
    assert _lint(tmp_path, _shadowed(64, 1), select=("NKI419",)) == []
