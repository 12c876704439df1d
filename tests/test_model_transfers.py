"""The DMA transfer fact (nkilint.model.transfers) that the pipeline rules
and the review both read."""

from __future__ import annotations

import textwrap

from nkilint.model import transfers as T
from nkilint.model.semantic import analyze_file
from nkilint.model.values import const_int
from nkilint.review import work
from nkilint.source import SourceFile
from nkilint.targets import TRN2
from nkilint.versions import LATEST, V0_1
from nkilint_rules.pipeline import _dma


def graph_of(code: str, version=LATEST):
    source = SourceFile("/virtual/kernel.py", textwrap.dedent(code), "kernel.py")
    model = analyze_file(source, None, TRN2, version)
    assert model.kernels, "no kernel found"
    return model.kernels[0].graph


LEGACY = """
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(a):
    out = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    t[...] = nl.load(a[0:128, 0:512])
    u = nl.load(a[0:128, 0:256])
    nl.store(out[0:128, 0:512], value=t)
    return out
"""


CURRENT = """
import nki
import nki.language as nl
import nki.isa as nisa

@nki.jit
def k(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
    {body}
    return out
"""


def dims(endpoint):
    return [const_int(d) for d in endpoint.shape]


def test_legacy_load_lands_in_the_assigned_tensor():
    graph = graph_of(LEGACY, V0_1)
    load, bare, store = T.transfers(graph)
    assert (load.api, load.kind, load.direction) == ("nki.language.load", "load", "load")
    # `t[...] = nl.load(...)`: the destination is t itself, with t's type and size.
    assert load.dst.name == "t" and load.dst.dtype == "float32" and dims(load.dst) == [128, 512]
    assert load.landing_op is not None and graph.attrs(load.landing_op).get("assignment")
    assert load.src.buffer == "hbm" and load.hbm == load.src and load.onchip == load.dst
    # A load whose tile is only named lands nowhere else: its destination is the tile.
    assert bare.landing_op is None and graph.attrs(bare.dst.node_id).get("origin") == "result"
    assert dims(bare.dst) == [128, 256]
    assert (store.kind, store.direction, store.src.name, store.dst.buffer) == ("store", "store", "t", "shared_hbm")


def test_current_copies_and_other_dmas():
    graph = graph_of(CURRENT.format(body="nisa.dma_copy(dst=t, src=x[0:128, 0:64])\n    nisa.dma_copy(dst=out, src=t)"))
    found = T.transfers(graph)
    assert [(t.kind, t.direction) for t in found] == [("copy", "load"), ("copy", "store")]
    assert found[0].dst.name == "t" and found[0].dst.base_id == found[0].dst.node_id
    assert found[0].src.node_id != found[0].src.base_id  # a view of x
    assert T.copies(graph) == found
    # Built once per graph.
    assert T.transfers(graph) is found


def test_a_dma_that_names_no_endpoint_falls_back_to_known_memory():
    graph = graph_of(CURRENT.format(body="nisa.dma_copy(dst=t, src=x)\n    nisa.sendrecv(t, out, 1, 0)"))
    other = [t for t in T.transfers(graph) if t.kind is None]
    assert len(other) == 1 and other[0].api == "nki.isa.sendrecv"
    assert other[0].src is not None and other[0].src.name == "t"
    assert other[0] not in T.copies(graph)


def test_pipeline_and_review_read_the_same_endpoints():
    graph = graph_of(LEGACY, V0_1)
    pipeline = _dma.transfers(graph)
    review = work.transfers(graph)
    assert [t.op_id for t in pipeline] == [t.op_id for t in review]
    for p, r in zip(pipeline, review):
        assert (p.src, p.dst, p.direction) == (r.src, r.dst, r.direction)
    # The review counts the landed load in t's float32: 128 * 512 * 4 bytes.
    assert (review[0].bytes.lo, review[0].bytes.hi) == (128 * 512 * 4, 128 * 512 * 4)
