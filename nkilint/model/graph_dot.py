"""Graphviz DOT text of a file's kernel graphs (``nkilint graph --format dot``).

One ``digraph`` per file, so ``dot -Tsvg`` draws one picture (several
top-level graphs in one input give several concatenated SVG documents,
which is not an SVG file); each kernel is a ``cluster_`` subgraph whose
node ids carry the kernel's index, so two kernels' ``t0`` stay apart.
Labels show numbers, never Python reprs: an exact dimension or trip count
as the integer, a bounded one as ``<=max``, anything else as ``?``.
"""

from __future__ import annotations

from typing import Any, Iterable

from .graph import KernelGraph, dim_json
from .values import Value

_SHAPES = {"tensor": "box", "view": "box", "op": "ellipse", "loop": "diamond"}
_STYLES = {"view": "dashed", "loop": "dotted"}


def quote(text: str) -> str:
    """A DOT double-quoted string; ``\\n`` inside ``text`` becomes a line break."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{escaped}"'


def dim_label(v: Value | None) -> str:
    d = dim_json(v)
    if isinstance(d, int):
        return str(d)
    if isinstance(d, dict) and "max" in d:
        return f"<={d['max']}"
    return "?"


def _node_label(node_id: str, data: dict[str, Any]) -> str:
    kind = data.get("kind")
    if kind == "tensor":
        shape = data.get("shape_v")
        dims = "?" if shape is None else "x".join(dim_label(d) for d in shape)
        return f"{data.get('name') or node_id}\n{data.get('buffer')} {data.get('dtype') or '?'} [{dims}]"
    if kind == "view":
        return f"{data.get('name') or node_id}[{data.get('index') or ''}]"
    if kind == "op":
        return f"{(data.get('api') or '?').rsplit('.', 1)[-1]}\n({data.get('engine')})"
    return f"{data.get('loop_kind')} {data.get('iterator') or ''}\ntrip {dim_label(data.get('trip_v'))}"


def _cluster(index: int, graph: KernelGraph, title: str) -> list[str]:
    prefix = f"k{index}_"
    lines = [f"  subgraph cluster_{index} {{", f"    label={quote(title)};"]
    for node_id, data in sorted(graph.g.nodes(data=True), key=lambda x: x[1]["seq"]):
        kind = data.get("kind")
        style = f", style={quote(_STYLES[kind])}" if kind in _STYLES else ""
        lines.append(f"    {prefix}{node_id} [label={quote(_node_label(node_id, data))}, "
                     f"shape={_SHAPES.get(kind, 'box')}{style}];")
    for u, v, d in graph.g.edges(data=True):
        kind = str(d.get("kind"))
        style = ', style="dotted"' if kind in ("in_loop", "view_of") else ""
        lines.append(f"    {prefix}{u} -> {prefix}{v} [label={quote(kind)}{style}];")
    lines.append("  }")
    return lines


def file_dot(name: str, kernels: Iterable[tuple[KernelGraph, str]]) -> str:
    """One digraph named ``name`` with a cluster per (graph, title)."""
    lines = [f"digraph {quote(name)} {{", "  rankdir=LR;", "  compound=true;"]
    for index, (graph, title) in enumerate(kernels):
        lines.extend(_cluster(index, graph, title))
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_dot(graph: KernelGraph) -> str:
    """DOT text of one kernel graph (a file with that kernel only)."""
    return file_dot(graph.file or graph.name, [(graph, graph.name)])
