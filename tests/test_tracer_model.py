"""The NKI 0.7/0.8 APIs in the model and the API table (SDK 2.33 and 2.34):
scalars as device values, tile/block grids, nl.if_else, split collectives,
nki.lnc, nki.compiler configuration and nki.execute launches; no "unknown
API" at the releases that have them, "added in" errors before."""

from __future__ import annotations

from pathlib import Path

import pytest

from nkilint.model import api_semantics as api
from nkilint.model.project import Project
from nkilint.model.semantic import analyze_file
from nkilint.model.values import ScalarV, const_int
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import V0_6, V0_7, V0_8
from fixture_markers import lint_file

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "model"
KERNEL = FIXTURES / "tracer_apis.py"


@pytest.fixture(scope="module")
def model():
    source = SourceFile(str(KERNEL), KERNEL.read_text(encoding="utf-8"), KERNEL.name)
    return analyze_file(source, Project(FIXTURES), TRN2, V0_8)


def _kernel(model, name):
    return next(k for k in model.kernels if k.name == name)


def _shape(data):
    shape = data.get("shape_v")
    return None if shape is None else [const_int(d) for d in shape]


def _ops(graph, api_name):
    return [(nid, d) for nid, d in graph.ops() if d.get("api") == api_name]


@pytest.mark.parametrize("name, kind, engine", [
    ("nki.language.tiles", "grid", "none"),
    ("nki.language.alloc_blocks", "grid", "none"),
    ("nki.language.if_else", "meta", "none"),
    ("nki.isa.scalar_load", "scalar", "none"),
    ("nki.isa.sendrecv_compute", "dma", "dma"),
    ("nki.lnc.sendrecv", "dma", "dma"),
    ("nki.lnc.core_barrier", "sync", "gpsimd"),
    ("nki.collectives.all_gather_v_prepare", "dma", "dma"),
])
def test_api_semantics_of_the_new_apis(name, kind, engine):
    info = api.classify(name)
    assert (info.kind, info.engine) == (kind, engine)


def test_kernels_launched_by_nki_execute_are_roots(model):
    kinds = {k.name: (k.kind, k.how) for k in model.kernels}
    assert kinds["grid_kernel"][0] == "root"
    assert kinds["plain_kernel"] == ("root", "nki.execute(plain_kernel)")
    assert all(not k.error for k in model.kernels)


def test_tile_grid_data_is_a_view_with_the_tile_shape(model):
    graph = _kernel(model, "grid_kernel").graph
    copies = _ops(graph, "nki.isa.dma_copy")
    tile_copy = copies[0][0]
    [src_view] = [graph.attrs(n) for n, _ in graph.reads(tile_copy)]
    [dst_view] = [graph.attrs(n) for n, _ in graph.writes(tile_copy)]
    assert _shape(src_view) == [128, 256]
    assert _shape(dst_view) == [128, 256] and dst_view["buffer"] == "sbuf"


def test_an_on_chip_tile_grid_is_one_rank_two_allocation(model):
    graph = _kernel(model, "grid_kernel").graph
    sbuf = [d for _, d in graph.nodes("tensor") if d.get("buffer") == "sbuf" and d.get("origin") == "alloc"]
    # 4 x 4 tiles of 128 x 256: 128 partitions by 16 * 256 free elements; and the 1x1 flag tile.
    assert sorted(_shape(d) for d in sbuf) == [[1, 1], [128, 4096]]


def test_a_block_selection_of_an_hbm_grid_is_a_slice(model):
    graph = _kernel(model, "grid_kernel").graph
    block_copy = _ops(graph, "nki.isa.dma_copy")[2][0]
    [dst] = [graph.attrs(n) for n, _ in graph.writes(block_copy)]
    [src] = [graph.attrs(n) for n, _ in graph.reads(block_copy)]
    assert _shape(dst) == [256, 512]  # one 2x2 block of 128x256 tiles
    assert _shape(src) == [256, 512]  # tiles [2:4, 0:2]


def test_scalars_are_device_values_that_make_loops_dynamic(model):
    graph = _kernel(model, "grid_kernel").graph
    [(_, loop)] = [(n, d) for n, d in graph.nodes("loop") if d.get("loop_kind") == "fori_loop"]
    assert loop["register_bound"]
    [(load, _)] = _ops(graph, "nki.isa.scalar_load")
    assert [_shape(graph.attrs(n)) for n, _ in graph.reads(load)] == [[1, 1]]
    [(store, _)] = _ops(graph, "nki.isa.scalar_store")
    assert graph.writes(store)


def test_scalar_arithmetic_and_comparisons_stay_scalars():
    from nkilint.model.interp.exprs import _scalar_result

    s = ScalarV(dtype="int32")
    assert _scalar_result(s, s).dtype == "int32"
    assert _scalar_result(s, s, comparison=True).comparison


def test_if_else_runs_both_callbacks_on_a_device_condition(model):
    graph = _kernel(model, "grid_kernel").graph
    assert len(_ops(graph, "nki.isa.memset")) == 3  # then, else, and the fori_loop body


def test_split_collective_trigger_carries_the_operands(model):
    graph = _kernel(model, "grid_kernel").graph
    [(prepare, _)] = _ops(graph, "nki.collectives.all_to_all_v_prepare")
    [(trigger, _)] = _ops(graph, "nki.collectives.all_to_all_v_trigger")
    assert not graph.reads(prepare)  # metadata only (a parameter of unknown buffer here)
    assert graph.reads(trigger)
    assert _ops(graph, "nki.lnc.core_barrier")


# -- the API table and the migration rules at 2.32 / 2.33 / 2.34 ------------------------------------
def test_no_unknown_api_at_2_34_and_added_in_errors_before():
    at = {v: [f for f in lint_file(KERNEL, nki_version=v, select=("NKI6",))] for v in ("0.6", "0.7", "0.8")}
    assert at["0.8"] == []
    assert {f.message.split("`")[1] for f in at["0.7"]} == {"nl.if_else", "lnc.core_barrier", "nki.execute"}
    assert all(f.level.label == "error" for f in at["0.7"])
    added_07 = {f.message.split("`")[1] for f in at["0.6"] if "added in NKI 0.7" in f.message}
    assert {"nl.tiles", "nl.alloc_tiles", "nl.alloc_blocks", "nisa.scalar_load", "nisa.scalar_store",
            "ncc.all_to_all_v_prepare", "ncc.all_to_all_v_trigger"} <= added_07


def test_api_table_answers_for_2_33_and_2_34():
    from nkilint.model.apitable import api_at, api_for, api_ranges, changes_for

    t32, t33, t34 = api_for(V0_6), api_for(V0_7), api_for(V0_8)
    assert (t33.sdk, t34.sdk, api_at("2.33.1").sdk) == ("2.33.0", "2.34.0", "2.33.0")
    assert t33.exists("nki.isa.scalar_load") and not t32.exists("nki.isa.scalar_load")
    assert t33.exists("nki.language.NkiTileGrid.data") and t33.exists("nki.compiler.CompileConfig")
    assert not t33.exists("nki.language.if_else") and t34.exists("nki.language.if_else")
    assert t34.is_module("nki.lnc") and not t33.is_module("nki.lnc")
    assert t34.exists("nki.compiler.CompileConfig.opt_level") and not t33.exists("nki.compiler.CompileConfig.opt_level")
    assert t34.exists("nki.execute") and t34.exists("nki.language.load")  # carried over from 2.32
    jit = t33.signature("nki.jit")
    assert {p.name for p in jit.params if p.kind == "k"} == {"compile_config", "specialization_config"}
    lnc = t34.signature("nki.lnc.sendrecv")
    assert "pipe_id" not in lnc.keyword_names() and "priority" in lnc.keyword_names()
    assert t34.signature("nki.language.fori_loop").param("unroll") is not None
    assert t33.signature("nki.language.fori_loop").param("unroll") is None
    sendrecv = t34.signature("nki.isa.sendrecv")
    assert sendrecv.deprecated and sendrecv.replacement == "nki.lnc.sendrecv"
    assert not t33.signature("nki.isa.sendrecv").deprecated
    assert api_ranges("nki.isa.scalar_load") == [["2.33.0", "2.34.0"]]
    assert api_ranges("nki.language.fori_loop")[-1] == ["2.32.0", "2.34.0"]
    assert [c.since_sdk for c in changes_for("neuronxcc.nki")][-1] == "2.34.0"
    assert any(c.change == "removed" for c in changes_for("syntax:dynamic-range-loop"))


def test_added_entries_record_their_signature_source():
    from nkilint.model.apitable import _data

    rel = next(r for r in _data()["releases"] if r["sdk"] == "2.34.0")
    if_else = rel["modules"]["nki.language"]["functions"]["if_else"]
    assert if_else["signature_source"] == "rst" and if_else["doc"].endswith("nki.language.if_else.html")
    assert rel["modules"]["nki.language"]["functions"]["fori_loop"]["signature_source"] == "prose"
    assert "signature_source" not in rel["modules"]["nki.isa"]["functions"]["dma_copy"]  # a 2.32 stub


def test_deprecations_of_0_8_warn_at_the_default_release(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(
        "import nki\nimport nki.isa as nisa\nimport nki.language as nl\n\n\n@nki.jit\ndef k(a):\n"
        "    r = nisa.register_alloc(0)\n    t = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)\n"
        "    nisa.register_load(r, t)\n    return a\n", encoding="utf-8")
    at_08 = [f for f in lint_file(path, select=("NKI604",))]
    assert [(f.span.start_line, f.level.label) for f in at_08] == [(8, "warning"), (10, "warning")]
    assert "use `nisa.scalar_load`" in at_08[0].message
    assert lint_file(path, nki_version="0.7", select=("NKI604",)) == []
