"""Independence of loop iterations for NKI304 (legacy sequential loops).

A loop's iterations are independent when nothing one iteration writes is
read or rewritten by another: every tensor the loop writes is allocated in
the loop body, or each iteration writes its own block of it (an index that
moves by at least the block's extent per iteration), and every read of such
a tensor in the loop reads the block its own iteration wrote. Matmul
accumulation into PSUM is an associative reduction, which ``affine_range``
allows (legacy affine_range docs). Anything the model cannot see (a call
it could not follow, a Python variable carried from one iteration to the
next, ``break``) makes the loop *not provably* independent.
"""

from __future__ import annotations

import ast
import builtins

from nkilint import astwalk
from nkilint.model.graph import KernelGraph
from nkilint.model.loops import Loop, LoopNest
from nkilint.model.scopes import Scopes
from nkilint.model.values import linear

from . import _dma as dma

PURE_BUILTINS = {name for name in dir(builtins) if not name.startswith("_")} - {
    "exec", "eval", "open", "input", "setattr", "delattr", "__import__", "breakpoint",
}
MATMUL_APIS = ("nki.isa.nc_matmul", "nki.language.matmul", "nki.isa.nc_matmul_mx")


def _block(graph: KernelGraph, node_id: str, loop: Loop) -> tuple | None:
    """(dim, coefficient, start form) of an index item that gives each
    iteration its own block of the tensor, or None."""
    data = graph.attrs(node_id)
    if data.get("kind") != "view" or data.get("index_v") is None or loop.sym is None:
        return None
    parent = [v for _, v, _d in graph.edges_of(node_id, "view_of")]
    if not parent or graph.attrs(parent[0]).get("kind") != "tensor":
        return None
    shape = graph.attrs(parent[0]).get("shape_v")
    for d, item in enumerate(data["index_v"]):
        start = dma.item_start(item)
        if start is None:
            continue
        lin = linear(start)
        if lin is None:
            continue
        coeff = lin[0].get(loop.sym, 0)
        if coeff == 0:
            continue
        extent = dma.item_extent(item, shape[d] if shape is not None and d < len(shape) else None)
        hi = dma.int_bounds(extent)[1] if extent is not None and dma.int_bounds(extent) else None
        if hi is None or hi > abs(coeff):
            continue
        terms = tuple(sorted(((s.ident, c) for s, c in lin[0].items()), key=lambda x: x[0]))
        return d, coeff, terms, lin[1]
    return None


def _merged(graph: KernelGraph, node_id: str) -> bool:
    """A view that stands for one of several tensors (a list element picked
    by a loop index, a value merged after a branch)."""
    for _ in range(32):
        data = graph.attrs(node_id)
        if data.get("kind") != "view":
            return False
        if data.get("phi"):
            return True
        nxt = [v for _, v, _d in graph.edges_of(node_id, "view_of")]
        if len(nxt) != 1:
            return len(nxt) > 1
        node_id = nxt[0]
    return False


def _instruction(graph: KernelGraph, op_id: str) -> bool:
    """An op that issues a DMA or engine instruction (not Python arithmetic
    the model recorded as a tile operator, not an assignment)."""
    data = graph.attrs(op_id)
    if data.get("operator") or data.get("assignment"):
        return False
    api = data.get("api") or ""
    return api.startswith(("nki.isa.", "nki.language.")) and data.get("engine") != "none"


# Instructions that only write constants: a loop of them has nothing to
# overlap with, so the order the compiler keeps costs next to nothing.
CONSTANT_FILLS = ("nki.isa.memset", "nki.isa.iota", "nki.language.zeros", "nki.language.ones", "nki.language.full")


def only_fills(graph: KernelGraph, lf: LoopNest, loop: Loop) -> bool:
    """Every instruction in the loop (nested loops included) writes a constant."""
    ops = [op for op in lf.ops_in(loop.loop_id) if _instruction(graph, op)]
    return bool(ops) and all((graph.attrs(op).get("api") or "") in CONSTANT_FILLS for op in ops)

def _matmul_accumulation(graph: KernelGraph, op_id: str, tensor_id: str) -> bool:
    """A matmul into PSUM (directly or ``ps[...] += nl.matmul(...)``)."""
    data = graph.attrs(op_id)
    if graph.attrs(tensor_id).get("buffer") != "psum":
        return False
    if data.get("api") in MATMUL_APIS:
        return True
    if data.get("augmented"):
        for node, edge in graph.reads(op_id):
            if edge.get("param") != "value":
                continue
            for producer in graph.ops_writing(node):
                if graph.attrs(producer).get("api") in MATMUL_APIS:
                    return True
    return False


def independent_iterations(model, graph: KernelGraph, lf: LoopNest, loop: Loop,
                           syntax: bool = True) -> str | None:
    """None if the loop's iterations are provably independent, else why not.
    ``syntax=False`` checks the data flow of the graph only (no look at calls
    the graph could not follow or Python variables carried between
    iterations)."""
    if loop.sym is None:
        return "the loop index is not known"
    ops = lf.ops_in(loop.loop_id)
    if not any(_instruction(graph, op) for op in ops):
        return "no DMA or compute instruction"
    if syntax:
        problem = _syntax_problem(model, graph, lf, loop, ops)
        if problem:
            return problem
    blocks: dict[str, set] = {}
    written: set[str] = set()
    for op in ops:
        for node, _ in graph.writes(op):
            if _merged(graph, node):
                return "a tensor is written through a value merged from several tensors"
            base = graph.base_tensor(node)
            bdata = graph.attrs(base)
            if loop.loop_id in bdata.get("loops", ()):
                continue  # a fresh tensor per iteration
            if _matmul_accumulation(graph, op, base):
                continue
            block = _block(graph, node, loop)
            if block is None:
                return f"{bdata.get('name') or 'a tensor'} is written at the same place in every iteration"
            blocks.setdefault(base, set()).add(block)
            written.add(base)
    for base, forms in blocks.items():
        if len(forms) > 1:
            return f"{graph.attrs(base).get('name') or 'a tensor'} is written through different blocks"
    for op in ops:
        for node, edge in graph.reads(op):
            base = graph.base_tensor(node)
            if base not in written:
                continue
            if graph.attrs(op).get("augmented") and edge.get("param") == "dst" and _matmul_accumulation(graph, op, base):
                continue
            block = _block(graph, node, loop)
            if block is None or block not in blocks[base]:
                return f"{graph.attrs(base).get('name') or 'a tensor'} is read outside the block its iteration writes"
    return None


def _syntax_problem(model, graph: KernelGraph, lf: LoopNest, loop: Loop, ops: list[str]) -> str | None:
    """Things in the loop body the graph does not show."""
    node = loop.site.node if loop.site is not None else None
    if not isinstance(node, ast.For) or node.orelse:
        return "not a plain for loop"
    if loop.site is not None and not model.in_this_file(loop.site):
        return "the loop is in another file"
    known: set[int] = set()
    for op in ops:
        site = graph.attrs(op).get("site")
        if site is None:
            continue
        known.add(id(site.node))
        for _, call in site.chain:
            known.add(id(call))
    for view_id, data in graph.views():
        if loop.loop_id in data.get("loops", ()) and data.get("site") is not None:
            known.add(id(data["site"].node))
    body = ast.Module(body=node.body, type_ignores=[])
    for sub in astwalk.walk(body):
        if isinstance(sub, (ast.Break, ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal, ast.Raise)):
            return "the body leaves the loop early or touches outer scopes"
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return "the body defines functions"
        if isinstance(sub, ast.Call) and id(sub) not in known:
            if isinstance(sub.func, ast.Name) and sub.func.id in PURE_BUILTINS:
                continue
            qual = model.bindings.resolve(sub.func)
            if qual is not None and qual.name.startswith(("nki.language.", "nki.isa.", "nki.compiler.")):
                continue
            if isinstance(sub.func, ast.Attribute) and sub.func.attr in ("append", "reshape", "ap", "view"):
                continue
            return f"a call the model could not follow ({ast.unparse(sub.func)[:40]})"
    carried = model.analysis(Scopes).file.loop_carried(node)
    if carried:
        return f"{min(carried)} is carried from one iteration to the next"
    return None

