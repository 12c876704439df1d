"""Helper-call summaries (interp/summaries.py): an equal call is replayed,
an unequal one is inlined, and the model is the same either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from nkilint.model.interp import summaries
from nkilint.model.project import Project
from nkilint.model.semantic import analyze_file
from nkilint.model.values import int_bounds
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import LATEST

HEADER = "import nki\nimport nki.language as nl\n\n"

# A pure helper with a loop and enough steps to be summarized.
HELPER = '''
def strides(shape):
    out = [1]
    for i in range(1, len(shape)):
        out.append(out[i - 1] * shape[len(shape) - i])
    total = 0
    for s in out:
        total = total + s
    if total > 1000000:
        total = total - 1
    if total > 2000000:
        total = total - 2
    if total > 3000000:
        total = total - 3
    return out[1]
'''


def model(tmp_path: Path, body: str, enabled: bool, monkeypatch):
    monkeypatch.setattr(summaries, "ENABLED", enabled)
    path = tmp_path / "k.py"
    text = HEADER + HELPER + body
    path.write_text(text, encoding="utf-8")
    return analyze_file(SourceFile(str(path), text, "k.py"), Project(tmp_path), TRN2, LATEST)


SAME = '''
@nki.jit
def kernel(a):
    p, f = a.shape
    assert p <= 128
    assert f <= 512
    x = strides((p, f))
    y = strides((p, f))
    t = nl.ndarray((p, x), dtype=nl.float32, buffer=nl.sbuf)
    u = nl.ndarray((p, y), dtype=nl.float32, buffer=nl.sbuf)
    return t
'''

DIFFERENT = '''
@nki.jit
def kernel(a, b):
    p, f = a.shape
    q, g = b.shape
    assert p <= 128
    assert f <= 512
    assert q <= 64
    assert g <= 4096
    x = strides((p, f))
    y = strides((q, g))
    t = nl.ndarray((p, x), dtype=nl.float32, buffer=nl.sbuf)
    u = nl.ndarray((q, y), dtype=nl.float32, buffer=nl.sbuf)
    return t
'''


def describe(m):
    """What rules see of the graph: every node's kind, site line, call chain,
    loop nest and shape bounds, in creation order."""
    out = []
    for kernel in m.kernels:
        g = kernel.graph
        for nid, d in g.g.nodes(data=True):
            site = d.get("site")
            chain = tuple(getattr(n, "lineno", 0) for _, n in site.chain) if site else ()
            shape = d.get("shape_v")
            out.append((nid, d["kind"], site.line if site else 0, chain, d.get("loops"),
                        None if shape is None else tuple(int_bounds(x) for x in shape),
                        d.get("loop_kind"), None if d.get("trip_v") is None else int_bounds(d["trip_v"])))
        out.append(("helpers", tuple(g.helpers)))
    return out


def test_equal_call_is_replayed_and_the_graph_is_unchanged(tmp_path, monkeypatch):
    on = model(tmp_path, SAME, True, monkeypatch)
    assert on.stats.summaries_recorded >= 1
    assert on.stats.summary_hits == 1  # the second strides((p, f)) was not interpreted again
    off = model(tmp_path, SAME, False, monkeypatch)
    assert off.stats.summary_hits == 0
    assert describe(on) == describe(off)
    # The replayed call still made its loop nodes, each reached through its own call site.
    loops = [d for d in describe(on) if d[1] == "loop"]
    assert len(loops) == 4 and len({d[3] for d in loops}) == 2
    assert on.stats.steps == off.stats.steps


def test_call_with_other_shapes_is_not_replayed(tmp_path, monkeypatch):
    on = model(tmp_path, DIFFERENT, True, monkeypatch)
    assert on.stats.summary_hits == 0
    off = model(tmp_path, DIFFERENT, False, monkeypatch)
    assert describe(on) == describe(off)
    # Each call site keeps its own result: the two tiles differ.
    graph = on.kernels[0].graph
    tiles = {d.get("name"): tuple(int_bounds(x) for x in d["shape_v"]) for _, d in graph.nodes("tensor")}
    assert tiles["t"][0] == (1, 128) and tiles["u"][0] == (1, 64)
    assert tiles["t"][1] != tiles["u"][1]


@pytest.mark.parametrize("body", [SAME, DIFFERENT])
def test_step_budget_counts_replayed_steps(tmp_path, monkeypatch, body):
    on = model(tmp_path, body, True, monkeypatch)
    off = model(tmp_path, body, False, monkeypatch)
    assert on.stats.steps == off.stats.steps
    assert on.stats.unknown_reasons == off.stats.unknown_reasons
    assert len(on.stats.functions_visited) == len(off.stats.functions_visited)
