"""Behaviour of the pipeline rules (NKI3xx) beyond their embedded examples:
the loop facts they rest on, version and target dependence, the cases they
must stay quiet on, and the numbers their messages carry."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from fixture_markers import lint_file
from nkilint.findings import Level
from nkilint.model import loops
from nkilint.model.project import Project
from nkilint.model.semantic import analyze_file
from nkilint.plugins import installed_rules
from nkilint.source import SourceFile
from nkilint.targets import TARGETS
from nkilint.versions import LATEST

HEAD = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n\n"
LEGACY = "import neuronxcc.nki as nki\nimport neuronxcc.nki.language as nl\n\n"


def clean(code: str) -> str:
    """The import header followed by the dedented kernel."""
    for head in (HEAD, LEGACY):
        if code.startswith(head):
            return head + textwrap.dedent(code[len(head):])
    return textwrap.dedent(code)


def lint(tmp_path: Path, code: str, rule: str, version: str | None = None, target: str = "trn2"):
    path = tmp_path / "kernel.py"
    path.write_text(clean(code), encoding="utf-8")
    return [f for f in lint_file(path, target=target, nki_version=version, select=(rule,)) if f.rule_id == rule]


def model_of(tmp_path: Path, code: str, version=LATEST):
    path = tmp_path / "kernel.py"
    path.write_text(clean(code), encoding="utf-8")
    return analyze_file(SourceFile(str(path), path.read_text()), Project(tmp_path), TARGETS["trn2"], version)


# -- loop facts ------------------------------------------------------------------
MATMUL = HEAD + """
@nki.jit
def mm(lhsT, rhs):
    K, M = lhsT.shape
    K2, N = rhs.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in range(M // 128):
        for n in range(N // 512):
            for k in range(K // 128):
                a = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
    return out
"""


def test_loop_indices_are_found_and_outer_indices_are_invariant_inside(tmp_path):
    model = model_of(tmp_path, MATMUL)
    graph = model.kernels[0].graph
    lf = loops.nest_of(graph)
    by_header = {lp.header(): lp for lp in lf.loops.values()}
    m, n, k = (by_header[f"for {v} in range({e})"] for v, e in
               (("m", "M // 128"), ("n", "N // 512"), ("k", "K // 128")))
    # n's index is used nowhere: unknown to the name heuristic, known when the
    # model records it on the loop node.
    assert n.sym is graph.attrs(n.loop_id).get("index_sym")
    assert m.sym.ident < k.sym.ident and k.watermark >= m.sym.ident
    view = next(v for v, d in graph.views() if d.get("name") == "lhsT")
    assert lf.access_variance(view, k) == loops.VAR
    assert lf.access_variance(view, m) == loops.VAR
    assert lf.access_variance(view, n) == loops.UNK  # k's index moves inside n
    op = next(o for o, d in graph.ops() if d["api"] == "nki.isa.dma_copy")
    fixed = lf.inner_indices(op, n)
    assert fixed == frozenset({k.sym})
    assert lf.access_variance(view, n, fixed) == loops.INV


def test_nested_loops_over_the_same_iterable_leave_the_index_unknown(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x):
        for i in range(4):
            for j in range(4):
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
    """
    graph = model_of(tmp_path, code).kernels[0].graph
    lf = loops.nest_of(graph)
    outer, inner = sorted(lf.loops.values(), key=lambda lp: len(lp.ancestors))
    # Without the model's own record the two indices cannot be told apart by
    # name: both stay unknown rather than being mixed up.
    for lp in (outer, inner):
        assert lp.sym is graph.attrs(lp.loop_id).get("index_sym")
    assert outer.sym is None or outer.sym is not inner.sym


def test_a_loop_carried_variable_is_never_invariant(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x):
        off = 0
        for i in range(4):
            t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[0:128, off:off + 512])
            off = off + 512
    """
    graph = model_of(tmp_path, code).kernels[0].graph
    lf = loops.nest_of(graph)
    (loop,) = lf.loops.values()
    view = next(v for v, d in graph.views() if d.get("name") == "x")
    assert lf.access_variance(view, loop) != loops.INV


def test_if_depending_on_the_iteration_makes_an_op_conditional(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x, flag):
        for i in range(4):
            t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            first = i == 0
            if first:
                nisa.dma_copy(dst=t, src=x[0:128, 0:512])
            if flag:
                nisa.dma_copy(dst=t, src=x[128:256, 0:512])
    """
    model = model_of(tmp_path, code)
    graph = model.kernels[0].graph
    lf = loops.nest_of(graph)
    (loop,) = lf.loops.values()
    copies = sorted((d["site"].line, o) for o, d in graph.ops() if d["api"] == "nki.isa.dma_copy")
    assert [model.analysis(loops.Loops).runs_every_iteration(graph.attrs(o)["site"], loop) for _, o in copies] == [False, True]


# -- rule behaviour -----------------------------------------------------------------
def test_every_pipeline_rule_is_a_warning_or_note():
    rules = [r for r in installed_rules() if r.id.startswith("NKI3")]
    assert len(rules) == 12
    assert all(r.level in (Level.WARNING, Level.NOTE) and r.family == "pipeline" for r in rules)


SINGLE_BUFFER_LEGACY = LEGACY + """
@nki.jit
def k(x):
    n_tiles, rows, cols = x.shape
    out = nl.ndarray((8, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    buf = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.{kind}(8):
        buf[...] = nl.load(x[i])
        nl.store(out[i], value=nl.exp(buf))
    return out
"""


@pytest.mark.parametrize("kind,reported", [("sequential_range", True), ("affine_range", False)])
def test_legacy_single_buffer_in_affine_range_is_left_to_the_semantics_family(tmp_path, kind, reported):
    found = lint(tmp_path, SINGLE_BUFFER_LEGACY.format(kind=kind), "NKI301")
    assert bool(found) is reported
    if reported:
        assert "buf" in found[0].message and "sequential_range(8)" in found[0].message
        assert "inside the loop" in found[0].hint


def test_single_buffer_used_after_the_loop_is_not_reported(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        buf = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        for i in range(8):
            nisa.dma_copy(dst=buf, src=x[i * 128:(i + 1) * 128, 0:512])
            nisa.activation(dst=res, op=nl.exp, data=buf)
        nisa.dma_copy(dst=out, src=buf)
        return out
    """
    assert not lint(tmp_path, code, "NKI301")


def test_single_buffer_message_carries_the_transfer_estimate_for_the_target(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x):
        out = nl.ndarray((1024, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
        buf = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
        for i in range(8):
            nisa.dma_copy(dst=buf, src=x[i * 128:(i + 1) * 128, 0:1024])
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:1024], src=buf)
            nisa.activation(dst=buf, op=nl.exp, data=buf)
        return out
    """
    trn2 = lint(tmp_path, code, "NKI301", target="trn2")
    trn1 = lint(tmp_path, code, "NKI301", target="trn1")
    assert len(trn2) == 1 and "512 KiB per iteration" in trn2[0].message and "368 GB/s" in trn2[0].message
    assert "272 GB/s" in trn1[0].message


def test_invariant_load_reports_the_outermost_invariant_loop_with_its_cost(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x, w):
        out = nl.ndarray((1024, 2048), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        for i in range(8):
            for j in range(4):
                wt = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=wt, src=w[0:128, 0:1024])
                nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:1024], src=wt)
        return out
    """
    (f,) = lint(tmp_path, code, "NKI303")
    assert "for i in range(8)" in f.message and "for j in range(4)" in f.message
    assert "31 extra DMAs of 256 KiB" in f.message  # the nest runs it 8 x 4 times for one block


def test_invariant_load_is_quiet_when_the_loop_writes_its_source(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x, scratch):
        for i in range(8):
            t = nl.ndarray((128, 1024), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=scratch[0:128, 0:1024])
            nisa.activation(dst=t, op=nl.exp, data=t)
            nisa.dma_copy(dst=scratch[0:128, 0:1024], src=t)
        return scratch
    """
    assert not lint(tmp_path, code, "NKI303")


SERIAL = HEAD + """
@nki.jit
def k(x):
    out = nl.ndarray((1024, 2048), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for i in nl.sequential_range(8):
        t = nl.ndarray((128, 2048), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, 0:2048])
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:2048], src=t)
    return out
"""


@pytest.mark.parametrize("version,reported", [("0.2", True), ("0.3", False), ("0.6", False)])
def test_serialized_loop_rule_follows_the_loop_semantics_of_the_version(tmp_path, version, reported):
    assert bool(lint(tmp_path, SERIAL, "NKI304", version=version)) is reported


def test_serialized_loop_rule_needs_every_call_understood(tmp_path):
    code = LEGACY + """
    def mystery(t):
        return t

    @nki.jit
    def k(x, out):
        for i in range(8):
            t = nl.load(x[i])
            external_helper(t)
            nl.store(out[i], value=t)
        return out
    """
    assert not lint(tmp_path, code, "NKI304")


def test_serialized_loop_rule_sees_a_carried_python_variable(tmp_path):
    code = LEGACY + """
    @nki.jit
    def k(x, out):
        prev = nl.load(x[0])
        for i in range(8):
            t = nl.load(x[i])
            nl.store(out[i], value=nl.add(t, prev))
            prev = t
        return out
    """
    assert not lint(tmp_path, code, "NKI304")


@pytest.mark.parametrize("cols,level", [(16, Level.WARNING), (256, Level.NOTE), (512, None)])
def test_small_dma_levels_follow_the_bandwidth_guide(tmp_path, cols, level):
    code = HEAD + f"""
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.shared_hbm)
        for j in range({8192 // cols}):
            t = nl.ndarray((128, {cols}), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[0:128, j * {cols}:(j + 1) * {cols}])
            nisa.dma_copy(dst=out[0:128, j * {cols}:(j + 1) * {cols}], src=t)
        return out
    """
    found = lint(tmp_path, code, "NKI305")
    if level is None:
        assert not found
    else:
        assert len(found) == 2 and {f.level for f in found} == {level}
        size = f"{cols * 4} B" if cols * 4 < 1024 else f"{cols * 4 // 1024} KiB"
        assert f"{size} per partition x 128 partitions" in found[0].message


def test_small_dma_outside_loops_is_not_reported(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(bias):
        b = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=b, src=bias[0:128, 0:1])
        return b
    """
    assert not lint(tmp_path, code, "NKI305")


def test_dma_transpose_next_to_matmuls_is_not_reported(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x, w):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        w_sb = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=w_sb, src=w[0:128, 0:512])
        for i in range(4):
            t = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_transpose(dst=t, src=x[i * 128:(i + 1) * 128, 0:128])
            ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(dst=ps, stationary=t, moving=w_sb)
        return out
    """
    assert not lint(tmp_path, code, "NKI308")


def test_fp32_matmul_estimate_depends_on_the_target(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x, w):
        xb = nl.ndarray((128, 128), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=xb, src=x[0:128, 0:128])
        xf = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=xf, src=xb)
        wf = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=wf, src=w[0:128, 0:512])
        ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=ps, stationary=xf, moving=wf)
        return ps
    """
    (trn1,) = lint(tmp_path, code, "NKI309", target="trn1")
    (trn2,) = lint(tmp_path, code, "NKI309", target="trn2")
    assert "23 vs 92" in trn1.message and "20 vs 79" in trn2.message
    assert trn2.level is Level.WARNING and "bfloat16" in trn2.message


def test_short_stationary_estimate(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(v, w):
        vs = nl.ndarray((128, 2), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=vs, src=v[0:128, 0:2])
        for n in range(8):
            ws = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=ws, src=w[0:128, n * 512:(n + 1) * 512])
            ps = nl.ndarray((2, 512), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(dst=ps, stationary=vs, moving=ws)
        return ps
    """
    (f,) = lint(tmp_path, code, "NKI310")
    assert "~512 TensorE cycles per call now vs ~256 swapped (2.0x)" in f.message


def test_small_instructions_need_every_operand_to_walk(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x):
        t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[0:128, 0:512])
        for j in range(16):
            tmp = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.sbuf)
            nisa.activation(dst=tmp, op=nl.exp, data=t[0:128, j * 32:(j + 1) * 32])
        return t
    """
    assert not lint(tmp_path, code, "NKI311")


def test_pipeline_rules_do_not_report_helpers_twice_per_call_site(tmp_path):
    code = HEAD + """
    def load_tiles(x, out):
        buf = nl.ndarray((128, 2048), dtype=nl.bfloat16, buffer=nl.sbuf)
        for i in range(4):
            nisa.dma_copy(dst=buf, src=x[i * 128:(i + 1) * 128, 0:2048])
            nisa.activation(dst=buf, op=nl.exp, data=buf)
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:2048], src=buf)

    @nki.jit
    def k(x):
        out = nl.ndarray((512, 2048), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        load_tiles(x, out)
        return out
    """
    found = lint(tmp_path, code, "NKI301")
    assert len(found) == 1 and found[0].span.start_line == 9 and "allocated at line 7" in found[0].message


def test_a_slice_copied_out_of_a_loaded_tile_is_not_the_load_destination(tmp_path):
    code = LEGACY + """
    @nki.jit
    def k(x):
        rows, cols = x.shape
        out = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.shared_hbm)
        for i in nl.affine_range(4):
            t = nl.load(x[i * 128:(i + 1) * 128, 0:2048], dtype=nl.float32)
            part = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.sbuf)
            part[0:128, 0:2] = t[0:128, 0:2]
            nl.store(out[0:128, i * 2:(i + 1) * 2], value=part)
        return out
    """
    found = lint(tmp_path, code, "NKI305")
    assert [f.span.start_line for f in found] == [13]  # only the 8-byte store, not the 8 KiB load


def test_serialized_loop_needs_an_instruction_and_no_merged_writes(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x):
        a = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.sbuf)
        b = nl.ndarray((128, 2048), dtype=nl.float32, buffer=nl.sbuf)
        bufs = [a, b]
        for i in nl.sequential_range(8):
            nisa.dma_copy(dst=bufs[i % 2], src=x[i * 128:(i + 1) * 128, 0:2048])
        sizes = []
        for j in nl.sequential_range(8):
            sizes.append(j * 4)
        return a
    """
    assert not lint(tmp_path, code, "NKI304", version="0.2")


def test_strided_dma_skips_one_off_small_columns(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(v, x):
        col = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=col, src=v.ap([[1, 128], [128, 8]], offset=0))
        big = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=big, src=x.ap([[1, 128], [128, 512]], offset=0))
        return big
    """
    found = lint(tmp_path, code, "NKI307")
    assert [f.span.start_line for f in found] == [11]
    assert "innermost stride is 128 elements" in found[0].message


@pytest.mark.parametrize("index,stride", [("i_f * 2", 2), ("3 * i_f + 1", 3), ("i_f + 4", None), ("i_f", None)])
def test_strided_dma_follows_the_scale_of_a_legacy_arange(tmp_path, index, stride):
    code = LEGACY + f"""
    @nki.jit
    def k(x):
        K, R, C = x.shape
        out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(256)[None, :]
        t = nl.load(x[0, i_p, {index}])
        nl.store(out[i_p, i_f], value=t)
        return out
    """
    found = lint(tmp_path, code, "NKI307", version="0.2")
    if stride is None:
        assert not found
    else:
        assert [f.span.start_line for f in found] == [11]
        assert f"steps by {stride} elements" in found[0].message
        assert "32768 runs per transfer" in found[0].message


@pytest.mark.parametrize("inner,reported", [("[2, C // 2]", True), ("[C, C // 2]", False), ("[2, 1]", False),
                                            ("[1, C]", False)])
def test_access_pattern_with_a_literal_stride_needs_only_a_possible_second_element(tmp_path, inner, reported):
    # A literal innermost stride of 2 with a symbolic count is a strided read
    # whenever the count allows two elements; a symbolic stride (C) may be a
    # layout's 1 and is left alone, as is a single element.
    code = HEAD + f"""
    @nki.jit
    def k(x):
        R, C = x.shape
        out = nl.ndarray((1024, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        for i in range(8):
            t = nl.ndarray((128, C // 2), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x.ap([[C, 128], {inner}], offset=i * 128 * C))
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:256], src=t)
        return out
    """
    found = lint(tmp_path, code, "NKI307")
    assert [f.span.start_line for f in found] == ([12] if reported else [])
    if reported:
        assert "innermost stride is 2 elements" in found[0].message


@pytest.mark.parametrize("ds", ["nl.ds(0, 512, step=2)", "nl.ds(0, 512, 2)"])
def test_ds_has_no_step_so_it_reads_a_contiguous_window(tmp_path, ds):
    # nl.ds(start, size) has no step in any release (the API table): a third
    # argument is a signature finding, not a strided DMA.
    code = HEAD + f"""
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        t = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[0:128, {ds}])
        nisa.dma_copy(dst=out, src=t)
        return out
    """
    assert not lint(tmp_path, code, "NKI307")
    signature = lint(tmp_path, code, "NKI615") + lint(tmp_path, code, "NKI727")
    assert [f.span.start_line for f in signature] == [10]


def test_combined_arange_indices_have_no_single_stride(tmp_path):
    # i_a * 16 + i_b walks contiguous 16-element runs: not one stride.
    code = LEGACY + """
    @nki.jit
    def k(x):
        R, C = x.shape
        out = nl.ndarray((128, 4, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p = nl.arange(128)[:, None, None]
        i_a = nl.arange(4)[None, :, None]
        i_b = nl.arange(16)[None, None, :]
        t = nl.load(x[i_p, i_a * 16 + i_b])
        nl.store(out[i_p, i_a, i_b], value=t)
        return out
    """
    assert not lint(tmp_path, code, "NKI307", version="0.2")


def test_strided_dma_message_gives_the_bytes_and_the_stride(tmp_path):
    code = HEAD + """
    @nki.jit
    def k(x):
        R, C = x.shape
        out = nl.ndarray((1024, 256), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        for i in range(8):
            t = nl.ndarray((128, 256), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[i * 128:(i + 1) * 128, 0:512:2])
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, 0:256], src=t)
        return out
    """
    found = lint(tmp_path, code, "NKI307")
    assert [f.span.start_line for f in found] == [12]
    assert "(step 2)" in found[0].message and "(2 B), 64 KiB per transfer as 32768 runs" in found[0].message


@pytest.mark.parametrize("trips,rows,reported", [(16, 32, [11, 12, 13]), (2, 32, []), (2, 64, [11, 12, 13]),
                                                 ("n", 32, [11, 12, 13])])
def test_partition_underuse_needs_the_blocks_to_cover_all_partitions(tmp_path, trips, rows, reported):
    code = HEAD + f"""
    @nki.jit
    def k(x, n):
        out = nl.ndarray((4096, 2048), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        for i in range({trips}):
            t = nl.ndarray(({rows}, 2048), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[i * {rows}:(i + 1) * {rows}, 0:2048])
            nisa.activation(dst=t, op=nl.exp, data=t)
            nisa.dma_copy(dst=out[i * {rows}:(i + 1) * {rows}, 0:2048], src=t)
        return out
    """
    found = lint(tmp_path, code, "NKI306")
    assert sorted(f.span.start_line for f in found) == reported
    if reported:
        compute = [f for f in found if f.span.start_line == 12][0]
        assert f"{128 - rows} of the 128 lanes idle" in compute.message and "(line 11)" in compute.message


def test_partition_underuse_compute_needs_every_operand_on_the_walked_blocks(tmp_path):
    # The matmul-sized tile `w_sb` has 128 partitions: the tensor_tensor mixes
    # 32- and 128-partition operands, which is not the lane-idle pattern.
    code = HEAD + """
    @nki.jit
    def k(x, w):
        out = nl.ndarray((512, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        w_sb = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=w_sb, src=w[0:128, 0:512])
        for i in range(16):
            t = nl.ndarray((32, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[i * 32:(i + 1) * 32, 0:512])
            u = nl.ndarray((32, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=u, data1=t, data2=w_sb, op=nl.add)
            nisa.tensor_copy(dst=w_sb[0:32, 0:512], src=u)
        nisa.dma_copy(dst=out[0:128, 0:512], src=w_sb)
        return out
    """
    found = lint(tmp_path, code, "NKI306")
    assert sorted(f.span.start_line for f in found) == [13]


def test_partition_underuse_sees_legacy_calls_on_adjacent_partition_blocks(tmp_path):
    code = LEGACY + """
    @nki.jit
    def k(x):
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(x[0:128, 0:512])
        u = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        for h in nl.affine_range(2):
            u[h * 64:(h + 1) * 64, 0:512] = nl.exp(t[h * 64:(h + 1) * 64, 0:512])
        nl.store(out[0:128, 0:512], value=u)
        return out
    """
    found = lint(tmp_path, code, "NKI306", version="0.2")
    assert [f.span.start_line for f in found] == [11]
    assert found[0].message.startswith("exp works on 64 partitions per instruction")
