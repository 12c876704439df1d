"""Loop nests: which values change from one iteration of a loop to the next,
and whether a node runs in every iteration.

Each loop node of a kernel graph becomes a typed ``Loop`` (kind, trip count,
index symbol, enclosing loops, whether a runtime register bounds it).
Whether a value varies with a loop is decided from the symbols it mentions:

* the loop's own index symbol (``Sym.origin == "loop"``, recorded on the
  loop node as ``index_sym``): the value varies (``VAR``);
* a symbol that already existed when the loop started (it appears in a node
  created before the loop, in creation order ``seq``, or belongs to an
  enclosing loop's index): the value is the same in every iteration
  (``INV``). The largest such symbol number is the loop's *watermark*;
* anything else, and integers with no symbol at all (a widened loop-carried
  variable, ``i % 2``): ``UNK``. Rules never treat those as invariant.

``runs_every_iteration`` asks the syntax whether a condition that may
change between iterations stands between a loop and a node inside it (in
the loop's function, a test that mentions no name the loop assigns is the
same every iteration; in a helper reached from the loop, a test on a
parameter or local of the helper may change).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .. import astwalk
from .analysis import Analysis
from .graph import KernelGraph, Site
from .scopes import Scopes, call_argument, callee_name, names_in
from .values import (
    Const, DsV, IndexV, Int, ParDimV, SliceV, Sym, TensorV, TupleV, Value, const_int, int_bounds, linear,
)

if TYPE_CHECKING:  # pragma: no cover
    from .semantic import FileModel

INV, VAR, UNK = "invariant", "variant", "unknown"
# Loop kinds whose body the compiler emits once for all iterations.
DYNAMIC_KINDS = ("fori_loop", "dynamic_range", "while")
# Loop kinds that are not kernel loops at all.
NON_LOOPS = ("comprehension",)
# View kinds that keep the same elements (a reshape or a dtype view).
PASS_THROUGH_VIEWS = (".reshape(", ".view(", ".bitcast(", ".reinterpret_cast(", ".with_dtype(")


def syms_of(value: object, out: set | None = None, depth: int = 0) -> set:
    """Every symbol an abstract value mentions."""
    out = set() if out is None else out
    if depth > 8 or value is None:
        return out
    if isinstance(value, Int):
        if value.sym is not None:
            out.add(value.sym)
        for sym, _ in value.terms or ():
            out.add(sym)
    elif isinstance(value, TupleV):
        for item in value.items:
            syms_of(item, out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            syms_of(item, out, depth + 1)
    elif isinstance(value, SliceV):
        for part in (value.start, value.stop, value.step):
            syms_of(part, out, depth + 1)
    elif isinstance(value, DsV):
        syms_of(value.start, out, depth + 1)
        syms_of(value.size, out, depth + 1)
    elif isinstance(value, IndexV):
        syms_of(value.extent, out, depth + 1)
        syms_of(value.offset, out, depth + 1)
        if value.stride is not None:
            syms_of(value.stride, out, depth + 1)
    elif isinstance(value, ParDimV):
        syms_of(value.size, out, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            if not isinstance(item, TensorV):
                syms_of(item, out, depth + 1)
    return out


def combine(results: Iterable[str]) -> str:
    """VAR if any part varies, else UNK if any is unknown, else INV."""
    out = INV
    for r in results:
        if r == VAR:
            return VAR
        if r == UNK:
            out = UNK
    return out


def short_text(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover - exotic nodes
        return "?"
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class Loop:
    """One loop of a kernel graph."""

    id: str
    kind: str  # range, affine_range, ..., fori_loop, while, comprehension, python
    trip: Value | None
    site: Site | None
    parent: str | None
    watermark: int
    sym: Sym | None = None  # the index symbol (None: no index, or not known)
    ancestors: tuple[str, ...] = ()  # enclosing loop ids, outermost first
    register_bound: bool = False  # a runtime register bounds it

    @property
    def loop_id(self) -> str:
        return self.id

    @property
    def dynamic(self) -> bool:
        return self.kind in DYNAMIC_KINDS

    def header(self) -> str:
        """``for i in nl.affine_range(8)`` (for messages)."""
        node = self.site.node if self.site is not None else None
        if isinstance(node, ast.For):
            return f"for {short_text(node.target)} in {short_text(node.iter)}"
        if isinstance(node, ast.While):
            return f"while {short_text(node.test)}"
        if isinstance(node, ast.Call):
            return short_text(node.func) + "(...)"
        return f"{self.kind} loop"

    def may_repeat(self) -> bool:
        """The loop may run more than one iteration."""
        if self.trip is None:
            return True
        b = int_bounds(self.trip)
        if b is None:
            return True
        return b[1] >= 2

    def trip_text(self) -> str:
        c = const_int(self.trip) if self.trip is not None else None
        if c is not None:
            return str(c)
        b = int_bounds(self.trip) if self.trip is not None else None
        if b is not None and b[1] != float("inf"):
            return f"up to {int(b[1])}"
        return "an unknown number of"


class LoopNest:
    """The loops of one kernel graph and the variance questions over them."""

    def __init__(self, graph: KernelGraph) -> None:
        self.graph = graph
        self.loops: dict[str, Loop] = {}
        order = sorted(graph.g.nodes(data=True), key=lambda item: item[1]["seq"])
        running = 0
        for node_id, data in order:
            if data.get("kind") == "loop":
                trip = data.get("trip_v")
                mark = max([running] + [s.ident for s in syms_of(trip)])
                self.loops[node_id] = Loop(
                    node_id, data.get("loop_kind") or "python", trip, data.get("site"), data.get("parent"), mark,
                    ancestors=tuple(data.get("loops", ())), register_bound=bool(data.get("register_bound")),
                )
            for sym in _creation_syms(data):
                if sym.ident > running:
                    running = sym.ident
        # An enclosing loop's index is fixed while an inner loop runs, so it
        # raises the inner loop's watermark (outer loops first).
        for lid, loop in sorted(self.loops.items(), key=lambda item: len(item[1].ancestors)):
            for anc in loop.ancestors:
                outer = self.loops.get(anc)
                if outer is not None:
                    loop.watermark = max(loop.watermark, outer.watermark)
                    if outer.sym is not None:
                        loop.watermark = max(loop.watermark, outer.sym.ident)
            sym = graph.attrs(lid).get("index_sym")
            if isinstance(sym, Sym):
                loop.sym = sym

    # -- structure ------------------------------------------------------------
    def loop(self, loop_id: str) -> Loop:
        return self.loops[loop_id]

    def enclosing(self, node_id: str) -> list[Loop]:
        """Loops around a node, innermost first (comprehensions left out)."""
        return self.enclosing_ids(self.graph.attrs(node_id).get("loops", ()))

    def enclosing_ids(self, loop_ids) -> list[Loop]:
        """The loops of a node's ``loops`` attribute, innermost first."""
        out = []
        for lid in reversed(tuple(loop_ids)):
            loop = self.loops.get(lid)
            if loop is not None and loop.kind not in NON_LOOPS:
                out.append(loop)
        return out

    def inside(self, node_id: str, loop_id: str) -> bool:
        return loop_id in self.graph.attrs(node_id).get("loops", ())

    def ops_in(self, loop_id: str) -> list[str]:
        """Op nodes inside a loop, in creation order."""
        return sorted((nid for nid, d in self.graph.ops() if loop_id in d.get("loops", ())), key=self.graph.seq)

    # -- variance ---------------------------------------------------------------
    def variance(self, value: object, loop: Loop, fixed: frozenset = frozenset()) -> str:
        """INV if the value is the same in every iteration of the loop, VAR if
        it provably changes (mentions the loop index), else UNK. Symbols in
        ``fixed`` (the indices of loops nested inside ``loop``) count as
        invariant: the value then ranges over the same set every iteration."""
        if value is None:
            return INV
        if isinstance(value, Const):
            return INV
        if isinstance(value, Int):
            if value.exact is not None:
                return INV
            syms = syms_of(value)
            if not syms:
                meta = getattr(value, "meta", None)
                if meta and meta[0] == "floordiv" and len(meta) > 1:
                    return self.variance(meta[1], loop, fixed)  # x // d changes only with x
                return INV if value.reason == "program id" else UNK
            lin = linear(value)
            if loop.sym is not None and lin is not None and lin[0].get(loop.sym, 0) != 0:
                return VAR
            if all(s.ident <= loop.watermark or s in fixed for s in syms):
                return INV
            return UNK
        if isinstance(value, (TupleV, list, tuple)):
            items = value.items if isinstance(value, TupleV) else value
            return combine(self.variance(x, loop, fixed) for x in items)
        if isinstance(value, SliceV):
            return combine(self.variance(x, loop, fixed) for x in (value.start, value.stop, value.step))
        if isinstance(value, DsV):
            return combine(self.variance(x, loop, fixed) for x in (value.start, value.size))
        if isinstance(value, IndexV):
            parts = (value.extent, value.offset) + ((value.stride,) if value.stride is not None else ())
            return combine(self.variance(x, loop, fixed) for x in parts)
        if isinstance(value, ParDimV):
            return self.variance(value.size, loop, fixed)
        return UNK

    def inner_indices(self, node_id: str, loop: Loop) -> frozenset | None:
        """Index symbols of the loops between ``loop`` and a node inside it,
        when each is known and runs the same trips in every iteration of
        ``loop`` (None otherwise)."""
        chain = tuple(self.graph.attrs(node_id).get("loops", ()))
        if loop.id not in chain:
            return None
        out = set()
        for lid in chain[chain.index(loop.id) + 1:]:
            inner = self.loops.get(lid)
            if inner is None or inner.kind in NON_LOOPS:
                continue
            if not inner.may_repeat():
                continue
            if inner.dynamic:
                return None
            if inner.sym is None:
                continue  # its index is not used (or not known): values on it stay unknown
            if self.variance(inner.trip, loop, frozenset(out)) != INV and not _same_iterable(loop, inner):
                return None
            out.add(inner.sym)
        return frozenset(out)

    def access_variance(self, node_id: str, loop: Loop, fixed: frozenset = frozenset()) -> str:
        """Whether a tensor or view names the same elements in every iteration."""
        g = self.graph
        results = []
        current = node_id
        for _ in range(32):
            data = g.attrs(current)
            if data.get("kind") != "view":
                break
            index = str(data.get("index") or "")
            if data.get("index_v") is not None:
                results.append(self.variance(data.get("index_v"), loop, fixed))
            elif data.get("ap_v") is not None:
                # An explicit access pattern: its pattern, offsets and indices.
                results.append(self.variance(list(data["ap_v"].values()), loop, fixed))
            elif not index.startswith(PASS_THROUGH_VIEWS):
                results.append(UNK)
            nxt = [v for _, v, _d in g.edges_of(current, "view_of")]
            if not nxt:
                results.append(UNK)
                break
            current = nxt[0]
        base = g.attrs(current)
        if base.get("kind") == "tensor" and loop.id in base.get("loops", ()) and not loop.dynamic:
            return VAR  # a fresh tensor every iteration (a dynamic loop allocates it once)
        return combine(results)


def _creation_syms(data: dict) -> set:
    """Symbols a node held when it was created (not filled in later)."""
    kind = data.get("kind")
    if kind == "view":
        return syms_of(data.get("index_v"), syms_of(data.get("shape_v")))
    if kind == "op":
        return syms_of(data.get("params_v"))
    if kind == "loop":
        return syms_of(data.get("trip_v"))
    if kind == "tensor" and data.get("origin") != "param":
        return syms_of(data.get("shape_v"), syms_of(data.get("address")))
    return set()


def _same_iterable(outer: Loop, inner: Loop) -> bool:
    """The inner loop's iterable mentions no name the outer loop's body
    assigns (the outer index included), both loops being in one function."""
    o = outer.site.node if outer.site is not None else None
    i = inner.site.node if inner.site is not None else None
    if not isinstance(o, ast.For) or not isinstance(i, ast.For):
        return False
    if outer.site.file != inner.site.file or tuple(outer.site.chain) != tuple(inner.site.chain):
        return False
    return not (names_in(i.iter) & _loop_assigned(o))


def _loop_assigned(loop_node: ast.AST) -> frozenset:
    # Structural: needs no module index (the loop node carries its body).
    out: set[str] = set()
    parts = ([loop_node.target] if isinstance(loop_node, ast.For) else []) + list(getattr(loop_node, "body", ()))
    for part in parts:
        for sub in astwalk.walk(part):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                out.add(sub.id)
            elif isinstance(sub, ast.arg):
                out.add(sub.arg)
    return frozenset(out)


def nest_of(graph: KernelGraph) -> LoopNest:
    """The loop nest of a finished kernel graph (built once, kept with the graph)."""
    nest = graph.memo.get("loop_nest")
    if nest is None:
        nest = graph.memo["loop_nest"] = LoopNest(graph)
    return nest


class Loops(Analysis):
    """Loop questions that need the file's syntax (a per-file analysis)."""

    def __init__(self, model: "FileModel") -> None:
        super().__init__(model)
        self.scopes: Scopes = model.analysis(Scopes)

    def nest(self, graph: KernelGraph) -> LoopNest:
        return nest_of(graph)

    def runs_every_iteration(self, site: Site | None, loop: Loop) -> bool:
        """The node at ``site`` runs once in every iteration of ``loop``: no
        condition that may depend on the iteration stands between them.

        In the loop's own function, a test that mentions no name assigned in
        the loop (the index included) is the same in every iteration. In a
        helper reached from the loop, a test that mentions a parameter or
        local of the helper may depend on the iteration and makes the node
        conditional.
        """
        if site is None or loop.site is None:
            return False
        loop_node = loop.site.node
        if not isinstance(loop_node, (ast.For, ast.While)):
            return True  # fori_loop body functions: the body runs every trip
        path = list(site.chain[len(loop.site.chain):]) + [(site.file, site.node)]
        if not path:
            return False
        first_file, first_node = path[0]
        index = self.scopes.index_for(first_file)
        if index is None or (first_file != loop.site.file and Path(first_file) != Path(loop.site.file)):
            return False
        changing = index.loop_assigned(loop_node)
        for test in index.conditions_between(first_node, loop_node):
            if isinstance(test, (ast.Try, ast.ExceptHandler)) or names_in(test) & changing:
                return False
        # The first node must really sit inside this loop's body.
        if not index.is_inside(first_node, loop_node):
            return False
        for file, node in path[1:]:
            helper = self.scopes.index_for(file)
            if helper is None:
                return False
            func = helper.enclosing_function(node)
            local = helper.assigned(func) if func is not None else set()
            for test in helper.conditions_between(node, None):
                if isinstance(test, (ast.Try, ast.ExceptHandler)) or names_in(test) & local:
                    return False
        return True

    def binding_loops(self, site: Site | None, expr: ast.AST | None = None, through_calls: bool = True) -> set[int]:
        """The loops (ids of their ``for``/comprehension syntax nodes) whose
        targets bind the names ``expr`` reads (``site.node`` when None), at
        ``site``. With ``through_calls``, a name that is a parameter of a
        helper is followed to the argument of the call in ``site.chain``
        that entered the helper."""
        if site is None:
            return set()
        found: set[int] = set()
        work = [(site.file, expr if expr is not None else site.node, len(site.chain))]
        seen: set[tuple[int, int]] = set()
        while work:
            file, node, depth = work.pop()
            if (id(node), depth) in seen or node is None:
                continue
            seen.add((id(node), depth))
            index = self.scopes.index_for(file)
            if index is None:
                continue
            for name in (n for n in astwalk.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)):
                loop = index.binding_loop(name)
                if loop is not None:
                    found.add(id(loop))
                    continue
                if not through_calls:
                    continue
                arg = self._argument_for(index, name, site.chain[depth - 1][1] if depth else None)
                if arg is not None:
                    work.append((site.chain[depth - 1][0], arg, depth - 1))
        return found

    @staticmethod
    def _argument_for(index, name: ast.Name, call: ast.AST | None) -> ast.AST | None:
        """The argument a call passes for the parameter ``name`` of the
        function around it, when ``call`` calls that function by its name."""
        fn = index.enclosing_function(name)
        if not isinstance(call, ast.Call) or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if callee_name(call).rsplit(".", 1)[-1] != fn.name:
            return None
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        if name.id in params:
            position = params.index(name.id)
            if params and params[0] in ("self", "cls") and isinstance(call.func, ast.Attribute):
                position -= 1
            return call_argument(call, position, name.id) if position >= 0 else None
        if name.id in [a.arg for a in fn.args.kwonlyargs]:
            return call_argument(call, len(call.args), name.id)  # keyword only
        return None


__all__ = [
    "DYNAMIC_KINDS", "INV", "Loop", "LoopNest", "Loops", "NON_LOOPS", "UNK", "VAR", "combine", "nest_of", "syms_of",
]
