"""The kernel graph picture: tensors and ops of one kernel as SVG, data
flowing left to right, loops drawn as boxes (clusters) around what runs in
them, each tensor coloured by its memory (HBM, SBUF, PSUM).

The graph is the model's kernel graph with views folded into the tensor
they view (an edge names the operand when it matters, e.g. ``moving``).
Graphviz ``dot`` lays it out when it is installed (its JSON output gives
positions; the drawing is ours); otherwise networkx layers it (columns are
the topological generations along the data flow) and loop members are kept
together in each column.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field

import networkx as nx

from ..model.graph import HBM, KernelGraph
from ..model.semantic import Kernel
from .quantity import Qty
from .svg import FONT, MEMORY_COLORS, esc, svg_open, text_width

NODE_H = 40
MAX_NODES = 400  # beyond this the picture is unreadable anyway: the largest ops and their tensors are kept
ENGINE_COLORS = {"tensor": "#6a3d9a", "vector": "#1f78b4", "scalar": "#33a02c", "gpsimd": "#b15928",
                 "dma": "#555555", "any": "#1f78b4"}
LABELLED_PARAMS = {"stationary", "moving", "bias", "scale"}
DOT_TIMEOUT_S = 20


@dataclass
class GNode:
    id: str
    kind: str  # tensor or op
    label: str
    sub: str
    memory: str  # hbm, sbuf, psum, unknown (tensors); the engine (ops)
    cluster: str | None
    seq: int
    width: float = 0.0
    x: float = 0.0  # centre
    y: float = 0.0


@dataclass
class GEdge:
    src: str
    dst: str
    label: str | None
    points: list[tuple[float, float]] = field(default_factory=list)  # cubic bezier: p0, (c1, c2, p)*
    tip: tuple[float, float] | None = None


@dataclass
class GCluster:
    id: str
    label: str
    parent: str | None
    box: tuple[float, float, float, float] | None = None  # x0, y0, x1, y1


@dataclass
class Picture:
    nodes: dict[str, GNode]
    edges: list[GEdge]
    clusters: dict[str, GCluster]
    width: float = 0.0
    height: float = 0.0
    engine: str = ""  # which layout ran: dot or python
    dropped: int = 0  # nodes left out (MAX_NODES)


def _memory(buffer: str | None) -> str:
    if buffer in HBM:
        return "hbm"
    if buffer in ("sbuf", "psum"):
        return buffer
    return "unknown"


def _tensor_label(data: dict, node_id: str) -> tuple[str, str]:
    from ..model.dtypes import dtype_name
    from ..model.values import const_int

    shape = data.get("shape_v")
    dims = "?" if shape is None else "x".join(str(const_int(d)) if const_int(d) is not None else "?" for d in shape)
    return str(data.get("name") or node_id), f"{_memory(data.get('buffer')).upper()} {dtype_name(data) or '?'} [{dims}]"


def build_picture(kernel: Kernel) -> Picture:
    graph: KernelGraph = kernel.graph
    nodes: dict[str, GNode] = {}
    edges: list[GEdge] = []
    seen_edges: set[tuple[str, str, str | None]] = set()
    ops = sorted(graph.ops(), key=lambda x: x[1]["seq"])
    ops = [(o, d) for o, d in ops if d.get("engine") not in (None, "none")]
    dropped = 0
    if len(ops) > MAX_NODES // 2:
        dropped = len(ops) - MAX_NODES // 2
        ops = ops[:MAX_NODES // 2]

    def innermost(data: dict) -> str | None:
        loops = [lid for lid in (data.get("loops") or ()) if graph.attrs(lid).get("loop_kind") != "comprehension"]
        return loops[-1] if loops else None

    def tensor(node_id: str) -> str:
        base = graph.base_tensor(node_id)
        if base not in nodes:
            data = graph.attrs(base)
            label, sub = _tensor_label(data, base)
            mem = _memory(data.get("buffer"))
            nodes[base] = GNode(base, "tensor", label, sub, mem, None if mem == "hbm" else innermost(data),
                                data["seq"])
        return base

    for op_id, data in ops:
        api = str(data.get("api") or "")
        short = api.rsplit(".", 1)[-1] if api else "op"
        if data.get("assignment"):
            short = "+= (assign)" if data.get("augmented") else "= (assign)"
        elif data.get("operator"):
            short = f"{short} (operator)"
        prefix = "nisa." if api.startswith("nki.isa.") else "nl." if api.startswith("nki.language.") else ""
        nodes[op_id] = GNode(op_id, "op", prefix + short if not data.get("assignment") else short,
                             str(data.get("engine")), str(data.get("engine")), innermost(data), data["seq"])
        matmul = "matmul" in api
        for src, e in graph.reads(op_id):
            t = tensor(src)
            label = e.get("param") if matmul and e.get("param") in LABELLED_PARAMS else None
            key = (t, op_id, label)
            if key not in seen_edges:
                seen_edges.add(key)
                edges.append(GEdge(t, op_id, label))
        for dst, e in graph.writes(op_id):
            t = tensor(dst)
            key = (op_id, t, None)
            if key not in seen_edges:
                seen_edges.add(key)
                edges.append(GEdge(op_id, t, None))
    clusters: dict[str, GCluster] = {}
    wanted = {n.cluster for n in nodes.values() if n.cluster}
    for loop_id in list(wanted):
        for lid in graph.attrs(loop_id).get("loops") or ():
            wanted.add(lid)
    for lid in wanted:
        data = graph.attrs(lid)
        parents = [p for p in (data.get("loops") or ()) if p in wanted]
        trips = Qty.of(data.get("trip_v")).text()
        label = f"{data.get('loop_kind')} {data.get('iterator') or ''}: {trips} trips".replace("  ", " ")
        if len(label) > 48:
            label = label[:45] + "..."
        site = data.get("site")
        clusters[lid] = GCluster(lid, f"line {site.line}: {label}" if site is not None else label,
                                 parents[-1] if parents else None)
    for n in nodes.values():
        n.width = max(text_width(n.label, 12), text_width(n.sub, 10)) + 20
    return Picture(nodes, edges, clusters, dropped=dropped)


# --------------------------------------------------------------- layouts
def _dot_text(p: Picture) -> str:
    lines = ["digraph g {", "  rankdir=LR; nodesep=0.25; ranksep=0.45; compound=true;",
             "  node [shape=box, fixedsize=true, label=\"\"];"]

    def emit(cluster: str | None, indent: str) -> None:
        for n in sorted((n for n in p.nodes.values() if n.cluster == cluster), key=lambda n: n.seq):
            lines.append(f'{indent}"{n.id}" [width={n.width / 72:.3f}, height={NODE_H / 72:.3f}];')
        for c in sorted((c for c in p.clusters.values() if c.parent == cluster), key=lambda c: c.id):
            lines.append(f'{indent}subgraph "cluster_{c.id}" {{ label="{c.label.replace(chr(34), chr(39))}"; '
                         f'fontsize=11; margin=14;')
            emit(c.id, indent + "  ")
            lines.append(f"{indent}}}")

    emit(None, "  ")
    for e in p.edges:
        lines.append(f'  "{e.src}" -> "{e.dst}";')
    lines.append("}")
    return "\n".join(lines)


def layout_dot(p: Picture, dot: str) -> bool:
    """Lay out with Graphviz; False when it is not usable."""
    try:
        proc = subprocess.run([dot, "-Tjson"], input=_dot_text(p), capture_output=True, text=True,
                              timeout=DOT_TIMEOUT_S)
        if proc.returncode != 0:
            return False
        doc = json.loads(proc.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return False
    x0, y0, x1, y1 = (float(v) for v in doc["bb"].split(","))
    height = y1 - y0
    flip = lambda x, y: (x - x0 + 10, height - (y - y0) + 10)  # noqa: E731 - y grows downwards in SVG
    by_gvid = {}
    for obj in doc.get("objects", []):
        name = obj.get("name", "")
        if name.startswith("cluster_") and "bb" in obj:
            cid = name[len("cluster_"):]
            bx0, by0, bx1, by1 = (float(v) for v in obj["bb"].split(","))
            (ax, ay), (bx, by) = flip(bx0, by1), flip(bx1, by0)
            if cid in p.clusters:
                p.clusters[cid].box = (ax, ay, bx, by)
        elif "pos" in obj and name in p.nodes:
            nx, ny = (float(v) for v in obj["pos"].split(","))
            node = p.nodes[name]
            node.x, node.y = flip(nx, ny)
            by_gvid[obj["_gvid"]] = name
    splines: dict[tuple[str, str], list[str]] = {}
    for obj in doc.get("edges", []):
        key = (by_gvid.get(obj.get("tail")), by_gvid.get(obj.get("head")))
        splines.setdefault(key, []).append(obj.get("pos", ""))
    for e in p.edges:
        queue = splines.get((e.src, e.dst)) or [""]
        pos = queue.pop(0) if len(queue) > 1 else queue[0]
        pts, tip = [], None
        for tok in pos.split():
            if tok.startswith("e,"):
                tip = flip(*(float(v) for v in tok[2:].split(",")))
            elif tok.startswith("s,"):
                continue
            else:
                pts.append(flip(*(float(v) for v in tok.split(","))))
        e.points, e.tip = pts, tip
    p.width, p.height = x1 - x0 + 20, height + 20
    p.engine = "dot"
    return True


def layout_python(p: Picture) -> None:
    """Columns are networkx's topological generations of the edges that go
    forward in program order (the graph is built in program order, so these
    form a DAG; a node's generation is its longest path from a source);
    within a column, nodes of the same loop together, in program order
    (networkx's multipartite layout knows nothing of loops, so the
    placement inside a column stays ours)."""
    dag = nx.DiGraph()
    dag.add_nodes_from(p.nodes)
    dag.add_edges_from((e.src, e.dst) for e in p.edges if p.nodes[e.src].seq < p.nodes[e.dst].seq)
    column = {n: i for i, generation in enumerate(nx.topological_generations(dag)) for n in generation}

    def path(c: str | None) -> tuple:
        out = []
        while c is not None:
            out.append(c)
            c = p.clusters[c].parent if c in p.clusters else None
        return tuple(reversed(out))

    cols: dict[int, list[GNode]] = {}
    for n in p.nodes.values():
        cols.setdefault(column[n.id], []).append(n)
    depth = max((len(path(c)) for c in p.clusters), default=0)
    pad = 16
    x = 10 + depth * pad
    col_gap = 60
    max_y = 0.0
    for c in sorted(cols):
        members = sorted(cols[c], key=lambda n: (path(n.cluster), n.seq))
        width = max(n.width for n in members)
        y = 30 + depth * pad + 14
        prev = None
        for n in members:
            if prev is not None and path(prev.cluster) != path(n.cluster):
                y += 2 * pad + 14  # room for cluster borders and labels
            n.x, n.y = x + width / 2, y + NODE_H / 2
            y += NODE_H + 18
            prev = n
        max_y = max(max_y, y)
        x += width + col_gap
    # Cluster boxes: around their members and nested clusters, innermost first.
    for cid in sorted(p.clusters, key=lambda c: -len(path(c))):
        members = [n for n in p.nodes.values() if n.cluster is not None and cid in path(n.cluster)]
        if not members:
            continue
        inner = len(path(cid))
        grow = pad * (depth - inner + 1) * 0.6 + 6
        x0 = min(n.x - n.width / 2 for n in members) - grow
        x1 = max(n.x + n.width / 2 for n in members) + grow
        y0 = min(n.y - NODE_H / 2 for n in members) - grow - 12
        y1 = max(n.y + NODE_H / 2 for n in members) + grow
        p.clusters[cid].box = (x0, y0, x1, y1)
    for e in p.edges:
        a, b = p.nodes[e.src], p.nodes[e.dst]
        sx, sy = a.x + a.width / 2, a.y
        tx, ty = b.x - b.width / 2, b.y
        if tx <= sx:  # backwards (an accumulator read back): leave from the bottom, curve around
            sx, sy, tx, ty = a.x, a.y + NODE_H / 2, b.x, b.y + NODE_H / 2
            dip = max(sy, ty) + 30
            e.points = [(sx, sy), (sx, dip), (tx, dip), (tx, ty + 6)]
            e.tip = (tx, ty)
        else:
            mid = (sx + tx) / 2
            e.points = [(sx, sy), (mid, sy), (mid, ty), (tx - 6, ty)]
            e.tip = (tx, ty)
    p.width = x + 10
    p.height = max_y + depth * pad + 40
    p.engine = "networkx"


def layout(p: Picture, use_dot: bool = True) -> Picture:
    dot = shutil.which("dot") if use_dot else None
    if not (dot and p.nodes and layout_dot(p, dot)):
        layout_python(p)
    return p


# ---------------------------------------------------------------- drawing
def render_svg(p: Picture, uid: str) -> str:
    width, height = max(p.width, 200), max(p.height, 60)
    out = [svg_open(width, height, "kernel graph", "chart graph-chart"),
           f'<defs><marker id="arrow-{uid}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
           f'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#666"/></marker></defs>']
    depth_of = {}
    for cid, c in p.clusters.items():
        d, cur = 0, c.parent
        while cur is not None and cur in p.clusters:
            d, cur = d + 1, p.clusters[cur].parent
        depth_of[cid] = d
    for cid in sorted(p.clusters, key=lambda c: depth_of[c]):
        c = p.clusters[cid]
        if c.box is None:
            continue
        x0, y0, x1, y1 = c.box
        out.append(f'<g class="cluster" data-loop="{esc(cid)}"><rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" '
                   f'height="{y1 - y0:.1f}" rx="8" fill="{"#fbfaf4" if depth_of[cid] % 2 == 0 else "#f3f1e6"}" '
                   f'stroke="#a89f6a" stroke-dasharray="6,3"/>'
                   f'<text x="{x0 + 8:.1f}" y="{y0 + 14:.1f}" font-size="11" {FONT} fill="#6b6336">{esc(c.label)}'
                   f'</text></g>')
    for e in p.edges:
        if not e.points:
            continue
        pts = e.points
        d = f"M {pts[0][0]:.1f} {pts[0][1]:.1f}"
        rest = pts[1:]
        while len(rest) >= 3:
            (ax, ay), (bx, by), (cx, cy) = rest[:3]
            d += f" C {ax:.1f} {ay:.1f} {bx:.1f} {by:.1f} {cx:.1f} {cy:.1f}"
            rest = rest[3:]
        for (ax, ay) in rest:
            d += f" L {ax:.1f} {ay:.1f}"
        if e.tip is not None:
            d += f" L {e.tip[0]:.1f} {e.tip[1]:.1f}"
        out.append(f'<path class="edge" d="{d}" fill="none" stroke="#777" stroke-width="1.2" '
                   f'marker-end="url(#arrow-{uid})"/>')
        if e.label:
            lx, ly = pts[len(pts) // 2]
            out.append(f'<text x="{lx:.1f}" y="{ly - 4:.1f}" font-size="10" {FONT} fill="#6a3d9a">{esc(e.label)}</text>')
    for n in sorted(p.nodes.values(), key=lambda n: n.seq):
        x0, y0 = n.x - n.width / 2, n.y - NODE_H / 2
        if n.kind == "tensor":
            fill, stroke = MEMORY_COLORS.get(n.memory, MEMORY_COLORS["unknown"])
            out.append(f'<g class="node tensor {esc(n.memory)}" data-node="{esc(n.id)}"><rect x="{x0:.1f}" y="{y0:.1f}" '
                       f'width="{n.width:.1f}" height="{NODE_H}" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>')
        else:
            color = ENGINE_COLORS.get(n.memory, "#555")
            out.append(f'<g class="node op" data-node="{esc(n.id)}"><rect x="{x0:.1f}" y="{y0:.1f}" width="{n.width:.1f}" '
                       f'height="{NODE_H}" rx="{NODE_H / 2}" fill="#ffffff" stroke="{color}" stroke-width="2"/>')
        out.append(f'<text x="{n.x:.1f}" y="{n.y - 3:.1f}" font-size="12" {FONT} text-anchor="middle" '
                   f'fill="#222">{esc(n.label)}</text>'
                   f'<text x="{n.x:.1f}" y="{n.y + 12:.1f}" font-size="10" {FONT} text-anchor="middle" '
                   f'fill="#555">{esc(n.sub)}</text></g>')
    out.append("</svg>")
    return "".join(out)


def graph_svg(kernel: Kernel, uid: str, use_dot: bool = True) -> tuple[str, Picture]:
    p = layout(build_picture(kernel), use_dot)
    return render_svg(p, uid), p


def legend_svg() -> str:
    items = [("HBM", *MEMORY_COLORS["hbm"]), ("SBUF", *MEMORY_COLORS["sbuf"]), ("PSUM", *MEMORY_COLORS["psum"]),
             ("unknown memory", *MEMORY_COLORS["unknown"])]
    out = [svg_open(620, 26, "graph legend", "legend")]
    x = 4
    for label, fill, stroke in items:
        out.append(f'<rect x="{x}" y="5" width="16" height="14" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>'
                   f'<text x="{x + 22}" y="16" font-size="11" {FONT}>{esc(label)}</text>')
        x += 30 + text_width(label, 11)
    out.append(f'<rect x="{x}" y="5" width="26" height="14" rx="7" fill="#fff" stroke="#1f78b4" stroke-width="2"/>'
               f'<text x="{x + 32}" y="16" font-size="11" {FONT}>op (outline: engine)</text>')
    out.append("</svg>")
    return "".join(out)


__all__ = ["build_picture", "layout", "layout_dot", "layout_python", "render_svg", "graph_svg", "legend_svg", "Picture"]
