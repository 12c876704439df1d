"""Message text helpers for the pipeline rules."""

from __future__ import annotations

from nkilint.model import query as q
from nkilint.model.graph import KernelGraph


def operand_text(graph: KernelGraph, node_id: str) -> str:
    """``x[i * 128:(i + 1) * 128, 0:512]`` for a view, ``x`` for a tensor."""
    data = graph.attrs(node_id)
    base_id = graph.base_tensor(node_id)
    base = graph.attrs(base_id)
    name = base.get("name") or q.tensor_name(base)
    if node_id == base_id:
        return name
    index = data.get("index") or ""
    if index.startswith("(") and index.endswith(")") and data.get("index_v") is not None and len(data["index_v"]) > 1:
        index = index[1:-1]
    if index.startswith("."):
        return f"{name}{index}"
    return f"{name}[{index}]"


def loop_words(trips: str) -> str:
    return "1 iteration" if trips == "1" else f"{trips} iterations"


def line_of(data: dict) -> int | None:
    site = data.get("site")
    return getattr(site.node, "lineno", None) if site is not None else None
