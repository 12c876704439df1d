"""A legacy file at a release that no longer imports neuronxcc.nki: its
imports are reported against the target (NKI601), the rest of the file as of
the last release that imported it, and each such finding says so."""

from __future__ import annotations

import json

from conftest import write

LEGACY = """\
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def copy(a):
    out = nl.ndarray((256, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a[0:256, 0:512])
    nl.store(out[0:256, 0:512], value=t)
    return out
"""

CURRENT = """\
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def copy(a):
    out = nl.ndarray((256, 512), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((256, 512), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out
"""

AS_OF = "(checked as of SDK 2.33, the last release that imports neuronxcc.nki; SDK 2.34 rejects the file's imports: NKI601)"


def _findings(cli, sdk: str, path: str) -> list[dict]:
    out = cli("check", "--isolated", "--sdk", sdk, "--format", "json", "--exit-zero", path).stdout
    return json.loads(out)["findings"]


def test_the_rest_of_a_legacy_file_is_checked_as_of_2_33_at_2_34(project, cli):
    write(project / "k.py", LEGACY)
    found = _findings(cli, "2.34", "k.py")
    by_rule = {f["rule"]: f for f in found}
    assert [f["range"]["start"]["line"] for f in found if f["rule"] == "NKI601"] == [1, 2]
    assert "2.34" in by_rule["NKI601"]["message"] and "checked as of" not in by_rule["NKI601"]["message"]
    assert by_rule["NKI101"]["message"].endswith(AS_OF)


def test_no_note_where_the_target_still_imports_it(project, cli):
    write(project / "k.py", LEGACY)
    found = _findings(cli, "2.33", "k.py")
    assert all("checked as of" not in f["message"] for f in found)
    assert any(f["rule"] == "NKI101" for f in found)


def test_a_current_file_at_2_34_is_checked_at_2_34(project, cli):
    write(project / "k.py", CURRENT)
    found = _findings(cli, "2.34", "k.py")
    assert any(f["rule"] == "NKI101" for f in found)
    assert all("checked as of" not in f["message"] for f in found)
