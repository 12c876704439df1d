"""NKI732 (split-collective pairing) and NKI733 (grid-allocation shapes):
the cases the rule examples do not show — pairings the interpreter cannot
follow stay silent, undecided branches give warnings, and the shapes are
judged from the values the interpreter computed."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from nkilint.cli import cli


def check(tmp_path: Path, code: str, select: str, sdk: str = "2.34") -> list[tuple[int, str, str]]:
    (tmp_path / "k.py").write_text(textwrap.dedent(code))
    result = CliRunner().invoke(cli, ["check", "--isolated", "--exit-zero", "--sdk", sdk, "--select", select,
                                      "--format", "json", str(tmp_path / "k.py")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    return sorted((f["range"]["start"]["line"], f["rule"], f["level"]) for f in doc["findings"])


HELPERS_AND_PIPELINE = """
import nki
import nki.collectives as ncc
import nki.language as nl


def finish(p):
    ncc.all_to_all_v_trigger(p)


def start(tokens, out, group, meta):
    return ncc.all_to_all_v_prepare([tokens], [out], group, meta)


@nki.jit
def exchange(tokens, meta, group, other):
    out = nl.ndarray((512, 1024), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    p = start(tokens, out, group, meta)
    finish(p)
    q = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
    for i in range(4):
        ncc.all_to_all_v_trigger(q)
        q = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
    ncc.all_to_all_v_trigger(q)
    r = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
    other(r)
    return out
"""


def test_helpers_loop_carried_instructions_and_unfollowed_calls_are_silent(tmp_path):
    """A trigger in a helper, a prepare returned by a helper, a prepare
    triggered in the next loop iteration and an instruction handed to an
    unknown callable are all valid or undecidable: nothing is reported."""
    assert check(tmp_path, HELPERS_AND_PIPELINE, "NKI732") == []


BRANCHES = """
import nki
import nki.collectives as ncc
import nki.language as nl

@nki.jit
def exchange(tokens, meta, group, flag):
    out = nl.ndarray((512, 1024), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    if flag:
        p = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
        ncc.all_to_all_v_trigger(p)
    else:
        p = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
        ncc.all_to_all_v_trigger(p)
    q = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
    if flag:
        ncc.all_to_all_v_trigger(q)
    else:
        ncc.all_to_all_v_trigger(q)
    r = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
    if flag:
        ncc.all_to_all_v_trigger(r)
    ncc.all_to_all_v_trigger(r)
    return out
"""


def test_exclusive_branches_pair_and_a_branch_then_an_unconditional_trigger_warns(tmp_path):
    """Prepares or triggers in both arms of an undecided if/else may be
    exclusive: silent. A trigger in one arm followed by an unconditional
    one triggers twice on the paths through that arm: a warning."""
    assert check(tmp_path, BRANCHES, "NKI732") == [(23, "NKI732", "warning")]


TWICE = """
import nki
import nki.collectives as ncc
import nki.language as nl

@nki.jit
def exchange(tokens, meta, group):
    out = nl.ndarray((512, 1024), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    p = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
    ncc.all_to_all_v_trigger(p)
    ncc.all_to_all_v_trigger(p)
    ncc.all_to_all_v_trigger(prepare_instr=7)
    return out
"""


def test_second_trigger_and_a_constant_are_errors(tmp_path):
    assert check(tmp_path, TWICE, "NKI732") == [(11, "NKI732", "error"), (12, "NKI732", "error")]


def test_split_collectives_before_nki_0_7_are_not_judged_by_the_pairing_rule(tmp_path):
    """At 2.32 the APIs do not exist (release fact
    prepare-trigger-collectives; other rules report the names)."""
    assert check(tmp_path, TWICE, "NKI732", sdk="2.33") != []
    assert check(tmp_path, TWICE, "NKI732", sdk="2.32") == []


COMPUTED_SHAPES = """
import nki
import nki.language as nl

@nki.jit
def stage(src, flag):
    assert src.shape == (512, 1024)
    width = 256
    a = nl.alloc_tiles(tile_shape=(width - 256, width), element_shape=src.shape, buffer=nl.sbuf, dtype=nl.float32)
    b = nl.alloc_tiles(tile_shape=(128, 256), element_shape=(1024,), buffer=nl.sbuf, dtype=nl.float32)
    if flag:
        c = nl.alloc_tiles(tile_shape=[128, 256], element_shape=(512, 1024), buffer=nl.sbuf, dtype=nl.float32)
    d = nl.alloc_blocks(tile_shape=[128, 256], block_shape=[2, 2], element_shape=src.shape, buffer=nl.sbuf,
                        dtype=nl.float32)
    e = nl.alloc_tiles(tile_shape=(128, flag), element_shape=src.shape, buffer=nl.sbuf, dtype=nl.float32)
    return src
"""


def test_grid_shapes_from_computed_values(tmp_path):
    """width - 256 is 0 (nonpositive); a 2-D tile over a 1-D element_shape;
    a list in an undecided branch is a warning; alloc_blocks's page says
    nothing of lists (silent); an unknown entry is not judged."""
    assert check(tmp_path, COMPUTED_SHAPES, "NKI733") == [
        (9, "NKI733", "error"), (10, "NKI733", "error"), (12, "NKI733", "warning")]


LOOPS = """
import nki
import nki.collectives as ncc
import nki.language as nl

@nki.jit
def exchange(tokens, meta, group, n):
    out = nl.ndarray((512, 1024), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for i in range(4):
        p = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
    ncc.all_to_all_v_trigger(p)
    q = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
    for i in range(n):
        ncc.all_to_all_v_trigger(q)
    for i in range(1):
        r = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
    ncc.all_to_all_v_trigger(r)
    for i in range(4):
        s = ncc.all_to_all_v_prepare([tokens], [out], group, meta)
        ncc.all_to_all_v_trigger(s)
    return out
"""


def test_prepare_and_trigger_in_different_loops(tmp_path):
    """A prepare repeated by a 4-trip loop before one trigger: an error at
    the prepare; a trigger repeated by a loop of unknown trip count: a
    warning; a one-trip loop and a loop holding both calls are fine."""
    assert check(tmp_path, LOOPS, "NKI732") == [(10, "NKI732", "error"), (14, "NKI732", "warning")]


DEVICE_BRANCH = """
import nki
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl

@nki.jit
def exchange(tokens, meta, group, flag):
    out = nl.ndarray((512, 1024), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    flag_sb = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=flag_sb, src=flag)
    f = nisa.scalar_load(flag_sb)

    def wide():
        ncc.all_to_all_v_prepare([tokens], [out], group, meta)

    def narrow():
        ncc.all_to_all_v_prepare([tokens], [out], group, meta)

    nl.if_else(f > 0, wide, narrow)
    return out
"""


def test_the_two_callbacks_of_a_device_if_else_are_not_paired(tmp_path):
    """nl.if_else on a device condition runs one callback: the prepares of
    the two are not an intervening prepare (each is still never triggered,
    a warning)."""
    found = check(tmp_path, DEVICE_BRANCH, "NKI732")
    assert found == [(15, "NKI732", "warning"), (18, "NKI732", "warning")]
