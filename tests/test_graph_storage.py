"""KernelGraph reads networkx's own dicts for node attributes and adjacency
(nkilint/model/graph.py): they must be the very dicts the public views
show, so that a networkx release that stores its graph differently fails
here instead of silently giving rules empty answers."""

from __future__ import annotations

import pickle

from nkilint.model.graph import KernelGraph


def _graph() -> KernelGraph:
    g = KernelGraph("k", "k.py")
    t = g.add_node("t", "tensor", None, (), name="a")
    v = g.add_node("v", "view", None, ())
    op = g.add_node("o", "op", None, ())
    g.add_edge(v, t, "view_of")
    g.add_edge(v, op, "reads")
    g.add_edge(v, op, "reads", arg="second")
    g.add_edge(op, t, "writes")
    return g


def test_raw_storage_is_what_the_public_views_show():
    g = _graph()
    for node_id in g.g.nodes:
        assert g.attrs(node_id) is g.g.nodes[node_id]
        assert list(g._out(node_id)) == [(v, d) for _, v, d in g.g.out_edges(node_id, data=True)]
        assert list(g._in(node_id)) == [(u, d) for u, _, d in g.g.in_edges(node_id, data=True)]
    assert len(list(g._out("v1"))) == 3  # a multigraph: both reads edges, and view_of


def test_queries_answer_after_a_pickle_round_trip():
    g = pickle.loads(pickle.dumps(_graph()))
    # The raw dicts are still the graph's own after unpickling: a node and an
    # edge added now are seen by the queries.
    op = g.add_node("o", "op", None, ())
    g.add_edge("t0", op, "reads")
    assert op == "o3" and (op, {"kind": "reads"}) in list(g._out("t0"))
    assert g.ops_reading("t0") == ["o2", "o3"]  # through the view, then directly
    assert g.base_tensor("v1") == "t0"
