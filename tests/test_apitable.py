"""nkilint's API table (nkilint/data/nki_api.json) and its builder."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from nkilint.model.apitable import all_changes, api_for, api_ranges, changes_for, legacy_api
from nkilint.versions import V0_2, V0_3, V0_4, V0_6

ROOT = Path(__file__).resolve().parent.parent


def _builder():
    spec = importlib.util.spec_from_file_location("build_api_table", ROOT / "scripts" / "build_api_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SHARED = _builder().find_shared_table()


def test_legacy_and_current_tables_differ_where_the_api_changed():
    legacy, current = legacy_api(), api_for(V0_6)
    assert legacy.sdk == "2.26.0" and current.sdk == "2.32.0"
    # Legacy ISA calls return tiles; current ones take dst first.
    assert legacy.signature("nki.isa.nc_matmul").positional[0].name == "stationary"
    assert current.signature("nki.isa.nc_matmul").positional[0].name == "dst"
    assert legacy.exists("nki.language.arange") and not current.exists("nki.language.arange")
    assert current.exists("nki.language.fori_loop") and not legacy.exists("nki.language.fori_loop")


def test_load_and_store_disappear_in_0_2_and_return_in_0_3():
    assert not api_for(V0_2).exists("nki.language.load")
    assert api_for(V0_3).exists("nki.language.load")
    assert api_ranges("nki.language.load")[0][0] == "2.20.0"


def test_signature_details():
    sig = api_for(V0_6).signature("nki.isa.dma_copy")
    assert [p.name for p in sig.positional[:2]] == ["dst", "src"]
    assert "dst_rmw_op" not in sig.keyword_names()
    assert "dst_rmw_op" in api_for(V0_2).signature("nki.isa.dma_copy").keyword_names()
    assert api_for(V0_6).signature("nki.language.affine_range").deprecated


def test_constants_and_members():
    table = api_for(V0_6)
    assert table.exists("nki.language.float8_e4m3fn")
    assert table.exists("nki.language.shared_hbm")
    assert table.exists("nki.isa.engine.vector")
    assert not table.exists("nki.isa.engine.nonsense")
    assert "tile_size" in table.member_names("nki.language")


def test_changes():
    assert len(all_changes()) == 398 + 22  # the shared table + nki_api_additions (2.33, 2.34)
    renamed = changes_for("nki.isa.nc_matmul", "is_moving_zero")
    assert renamed and renamed[0].since_nki.startswith("0.2")



@pytest.mark.skipif(SHARED is None, reason="the shared API table is not next to this checkout")
def test_committed_table_matches_builder():
    built = _builder().build(json.loads(SHARED.read_text(encoding="utf-8")))
    committed = json.loads((ROOT / "nkilint" / "data" / "nki_api.json").read_text(encoding="utf-8"))
    assert built == committed


def test_version_selection_uses_newest_release_of_each_version():
    assert api_for(V0_4).sdk == "2.30.0"
    assert api_for(V0_3).sdk == "2.29.1"
    assert legacy_api().release["namespace"] == "neuronxcc.nki"
