"""The kernel graph: a networkx MultiDiGraph of one kernel's data flow.

Node kinds (attribute ``kind``): ``tensor`` (allocation, kernel parameter,
or a tile returned by a legacy call), ``view`` (an indexed / sliced /
reshaped tensor), ``op`` (one call of an NKI API), ``loop``. Edge kinds:
``reads`` (tensor/view -> op), ``writes`` (op -> tensor/view), ``view_of``
(view -> tensor), ``in_loop`` (node -> innermost loop, loop -> parent loop),
``calls`` (kernel -> helper function).

Abstract values stay on the nodes for rules (``shape_v``, ``dtype_v``...);
``to_json`` gives the stable, documented export (see docs/graph.md).
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass
from typing import Any, Iterator

from .dtypes import DTYPE_BYTES
from .values import Const, DType, Int, Value, const_int, describe, int_bounds

_NO_EDGES: dict = {}

# Memory families of a tensor node's "buffer" attribute.
ON_CHIP = ("sbuf", "psum")
HBM = ("hbm", "shared_hbm", "private_hbm")



@dataclass(frozen=True)
class Site:
    """Where a node comes from: the file, the ast node, and the chain of
    call sites (outermost first) through which the code was reached."""

    file: str
    node: ast.AST
    chain: tuple[tuple[str, ast.AST], ...] = ()

    @property
    def line(self) -> int:
        return getattr(self.node, "lineno", 0)


@dataclass(frozen=True)
class ScalarMisuse:
    """A use of a device scalar (``nisa.NkiScalar``, NKI 0.7+) that the
    tracer or the compiler rejects, seen by the interpreter: ``kind`` is
    ``condition`` (a Python ``if``/``while``/``and``/``or``/``not``/``bool()``
    on a scalar or a comparison of scalars), ``int64-compare``, ``int64-op``
    (``detail`` names the operation) or ``int64-bound`` (a ``fori_loop``
    bound). ``dtype`` is the scalar's dtype where known."""

    kind: str
    site: Site
    dtype: str | None = None
    detail: str = ""
    conditional: bool = False  # seen inside a branch the interpreter could not decide


@dataclass(eq=False)
class PreparedCollective:
    """One ``nki.collectives.*_prepare`` call the interpreter ran (NKI 0.7+):
    ``triggers`` counts the ``*_trigger`` calls that took its instruction."""

    api: str  # the prepare's qualified name
    site: Site
    conditional: bool  # inside a branch the interpreter could not decide
    triggers: int = 0
    unconditional_triggers: int = 0
    loops: tuple[str, ...] = ()  # the loop nest of the prepare (graph loop ids)


@dataclass(frozen=True)
class SplitCollectiveIssue:
    """A prepare/trigger pairing the collectives pages rule out: ``kind`` is
    ``intervening-prepare`` (a prepare while another waits for its trigger),
    ``not-a-prepare`` (a trigger of a value that is no instruction; ``detail``
    says what it is), ``other-collective`` (a trigger of another collective's
    prepare; ``detail`` names it) or ``second-trigger``. ``prepare`` is the
    prepare involved, where there is one. ``always`` is false when one of
    the calls is inside a branch the interpreter could not decide."""

    kind: str
    site: Site
    api: str
    detail: str = ""
    prepare: PreparedCollective | None = None
    always: bool = True


@dataclass(frozen=True)
class GridAllocIssue:
    """An ``nl.alloc_tiles`` / ``nl.alloc_blocks`` call whose shapes the API
    pages say are rejected (NKI 0.7+): ``kind`` is ``not-a-tuple``
    (``detail``: the parameter), ``nonpositive`` (``detail``: the parameter
    and the entry), ``tile-rank`` (fewer than two tile dimensions),
    ``tile-over-element`` (more tile than element dimensions) or
    ``block-rank`` (block_shape's rank differs from tile_shape's)."""

    kind: str
    site: Site
    api: str
    detail: str = ""
    conditional: bool = False


@dataclass(frozen=True)
class Guard:
    """A condition the interpreter could not decide, under which a node was
    created: the node exists only when ``test`` evaluates to ``branch``.

    ``value`` is the abstract value of the test, ``site`` where the test is
    (with the call chain that reached it: a guard in a helper has a longer
    chain than the kernel's own code), ``loops`` the loop ids around the
    test (outermost first)."""

    test: ast.AST
    value: Value
    branch: bool
    site: Site
    loops: tuple[str, ...] = ()

    @property
    def in_helper(self) -> bool:
        """The test is in a helper reached from the kernel, not in the kernel itself."""
        return bool(self.site.chain)


def dim_json(v: Value | None) -> Any:
    if v is None:
        return None
    c = const_int(v)
    if c is not None:
        return c
    b = int_bounds(v)
    if b is not None:
        lo, hi = b
        out: dict[str, Any] = {"expr": describe(v)}
        if lo != float("-inf"):
            out["min"] = int(lo)
        if hi != float("inf"):
            out["max"] = int(hi)
        return out
    return {"expr": describe(v)}


class KernelGraph:
    def __init__(self, name: str, file: str) -> None:
        self.name = name
        self.file = file
        # Imported on first use: half of the command line's import time, and a
        # run served from the cache builds no graph.
        import networkx as nx

        self.g = nx.MultiDiGraph(name=name)
        # The graph's own dicts (node -> attributes, node -> neighbour -> key
        # -> edge attributes), which networkx's NodeView / AdjacencyView wrap:
        # rules query edges about a million times per nki-library run, and the
        # views cost 5x the dict lookups (tests/test_graph_storage.py checks
        # that these are the dicts the public views show).
        self._node_attrs: dict = self.g._node
        self._succ: dict = self.g._succ
        self._pred: dict = self.g._pred
        self._ids = itertools.count()
        # Node ids by kind, in creation order: rules ask for "every op" or
        # "every tensor" thousands of times per file, and a scan of all nodes
        # per question made that quadratic in the kernel's size. Nodes are
        # only ever added (add_node), and a node's kind never changes.
        self._by_kind: dict[str, list[str]] = {}
        self.truncated = False  # the interpreter hit its budget
        self.helpers: list[str] = []
        # id(ast.Call) of a project-helper call -> what each inlined run
        # returned ("tile", "tiles" for a list/tuple of tiles, "other"); see
        # ExprFacts.helper_returns.
        self.helper_returns: dict[int, set[str]] = {}
        self.conditional_depth = 0  # > 0 while interpreting an undecided branch
        self.guard_stack: list[Guard] = []  # the undecided conditions being interpreted
        self.scalar_misuses: list[ScalarMisuse] = []  # device scalars used as NKI rejects (tracer.py)
        # Split collectives (tracer.py): every prepare, the pairings the docs
        # rule out, and the prepare still waiting for its trigger.
        self.prepared_collectives: list[PreparedCollective] = []
        self.split_collective_issues: list[SplitCollectiveIssue] = []
        self.pending_prepare: PreparedCollective | None = None
        self.device_branch_depth = 0  # > 0 inside a callback of an nl.if_else on a device condition
        self.grid_alloc_issues: list[GridAllocIssue] = []  # alloc_tiles / alloc_blocks shapes (tracer.py)
        # Indexes derived from the finished graph (loop nests, ...), built by
        # the modules that own them and dropped with the graph.
        self.memo: dict[str, Any] = {}
        # ops_reading/ops_writing answers, dropped by any new node or edge
        # (rules ask the same tensors again and again; each answer walks
        # every view of the tensor).
        self._touching: dict[tuple[str, str], list[str]] = {}
        # Bumped by every change to the nodes and edges (the interpreter's
        # call summaries replay only calls that left it unchanged).
        self.version = 0
        # While the interpreter records a call: the ids of the nodes added, in
        # order (a call that only made loop nodes can be replayed).
        self.journal: list[str] | None = None

    # -- construction --------------------------------------------------------
    def add_node(self, prefix: str, kind: str, site: Site | None, loops: tuple[str, ...], **attrs: Any) -> str:
        seq = next(self._ids)
        self.version += 1
        node_id = f"{prefix}{seq}"
        # `seq`: creation order over all nodes of the graph (the interpreter
        # creates a node when it executes the code that produces it).
        attrs["seq"] = seq
        # `conditional`: created under an if/else (or if-expression) whose
        # condition the interpreter could not decide, so it may never run.
        attrs.setdefault("conditional", self.conditional_depth > 0)
        # `guards`: those conditions themselves, outermost first.
        attrs.setdefault("guards", tuple(self.guard_stack))
        if self._touching:
            self._touching.clear()
        self.g.add_node(node_id, kind=kind, site=site, loops=loops, **attrs)
        self._by_kind.setdefault(kind, []).append(node_id)
        if self.journal is not None:
            self.journal.append(node_id)
        if loops:
            self.g.add_edge(node_id, loops[-1], kind="in_loop")
        return node_id

    def add_edge(self, src: str, dst: str, kind: str, **attrs: Any) -> None:
        if self._touching:
            self._touching.clear()
        self.version += 1
        self.g.add_edge(src, dst, kind=kind, **attrs)

    # -- queries --------------------------------------------------------------
    def seq(self, node_id: str) -> int:
        """The node's position in creation order."""
        return self._node_attrs[node_id]["seq"]

    def nodes(self, kind: str) -> Iterator[tuple[str, dict]]:
        attrs = self._node_attrs
        for node_id in self._by_kind.get(kind, ()):
            yield node_id, attrs[node_id]

    # Edges of one node straight from the adjacency (the same order as
    # out_edges/in_edges(data=True), without building a view per call).
    # The graph's own dicts (_node, _succ, _pred) are read directly: the
    # public views wrap every lookup in view objects, and the model asks for
    # node attributes about a million times per nki-library run.
    def _out(self, node_id: str) -> Iterator[tuple[str, dict]]:
        for v, keyed in self._succ.get(node_id, _NO_EDGES).items():
            for d in keyed.values():
                yield v, d

    def _in(self, node_id: str) -> Iterator[tuple[str, dict]]:
        for u, keyed in self._pred.get(node_id, _NO_EDGES).items():
            for d in keyed.values():
                yield u, d

    def tensors(self) -> Iterator[tuple[str, dict]]:
        return self.nodes("tensor")

    def ops(self) -> Iterator[tuple[str, dict]]:
        return self.nodes("op")

    def loops(self) -> Iterator[tuple[str, dict]]:
        return self.nodes("loop")

    def views(self) -> Iterator[tuple[str, dict]]:
        return self.nodes("view")

    def attrs(self, node_id: str) -> dict:
        return self._node_attrs[node_id]

    def edges_of(self, node_id: str, kind: str, out: bool = True) -> list[tuple[str, str, dict]]:
        if out:
            return [(node_id, v, d) for v, d in self._out(node_id) if d.get("kind") == kind]
        return [(u, node_id, d) for u, d in self._in(node_id) if d.get("kind") == kind]

    def reads(self, op_id: str) -> list[tuple[str, dict]]:
        """(tensor-or-view id, edge data) read by an op, in argument order."""
        return [(u, d) for u, _, d in self.edges_of(op_id, "reads", out=False)]

    def writes(self, op_id: str) -> list[tuple[str, dict]]:
        return [(v, d) for _, v, d in self.edges_of(op_id, "writes")]

    def base_tensor(self, node_id: str) -> str:
        """The tensor a view (of a view ...) refers to."""
        seen = 0
        while self._node_attrs[node_id].get("kind") == "view" and seen < 64:
            nxt = [v for v, d in self._out(node_id) if d.get("kind") == "view_of"]
            if not nxt:
                break
            node_id = nxt[0]
            seen += 1
        return node_id

    def ops_reading(self, tensor_id: str) -> list[str]:
        """Ops that read the tensor directly or through any view of it."""
        return self._ops_touching(tensor_id, "reads")

    def ops_writing(self, tensor_id: str) -> list[str]:
        return self._ops_touching(tensor_id, "writes")

    def _ops_touching(self, tensor_id: str, kind: str) -> list[str]:
        cached = self._touching.get((tensor_id, kind))
        if cached is None:
            cached = self._touching[(tensor_id, kind)] = self._find_ops_touching(tensor_id, kind)
        return list(cached)  # the caller's own list

    def _find_ops_touching(self, tensor_id: str, kind: str) -> list[str]:
        out = []
        for nid in self.views_of(tensor_id) + [tensor_id]:
            if kind == "reads":
                out.extend(v for v, d in self._out(nid) if d.get("kind") == "reads")
            else:
                out.extend(u for u, d in self._in(nid) if d.get("kind") == "writes")
        return sorted(set(out), key=self.seq)

    def views_of(self, tensor_id: str) -> list[str]:
        """All views (transitively) of a tensor."""
        out: list[str] = []
        stack = [tensor_id]
        while stack:
            cur = stack.pop()
            for u, d in self._in(cur):
                if d.get("kind") == "view_of":
                    out.append(u)
                    stack.append(u)
        return out

    def loop_chain(self, node_id: str) -> tuple[str, ...]:
        return tuple(self._node_attrs[node_id].get("loops", ()))

    # -- export ----------------------------------------------------------------
    def to_json(self) -> dict:
        nodes = []
        for node_id, data in self.g.nodes(data=True):
            nodes.append(_node_json(node_id, data))
        edges = []
        for u, v, d in self.g.edges(data=True):
            e = {"source": u, "target": v, "kind": d.get("kind")}
            if d.get("param") is not None:
                e["param"] = d["param"]
            edges.append(e)
        edges.sort(key=lambda e: (self.seq(e["source"]), self.seq(e["target"]), e["kind"], e.get("param") or ""))
        return {
            "kernel": self.name,
            "file": self.file,
            "truncated": self.truncated,
            "helpers": list(self.helpers),
            "nodes": sorted(nodes, key=lambda n: self.seq(n["id"])),
            "edges": edges,
        }


def _site_json(site: Site | None) -> dict | None:
    if site is None:
        return None
    node = site.node
    out = {
        "file": site.file,
        "line": getattr(node, "lineno", None),
        "column": (getattr(node, "col_offset", 0) or 0) + 1,
        "end_line": getattr(node, "end_lineno", None),
        "end_column": (getattr(node, "end_col_offset", 0) or 0) + 1,
    }
    if site.chain:
        out["via"] = [{"file": f, "line": getattr(n, "lineno", None)} for f, n in site.chain]
    return out


_JSON_ATTRS = {
    "tensor": ("name", "buffer", "dtype", "origin", "api", "partition_axis", "address", "bytes_per_partition", "function", "conditional"),
    "view": ("name", "buffer", "dtype", "index"),
    "op": ("api", "engine", "function", "legacy_result", "conditional"),
    "loop": ("loop_kind", "iterator", "function"),
}


def _node_json(node_id: str, data: dict) -> dict:
    kind = data.get("kind")
    out: dict[str, Any] = {"id": node_id, "kind": kind}
    for key in _JSON_ATTRS.get(kind, ()):
        value = data.get("bytes_v" if key == "bytes_per_partition" else key)
        if isinstance(value, Value):
            value = dim_json(value)
        out[key] = value
    if kind in ("tensor", "view"):
        shape = data.get("shape_v")
        out["shape"] = None if shape is None else [dim_json(d) for d in shape]
    if kind == "loop":
        out["trip_count"] = dim_json(data.get("trip_v"))
    out["loops"] = list(data.get("loops", ()))
    out["span"] = _site_json(data.get("site"))
    return out


def bytes_per_partition(shape: tuple[Value, ...] | None, dtype: Value, partition_axis: int = 0) -> Value:
    """Bytes one partition holds: product of the free dims times the dtype size."""
    from .values import Unknown, int_binop

    if shape is None or not isinstance(dtype, DType) or dtype.name not in DTYPE_BYTES:
        return Unknown("shape or dtype unknown")
    total: Value = Const(DTYPE_BYTES[dtype.name])
    for i, d in enumerate(shape):
        if i == partition_axis:
            continue
        total = int_binop(ast.Mult, total, d)
    if isinstance(total, Int) and total.label is None:
        total.label = "bytes per partition"
    return total
