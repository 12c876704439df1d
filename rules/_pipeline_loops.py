"""The pipeline rules' view of the model's loop nests (``nkilint.model.loops``).

A thin adapter kept while the pipeline rules move to the model API: the
loop facts, variance questions and "runs in every iteration" answers all
live in the model.
"""

from __future__ import annotations

from nkilint.model.graph import KernelGraph, Site
from nkilint.model.loops import (  # re-exported for the pipeline rules
    DYNAMIC_KINDS, INV, NON_LOOPS, PASS_THROUGH_VIEWS, UNK, VAR, Loop as LoopFacts, LoopNest, Loops, combine, nest_of,
    syms_of,
)


def node_number(node_id: str) -> int:
    digits = "".join(ch for ch in node_id if ch.isdigit())
    return int(digits) if digits else 0


class GraphFacts:
    """The loop nest of a graph under the pipeline rules' older names."""

    def __init__(self, nest: LoopNest) -> None:
        self._nest = nest
        self.graph = nest.graph
        self.loops = nest.loops

    def __getattr__(self, name: str):
        return getattr(self._nest, name)

    def dependence(self, value, loop, fixed=frozenset()):
        return self._nest.variance(value, loop, fixed)

    def access_dependence(self, node_id, loop, fixed=frozenset()):
        return self._nest.access_variance(node_id, loop, fixed)


def facts(graph: KernelGraph) -> GraphFacts:
    wrapped = graph.memo.get("pipeline_loop_facts")
    if wrapped is None:
        wrapped = graph.memo["pipeline_loop_facts"] = GraphFacts(nest_of(graph))
    return wrapped


def runs_every_iteration(model, site: Site | None, loop: LoopFacts) -> bool:
    return model.analysis(Loops).runs_every_iteration(site, loop)


__all__ = ["DYNAMIC_KINDS", "INV", "NON_LOOPS", "PASS_THROUGH_VIEWS", "UNK", "VAR", "GraphFacts", "LoopFacts",
           "combine", "facts", "node_number", "runs_every_iteration", "syms_of"]
