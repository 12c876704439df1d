"""The memory model (nkilint/model/memory.py) and the version / config
dependent behaviour of the memory rules (NKI2xx)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fixture_markers import lint_file
from nkilint.model.memory import analyze, summarize
from nkilint.model.semantic import analyze_file
from nkilint.source import SourceFile
from nkilint.targets import resolve_target
from nkilint.versions import LATEST

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "memory"


def kernels_of(code: str, target: str = "trn2"):
    code = textwrap.dedent(code)
    source = SourceFile("/virtual/kernel.py", code, "kernel.py")
    model = analyze_file(source, None, resolve_target(target), LATEST)
    return model.kernels


def kernels_of_file(path: Path, target: str = "trn2"):
    source = SourceFile(str(path), path.read_text(encoding="utf-8"), path.name)
    return analyze_file(source, None, resolve_target(target), LATEST).kernels


# ------------------------------------------------------------------ summary
def test_summary_is_json_and_documents_the_psum_peak():
    (kernel,) = kernels_of_file(FIXTURES / "current_psum_live_banks_good.py")
    summary = summarize(kernel, resolve_target("trn2"))
    json.dumps(summary)  # JSON-able
    psum = summary["psum"]
    assert psum["banks"] == 8 and psum["bank_bytes"] == 2048
    assert psum["peak_banks"] == 8
    assert psum["peak_bytes"] == 8 * 2048
    assert psum["peak_tensors"] == ["s_psum"]
    (s_psum,) = [t for t in psum["tensors"] if t["name"] == "s_psum"]
    assert s_psum["copies"] == 8 and s_psum["banks"] == 1 and s_psum["bytes_per_partition"] == 2048
    assert {"id", "line", "kind", "trip_count", "depth", "bytes", "peak_bytes"} <= set(psum["loops"][0])
    assert [d["depth"] for d in psum["by_depth"]] == [1]


def test_summary_sbuf_peak_is_the_cache_at_the_budget():
    (kernel,) = kernels_of_file(FIXTURES / "current_sbuf_cache_trn2_good.py")
    summary = summarize(kernel, resolve_target("trn2"))
    sbuf = summary["sbuf"]
    assert sbuf["capacity_bytes"] == 212728
    assert sbuf["peak_bytes"] == 212728 and sbuf["exact"] is True
    assert sbuf["peak_tensors"] == ["cache"]
    assert summary["psum"]["peak_banks"] == 0


def test_graph_command_shows_the_memory_summary(tmp_path):
    path = tmp_path / "k.py"
    path.write_text((FIXTURES / "current_psum_live_banks_good.py").read_text())
    out = subprocess.run([sys.executable, "-m", "nkilint", "graph", str(path), "--format", "json"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["kernels"][0]["memory"]["psum"]["peak_banks"] == 8


# ------------------------------------------------------------- live sets
def test_loop_local_psum_tile_counts_once():
    (kernel,) = kernels_of("""
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def k(a, b):
            out = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.shared_hbm)
            for j in range(16):
                ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                sb = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=sb, src=ps)
                nisa.dma_copy(dst=out[:, j * 512:(j + 1) * 512], src=sb)
            return out
    """)
    mem = analyze(kernel, resolve_target("trn2"))
    (ps,) = mem.of("psum")
    assert ps.copies == 1
    assert mem.peak("psum")[0] == 1
    assert not mem.overflows("psum")


def test_list_created_in_each_outer_iteration_is_not_multiplied_by_the_outer_loop():
    (kernel,) = kernels_of("""
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def k(a, b):
            out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
            for i in range(4):
                tiles = []
                for j in range(3):
                    ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=ps, stationary=a, moving=b)
                    tiles.append(ps)
                for j in range(3):
                    sb = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=sb, src=tiles[j])
                    nisa.dma_copy(dst=out, src=sb)
            return out
    """)
    mem = analyze(kernel, resolve_target("trn2"))
    (ps,) = mem.of("psum")
    assert ps.copies == 3


def test_tensor_used_across_a_loop_stays_live_for_the_whole_loop():
    (kernel,) = kernels_of("""
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def k(a, b):
            out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
            acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            for j in range(4):
                nisa.nc_matmul(dst=acc, stationary=a, moving=b)
                tmp = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=tmp, stationary=a, moving=b)
                sb = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=sb, src=tmp)
                nisa.dma_copy(dst=out, src=sb)
            return out
    """)
    mem = analyze(kernel, resolve_target("trn2"))
    acc, tmp = sorted(mem.of("psum"), key=lambda t: t.start)
    assert acc.end >= tmp.end  # acc is live during every iteration
    assert mem.peak("psum")[0] == 2


def test_legacy_tile_accumulated_in_place_takes_no_bank():
    (kernel,) = kernels_of_file(FIXTURES / "legacy_matmul_psum_edge_good.py")
    mem = analyze(kernel, resolve_target("trn2"))
    counted = [t.name for t in mem.of("psum") if t.counted]
    assert counted == ["res_psum"]


def test_placement_from_allocator_state_is_not_trusted():
    (kernel,) = kernels_of("""
        import nki
        import nki.language as nl
        import nki.isa as nisa

        class Stack:
            def __init__(self):
                self.addr = 0
            def alloc(self, shape):
                t = nl.ndarray(shape, dtype=nl.float32, buffer=nl.sbuf, address=(0, self.addr))
                self.addr = self.addr + 2048
                return t

        @nki.jit
        def k(x):
            out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
            stack = Stack()
            for i in range(4):
                t = stack.alloc((128, 512))
                nisa.dma_copy(dst=t, src=x)
            u = stack.alloc((128, 512))
            nisa.dma_copy(dst=u, src=x)
            nisa.dma_copy(dst=out, src=u)
            return out
    """)
    from nkilint.model.memory import placement

    mem = analyze(kernel, resolve_target("trn2"))
    assert all(placement(t, mem.target) is None for t in mem.of("sbuf"))


# ------------------------------------------------------------ configuration
def _run_check(tmp_path: Path, fixture: str, hardware: str, select: str, target: str = "trn2"):
    (tmp_path / "pyproject.toml").write_text(
        f"[tool.nkilint]\ntarget = \"{target}\"\n\n[tool.nkilint.hardware]\n{hardware}\n"
    )
    (tmp_path / "k.py").write_text((FIXTURES / fixture).read_text())
    out = subprocess.run([sys.executable, "-m", "nkilint", "check", "--select", select, "--format", "json", "k.py"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout) if out.stdout.strip() else []


def _ids(doc) -> list[str]:
    findings = doc if isinstance(doc, list) else doc.get("findings", [])
    return [f.get("rule_id") or f.get("code") or f.get("rule") for f in findings]


def test_seven_psum_banks_when_configured(tmp_path):
    """With NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE=true bank 7 is reserved: the
    8-bank kernel overflows once `psum_banks = 7` is configured."""
    assert _ids(_run_check(tmp_path, "current_psum_live_banks_good.py", "psum_banks = 8", "NKI203")) == []
    assert _ids(_run_check(tmp_path, "current_psum_live_banks_good.py", "psum_banks = 7", "NKI203")) == ["NKI203"]


def test_sbuf_budget_is_configurable(tmp_path):
    doc = _run_check(tmp_path, "current_sbuf_cache_trn2_good.py", "sbuf_usable_bytes_per_partition = 200000", "NKI204")
    assert _ids(doc) == ["NKI204"]


@pytest.mark.parametrize("version,expected", [("0.2", set()), ("0.3", {"NKI211", "NKI216"})])
def test_psum_dma_and_hbm_outputs_depend_on_the_nki_version(version, expected):
    # The nl.hbm output is built in a helper: NKI216's (NKI613 sees decorated kernels' own outputs).
    findings = lint_file(FIXTURES / "current_operand_memory_bad.py", nki_version=version, select=("NKI211", "NKI216", "NKI613"))
    assert {f.rule_id for f in findings} == expected


def test_parameters_of_helpers_analysed_alone_give_no_placement_errors():
    code = """
        import nki.language as nl
        import nki.isa as nisa

        def scale_rows(dst_tile, src_tile, factor):
            nisa.activation(dst=dst_tile, op=nl.copy, data=src_tile, scale=factor)
    """
    (kernel,) = kernels_of(code)
    assert kernel.kind == "probable"
    from nkilint.model import views

    (op_id, _), = list(kernel.graph.ops())
    assert {o.buffer for o in views.operands(kernel.graph, op_id, views.kernel_role(None, kernel))} == {"unknown"}


def test_jit_kernel_parameters_give_warnings_not_errors(tmp_path):
    """An @nki.jit function may be called as a sub-kernel with SBUF tiles
    (nki-library does): compute on its parameters is only a warning."""
    code = textwrap.dedent("""
        import nki
        import nki.language as nl
        import nki.isa as nisa

        @nki.jit
        def k(x):
            out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.activation(dst=t, op=nl.exp, data=x)
            nisa.dma_copy(dst=out, src=t)
            return out
    """)
    from nkilint.findings import Level

    path = tmp_path / "param_kernel.py"
    path.write_text(code)
    findings = lint_file(path, select=("NKI210",))
    assert [(f.rule_id, f.level) for f in findings] == [("NKI210", Level.WARNING)]
    assert "if k is launched as a top-level kernel" in findings[0].message
