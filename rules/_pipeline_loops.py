"""Loop facts for the pipeline rules (NKI3xx): which values change from one
iteration of a loop to the next, and whether an op runs in every iteration.

The model records each loop's index symbol on the loop node
(``index_sym``). Invariance comes from creation order:

* symbols (``Sym``) are numbered in creation order, and graph node ids are
  numbered in creation order too; a symbol that appears in a node created
  before loop ``L`` (its index values, shapes, op parameters, trip counts)
  existed before ``L``'s body ran, so it cannot change between ``L``'s
  iterations. The largest such symbol number is ``L``'s *watermark*: every
  symbol at or below it is loop-invariant for ``L``.

An integer with no symbol at all (a widened loop-carried variable, ``i % 2``)
is *unknown*: rules never treat it as invariant.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from nkilint.model.graph import KernelGraph, Site
from nkilint.model.values import (
    Const, DsV, IndexV, Int, ParDimV, SliceV, Sym, TensorV, TupleV, Value, const_int, int_bounds, linear,
)

INV, VAR, UNK = "invariant", "variant", "unknown"

# Loop kinds whose body the compiler emits once for all iterations.
DYNAMIC_KINDS = ("fori_loop", "dynamic_range", "while")
# Loop kinds that are not kernel loops at all.
NON_LOOPS = ("comprehension",)
# View kinds that keep the same elements (a reshape or a dtype view).
PASS_THROUGH_VIEWS = (".reshape(", ".view(", ".bitcast(", ".reinterpret_cast(", ".with_dtype(")


def node_number(node_id: str) -> int:
    digits = "".join(ch for ch in node_id if ch.isdigit())
    return int(digits) if digits else 0


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
    elif isinstance(value, ParDimV):
        syms_of(value.size, out, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            if not isinstance(item, TensorV):
                syms_of(item, out, depth + 1)
    return out


@dataclass
class LoopFacts:
    loop_id: str
    kind: str
    trip: Value | None
    site: Site | None
    parent: str | None
    iter_text: str | None
    watermark: int
    sym: Sym | None = None
    ancestors: tuple[str, ...] = ()

    @property
    def dynamic(self) -> bool:
        return self.kind in DYNAMIC_KINDS

    def header(self) -> str:
        """``for i in nl.affine_range(8)`` (for messages)."""
        node = self.site.node if self.site is not None else None
        if isinstance(node, ast.For):
            return f"for {_text(node.target)} in {_text(node.iter)}"
        if isinstance(node, ast.While):
            return f"while {_text(node.test)}"
        if isinstance(node, ast.Call):
            return _text(node.func) + "(...)"
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


def _iter_text(node: ast.AST) -> str:
    """The text the interpreter puts in a loop index's name (``index of ...``)."""
    try:
        from nkilint.model.interp import Interpreter

        return Interpreter.text(node)
    except Exception:  # pragma: no cover - the interpreter changed
        return _text(node)


def _text(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # pragma: no cover - exotic nodes
        return "?"
    return text if len(text) <= 60 else text[:57] + "..."


class GraphFacts:
    """Loop facts of one kernel graph (computed once, shared by the rules)."""

    def __init__(self, graph: KernelGraph) -> None:
        self.graph = graph
        g = graph.g
        self.loops: dict[str, LoopFacts] = {}
        order = sorted(g.nodes(data=True), key=lambda item: node_number(item[0]))
        self._created: dict[str, set] = {nid: self._creation_syms(data) for nid, data in order}
        running = 0
        for node_id, data in order:
            kind = data.get("kind")
            if kind == "loop":
                trip = data.get("trip_v")
                mark = max([running] + [s.ident for s in syms_of(trip)])
                site = data.get("site")
                node = site.node if site is not None else None
                iter_text = _iter_text(node.iter) if isinstance(node, ast.For) else None
                self.loops[node_id] = LoopFacts(
                    node_id, data.get("loop_kind") or "python", trip, site, data.get("parent"), iter_text, mark,
                    ancestors=tuple(data.get("loops", ())),
                )
            for sym in self._created[node_id]:
                if sym.ident > running:
                    running = sym.ident
        self._find_index_syms()

    @staticmethod
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

    def _find_index_syms(self) -> None:
        """Each loop's index symbol, as the model records it on the loop node,
        and the watermarks: an enclosing loop's index is fixed while an inner
        loop runs, so it raises the inner loop's watermark (outer loops first)."""
        for lid, loop in sorted(self.loops.items(), key=lambda item: len(item[1].ancestors)):
            for anc in loop.ancestors:
                outer = self.loops.get(anc)
                if outer is not None:
                    loop.watermark = max(loop.watermark, outer.watermark)
                    if outer.sym is not None:
                        loop.watermark = max(loop.watermark, outer.sym.ident)
            sym = self.graph.attrs(lid).get("index_sym")
            if isinstance(sym, Sym):
                loop.sym = sym

    # -- queries -------------------------------------------------------------
    def loop(self, loop_id: str) -> LoopFacts:
        return self.loops[loop_id]

    def enclosing(self, node_id: str) -> list[LoopFacts]:
        """Loops around a node, innermost first (comprehensions left out)."""
        out = []
        for lid in reversed(self.graph.attrs(node_id).get("loops", ())):
            loop = self.loops.get(lid)
            if loop is not None and loop.kind not in NON_LOOPS:
                out.append(loop)
        return out

    def enclosing_ids(self, loop_ids) -> list[LoopFacts]:
        """LoopFacts of a node's ``loops`` attribute, innermost first."""
        out = []
        for lid in reversed(tuple(loop_ids)):
            loop = self.loops.get(lid)
            if loop is not None and loop.kind not in NON_LOOPS:
                out.append(loop)
        return out

    def inside(self, node_id: str, loop_id: str) -> bool:
        return loop_id in self.graph.attrs(node_id).get("loops", ())

    def ops_in(self, loop_id: str) -> list[str]:
        return sorted(
            (nid for nid, d in self.graph.ops() if loop_id in d.get("loops", ())),
            key=node_number,
        )

    def dependence(self, value: object, loop: LoopFacts, fixed: frozenset = frozenset()) -> str:
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
                    return self.dependence(meta[1], loop, fixed)  # x // d changes only with x
                return INV if value.reason == "program id" else UNK
            lin = linear(value)
            if loop.sym is not None and lin is not None and lin[0].get(loop.sym, 0) != 0:
                return VAR
            if all(s.ident <= loop.watermark or s in fixed for s in syms):
                return INV
            return UNK
        if isinstance(value, (TupleV, list, tuple)):
            items = value.items if isinstance(value, TupleV) else value
            return combine(self.dependence(x, loop, fixed) for x in items)
        if isinstance(value, SliceV):
            return combine(self.dependence(x, loop, fixed) for x in (value.start, value.stop, value.step))
        if isinstance(value, DsV):
            return combine(self.dependence(x, loop, fixed) for x in (value.start, value.size))
        if isinstance(value, IndexV):
            return combine(self.dependence(x, loop, fixed) for x in (value.extent, value.offset))
        if isinstance(value, ParDimV):
            return self.dependence(value.size, loop, fixed)
        return UNK

    def inner_indices(self, node_id: str, loop: LoopFacts) -> frozenset | None:
        """Index symbols of the loops between ``loop`` and a node inside it,
        when each is known and runs the same trips in every iteration of
        ``loop`` (None otherwise)."""
        chain = tuple(self.graph.attrs(node_id).get("loops", ()))
        if loop.loop_id not in chain:
            return None
        out = set()
        for lid in chain[chain.index(loop.loop_id) + 1:]:
            inner = self.loops.get(lid)
            if inner is None or inner.kind in NON_LOOPS:
                continue
            if not inner.may_repeat():
                continue
            if inner.dynamic:
                return None
            if inner.sym is None:
                continue  # its index is not used (or not known): values on it stay unknown
            if self.dependence(inner.trip, loop, frozenset(out)) != INV and not _same_iterable(loop, inner):
                return None
            out.add(inner.sym)
        return frozenset(out)

    def access_dependence(self, node_id: str, loop: LoopFacts, fixed: frozenset = frozenset()) -> str:
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
                results.append(self.dependence(data.get("index_v"), loop, fixed))
            elif data.get("ap_v") is not None:
                # An explicit access pattern: its pattern, offsets and indices.
                results.append(self.dependence(list(data["ap_v"].values()), loop, fixed))
            elif not index.startswith(PASS_THROUGH_VIEWS):
                results.append(UNK)
            nxt = [v for _, v, d in g.g.out_edges(current, data=True) if d.get("kind") == "view_of"]
            if not nxt:
                results.append(UNK)
                break
            current = nxt[0]
        base = g.attrs(current)
        if base.get("kind") == "tensor" and loop.loop_id in base.get("loops", ()) and not loop.dynamic:
            return VAR  # a fresh tensor every iteration (a dynamic loop allocates it once)
        return combine(results)


def _same_iterable(outer: LoopFacts, inner: LoopFacts) -> bool:
    """The inner loop's iterable mentions no name the outer loop's body
    assigns (the outer index included), both loops being in one function."""
    o = outer.site.node if outer.site is not None else None
    i = inner.site.node if inner.site is not None else None
    if not isinstance(o, ast.For) or not isinstance(i, ast.For):
        return False
    if outer.site.file != inner.site.file or tuple(outer.site.chain) != tuple(inner.site.chain):
        return False
    return not (_names(i.iter) & _loop_assigned(o))


def combine(results: Iterable[str]) -> str:
    out = INV
    for r in results:
        if r == VAR:
            return VAR
        if r == UNK:
            out = UNK
    return out


_FACTS: "weakref.WeakKeyDictionary[KernelGraph, GraphFacts]" = weakref.WeakKeyDictionary()


def facts(graph: KernelGraph) -> GraphFacts:
    hit = _FACTS.get(graph)
    if hit is None:
        hit = _FACTS[graph] = GraphFacts(graph)
    return hit


# -- does an op run in every iteration? -------------------------------------------
@dataclass
class _Tree:
    tree: ast.AST
    parents: dict[int, ast.AST] = field(default_factory=dict)


_TREES: dict[str, _Tree] = {}
# Per analysed file: helper file -> its tree (module_at resolves paths, which
# is slow when asked for every op).
# Keyed by id(model); the model is kept in the entry so its id stays unique.
_MODEL_TREES: dict[int, tuple[object, dict]] = {}


def _tree_for(model, file: str) -> _Tree | None:
    hit = _MODEL_TREES.get(id(model))
    if hit is None or hit[0] is not model:
        if len(_MODEL_TREES) > 8:
            _MODEL_TREES.clear()
        hit = _MODEL_TREES[id(model)] = (model, {})
    per_model = hit[1]
    if file in per_model:
        return per_model[file]
    per_model[file] = result = _tree_for_uncached(model, file)
    return result


def _tree_for_uncached(model, file: str) -> _Tree | None:
    hit = _TREES.get(file)
    module = None
    if Path(file) == model.module.path:
        module = model.module
    else:
        try:
            module = model.module.project.module_at(Path(file))
        except Exception:  # pragma: no cover - unreadable helper module
            module = None
    if module is None:
        return None
    if hit is not None and hit.tree is module.tree:
        return hit
    # The module's SourceFile shares one parent map with every rule.
    parents: dict[int, ast.AST] = module.source.parents
    if len(_TREES) > 64:
        _TREES.clear()
    hit = _TREES[file] = _Tree(module.tree, parents)
    return hit


_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


# Names bound in a statement or function, by node (the node is kept alive in
# the entry so its id cannot be reused while cached).
_ASSIGNED: dict[int, tuple[ast.AST, frozenset]] = {}


def _assigned(node: ast.AST) -> frozenset:
    hit = _ASSIGNED.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            out.add(sub.id)
        elif isinstance(sub, ast.arg):
            out.add(sub.arg)
    if len(_ASSIGNED) > 20_000:
        _ASSIGNED.clear()
    result = frozenset(out)
    _ASSIGNED[id(node)] = (node, result)
    return result


def _loop_assigned(loop_node: ast.AST) -> frozenset:
    """Names a loop rebinds in each iteration: its target(s) and every name
    its body assigns."""
    key = ("loop", id(loop_node))
    hit = _ASSIGNED.get(key)  # type: ignore[call-overload]
    if hit is not None and hit[0] is loop_node:
        return hit[1]
    out = set(_assigned(loop_node.target)) if isinstance(loop_node, ast.For) else set()
    for stmt in getattr(loop_node, "body", ()):
        out |= _assigned(stmt)
    result = frozenset(out)
    _ASSIGNED[key] = (loop_node, result)  # type: ignore[index]
    return result


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _guards(tree: _Tree, node: ast.AST, stop: ast.AST | None) -> Iterator[ast.AST]:
    """Conditional constructs between ``node`` and ``stop`` (or its function)."""
    child = node
    parent = tree.parents.get(id(child))
    while parent is not None and parent is not stop and not isinstance(parent, _FUNCS):
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
            yield parent.test
        elif isinstance(parent, ast.While) and child is not parent.test:
            yield parent.test
        elif isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
            yield parent.values[0]
        elif isinstance(parent, (ast.Try, ast.ExceptHandler)):
            yield parent
        elif isinstance(parent, ast.comprehension) and child in parent.ifs:
            yield child
        child, parent = parent, tree.parents.get(id(parent))


def _function_of(tree: _Tree, node: ast.AST) -> ast.AST | None:
    parent = tree.parents.get(id(node))
    while parent is not None and not isinstance(parent, _FUNCS):
        parent = tree.parents.get(id(parent))
    return parent


def runs_every_iteration(model, site: Site | None, loop: LoopFacts) -> bool:
    """The node at ``site`` runs once in every iteration of ``loop``: no
    ``if`` that may depend on the iteration stands between them.

    In the loop's own function, a test that mentions no name assigned in the
    loop (the index included) is the same in every iteration. In a helper
    reached from the loop, a test that mentions a parameter or local of the
    helper may depend on the iteration and makes the node conditional.
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
    tree = _tree_for(model, first_file)
    if tree is None or Path(first_file) != Path(loop.site.file):
        return False
    changing = _loop_assigned(loop_node)
    inside = False
    for test in _guards(tree, first_node, loop_node):
        if isinstance(test, (ast.Try, ast.ExceptHandler)) or _names(test) & changing:
            return False
    # The first node must really sit inside this loop's body.
    parent = tree.parents.get(id(first_node))
    while parent is not None:
        if parent is loop_node:
            inside = True
            break
        parent = tree.parents.get(id(parent))
    if not inside:
        return False
    for file, node in path[1:]:
        helper_tree = _tree_for(model, file)
        if helper_tree is None:
            return False
        func = _function_of(helper_tree, node)
        local = _assigned(func) if func is not None else set()
        for test in _guards(helper_tree, node, None):
            if isinstance(test, (ast.Try, ast.ExceptHandler)) or _names(test) & local:
                return False
    return True
